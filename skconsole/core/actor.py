"""Who acts: what every audit row records of a person or process that changed the queue.

By default the OS user and host of the process. A process that acts for someone
else says so through the environment: ``skconsole serve`` starts one console per
browser session and names, in ``SKCONSOLE_ACTOR_USER`` and ``SKCONSOLE_ACTOR_HOST``,
whoever holds its token and where the session came from (``browser via HOST``).
The variables are a statement of the process that sets them, not an
authentication: anyone who can write to the queue can also write any audit row.

Besides who, the row records which face acted (:class:`Origin`): a command, the
console, a worker's housekeeping, or a program calling :mod:`skconsole.ops`.
"""

from __future__ import annotations

import enum
import getpass
import os
import socket
from collections.abc import Mapping
from dataclasses import dataclass

#: who acts, when not the OS user (``skconsole serve`` sets it for its consoles)
USER_ENV = "SKCONSOLE_ACTOR_USER"
#: where the actor acts from, when not this host ("browser via HOST")
HOST_ENV = "SKCONSOLE_ACTOR_HOST"


class Origin(enum.Enum):
    """Which face acted, as the audit row records it (``audit_origin``)."""

    CLI = "cli"  # a command: skconsole requeue, bump, ...
    CONSOLE = "console"  # a key in the console (a terminal, or a browser tab: serve)
    WORKER = "worker"  # a worker's own housekeeping (retention rounds)
    PYTHON = "python"  # skconsole.ops called from a program

    @classmethod
    def of(cls, value: str | None) -> Origin | None:
        """The origin a row records (None: not recorded, or not one this version knows)."""
        return next((o for o in cls if o.value == value), None)


@dataclass(frozen=True)
class Actor:
    """Who acts, for the audit table: a user and a host, and the face they act through."""

    user: str
    host: str
    origin: Origin = Origin.PYTHON

    @classmethod
    def current(
        cls, environ: Mapping[str, str] | None = None, *, origin: Origin = Origin.PYTHON
    ) -> Actor:
        """This process's actor: the environment's, else the OS user and host."""
        env = os.environ if environ is None else environ
        user = env.get(USER_ENV, "").strip() or _os_user()
        host = env.get(HOST_ENV, "").strip() or socket.gethostname()
        return cls(user=user, host=host, origin=origin)


def _os_user() -> str:
    try:
        return getpass.getuser()
    except (KeyError, OSError):
        return f"uid {os.getuid()}"
