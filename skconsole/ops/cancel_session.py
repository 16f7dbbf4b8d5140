"""Cancel the running statement of a session that blocks the queue or holds its xmin horizon.

``pg_cancel_backend``, never ``pg_terminate_backend``: the statement gets an
error, its transaction must roll back (releasing its locks and its snapshot),
and the session itself stays, so its application sees an error rather than a
dropped connection. Only a session that blocks another session now or holds
this database's xmin horizon may be cancelled; the execution re-checks both in
SQL, and that it is still the backend the preview showed (pid and
backend_start: a pid is reused once its session ends). A session idle in a
transaction runs no statement: PostgreSQL ignores the cancel, and its
application (or ``idle_in_transaction_session_timeout``) has to end it.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from skconsole.errors import ConfigError
from skconsole.health import QUERY_CAP
from skconsole.ops.spec import Confirm, Needs, Params, ServerAction, Wording


@dataclass(frozen=True)
class CancelSessionParams(Params):
    """The session: its pid; to execute, also the ``backend_start`` its preview showed
    (without it nothing is cancelled: the session cannot be told from a later one)."""

    pid: int = 0
    backend_start: datetime | None = None

    def __post_init__(self) -> None:
        if isinstance(self.pid, bool) or not isinstance(self.pid, int) or self.pid <= 0:
            raise ConfigError(
                f"cancel-session needs a process id (a positive number), got {self.pid!r}"
            )

    def sql(self) -> dict[str, Any]:
        return {"pid": self.pid, "backend_start": self.backend_start, "query_cap": QUERY_CAP}

    def details(self) -> dict[str, Any]:
        started = self.backend_start.isoformat() if self.backend_start else None
        return {"pid": self.pid, "backend_start": started}

    def phrase(self) -> str:
        return f" of pid {self.pid}"


CANCEL_SESSION = ServerAction(
    Wording("cancel-session", "cancelled the statement of", "session"),
    params_type=CancelSessionParams,
    read="health_session_target",
    write="health_cancel_backend",
    needs=Needs(),  # pg_cancel_backend: the same role, or pg_signal_backend (else an error)
    confirm=Confirm.ASK,
    warning="Its statement fails and its transaction must roll back; idle sessions ignore it.",
)
