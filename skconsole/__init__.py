"""skconsole: a PostgreSQL job queue with a terminal operations console.

The public Python API: post jobs with :class:`Producer` / :class:`AsyncProducer`
and register handlers on a :class:`TaskRegistry` that ``skconsole worker`` runs.
"""

from skconsole.core.errors import FatalTaskError, SkconsoleError, Snooze
from skconsole.core.version import __version__ as __version__
from skconsole.producer import AsyncProducer, Job, Producer, dotnet_payload
from skconsole.worker.registry import (
    JobCancelled,
    JobContext,
    JobStopped,
    TaskOptions,
    TaskRegistry,
)

__all__ = [
    "AsyncProducer",
    "FatalTaskError",
    "Job",
    "JobCancelled",
    "JobContext",
    "JobStopped",
    "Producer",
    "SkconsoleError",
    "Snooze",
    "TaskOptions",
    "TaskRegistry",
    "dotnet_payload",
]
