"""skconsole: a PostgreSQL job queue with a terminal operations console.

The public Python API: post jobs with :class:`Producer` / :class:`AsyncProducer`
and register handlers on a :class:`TaskRegistry` that ``skconsole worker`` runs.

Each name is imported when it is first used (PEP 562), not when ``skconsole`` is:
the command line, whose every command imports this package first, would
otherwise load psycopg and the whole producer before ``--help`` could answer.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from skconsole.core.lazy import lazy_names
from skconsole.core.version import __version__ as __version__

if TYPE_CHECKING:
    from skconsole.core.errors import FatalTaskError, SkconsoleError, Snooze
    from skconsole.producer import AsyncProducer, Job, Producer, dotnet_payload
    from skconsole.worker.registry import (
        JobCancelled,
        JobContext,
        JobStopped,
        TaskOptions,
        TaskRegistry,
    )

#: each public name and the module it comes from
_EXPORTS = {
    "AsyncProducer": "skconsole.producer",
    "FatalTaskError": "skconsole.core.errors",
    "Job": "skconsole.producer",
    "JobCancelled": "skconsole.worker.registry",
    "JobContext": "skconsole.worker.registry",
    "JobStopped": "skconsole.worker.registry",
    "Producer": "skconsole.producer",
    "SkconsoleError": "skconsole.core.errors",
    "Snooze": "skconsole.core.errors",
    "TaskOptions": "skconsole.worker.registry",
    "TaskRegistry": "skconsole.worker.registry",
    "dotnet_payload": "skconsole.producer",
}

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


__getattr__, __dir__ = lazy_names(__name__, _EXPORTS)
