"""Who acts: what every audit row records of a person or process that changed the queue.

By default the OS user and host of the process. A process that acts for someone
else says so through the environment: ``skconsole serve`` starts one console per
browser session and names, in ``SKCONSOLE_ACTOR_USER`` and ``SKCONSOLE_ACTOR_HOST``,
whoever holds its token and where the session came from (``browser via HOST``).
The variables are a statement of the process that sets them, not an
authentication: anyone who can write to the queue can also write any audit row.
"""

from __future__ import annotations

import getpass
import os
import socket
from collections.abc import Mapping
from dataclasses import dataclass

#: who acts, when not the OS user (``skconsole serve`` sets it for its consoles)
USER_ENV = "SKCONSOLE_ACTOR_USER"
#: where the actor acts from, when not this host ("browser via HOST")
HOST_ENV = "SKCONSOLE_ACTOR_HOST"


@dataclass(frozen=True)
class Actor:
    """Who acts, for the audit table: a user and a host."""

    user: str
    host: str

    @classmethod
    def current(cls, environ: Mapping[str, str] | None = None) -> Actor:
        """This process's actor: the environment's, else the OS user and host."""
        env = os.environ if environ is None else environ
        user = env.get(USER_ENV, "").strip() or _os_user()
        host = env.get(HOST_ENV, "").strip() or socket.gethostname()
        return cls(user=user, host=host)


def _os_user() -> str:
    try:
        return getpass.getuser()
    except (KeyError, OSError):
        return f"uid {os.getuid()}"
