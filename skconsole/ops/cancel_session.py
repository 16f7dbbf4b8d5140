"""Cancel the running statement of a session that holds up the queue.

``pg_cancel_backend``, never ``pg_terminate_backend``: the statement gets an
error, its transaction must roll back (releasing its locks and its snapshot),
and the session itself stays, so its application sees an error rather than a
dropped connection.

Only a session that holds up the queue may be cancelled: one of the queue's
database that blocks a lock on a queue table, or that has held the xmin horizon
past the health threshold (:data:`skconsole.read.health.HORIZON_WARN_S` unless told)
while dead rows of the queue tables wait on it. Whatever merely holds the
oldest snapshot for a few seconds is not that, and a session of another
database is out of reach whatever it does. That rule is written once, in
``sql/queries/health_session_target.sql``: the preview runs it, and the cancel
runs the very same statement with ``cancel`` set, so it re-checks the rule (and
that it is still the backend the preview showed: pid and backend_start, as a
pid is reused once its session ends) in the statement that cancels. Its facts
come back either way, so a session left alone is told why (:func:`reason`).

A session idle in a transaction runs no statement: PostgreSQL ignores the
cancel, and its application (or ``idle_in_transaction_session_timeout``) has to
end it.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from psycopg.rows import dict_row

from skconsole.core.durations import format_age, format_limit
from skconsole.core.errors import ConfigError
from skconsole.core.json_types import JsonObject
from skconsole.db.context import mapping_of
from skconsole.db.mapping import TableMapping
from skconsole.db.sqlfiles import query
from skconsole.ops.common import ActionProgress, Conn, Done, batch_transaction
from skconsole.ops.model import ActionResult, Selection
from skconsole.ops.server_action import ServerAction
from skconsole.ops.spec import Confirm, Needs, Params, Steps, Wording
from skconsole.read.health import HORIZON_WARN_S, QUERY_CAP, regnames

#: The one statement that judges a session, and cancels it when told.
TARGET_QUERY = "health_session_target"


@dataclass(frozen=True)
class CancelSessionParams(Params):
    """The session: its pid; to execute, also the ``backend_start`` its preview showed
    (without it nothing is cancelled: the session cannot be told from a later one).
    ``horizon_s``: how long a session must have held the xmin horizon, with dead queue
    rows waiting on it, before it holds up the queue (the health advice's threshold)."""

    pid: int = 0
    backend_start: datetime | None = None
    horizon_s: float = HORIZON_WARN_S

    def __post_init__(self) -> None:
        if isinstance(self.pid, bool) or not isinstance(self.pid, int) or self.pid <= 0:
            raise ConfigError(
                f"cancel-session needs a process id (a positive number), got {self.pid!r}"
            )
        if not (math.isfinite(self.horizon_s) and self.horizon_s >= 0):
            raise ConfigError(
                f"cancel-session needs a horizon threshold of 0s or more, got {self.horizon_s!r}"
            )

    def sql_on(self, mapping: TableMapping) -> dict[str, object]:
        return {
            "pid": self.pid,
            "backend_start": self.backend_start,
            "query_cap": QUERY_CAP,
            "tables": regnames(mapping),
            "horizon_s": self.horizon_s,
            "cancel": False,  # the preview's reading; only the execution sets it
        }

    def details(self) -> JsonObject:
        started = self.backend_start.isoformat() if self.backend_start else None
        return {"pid": self.pid, "backend_start": started, "horizon_s": self.horizon_s}

    def phrase(self) -> str:
        return f" of pid {self.pid}"


def other_database(d: Mapping[str, Any]) -> str | None:
    """The refusal for a session of another database (None: it is one of the queue's)."""
    if d.get("same_database", True):
        return None
    theirs = d.get("database")
    where = f"of another database ({theirs!r})" if theirs else "of no database (a server process)"
    return (
        f"pid {d.get('pid')} is a session {where}, not of the queue's"
        f" ({d.get('queue_database')!r}): cancel-session reaches only the queue's own sessions"
    )


def holds_up(d: Mapping[str, Any]) -> str:
    """Why the session holds up the queue, from the facts of :data:`TARGET_QUERY`; call it
    only when the statement said so (``eligible``)."""
    blocks = list(d.get("blocks") or ())
    if blocks:
        return "it blocks pid " + ", ".join(str(p) for p in blocks) + " on a queue table"
    return (
        f"it has held the xmin horizon for {format_age(d.get('xact_age_s'))}"
        f" (over {format_limit(float(d.get('horizon_threshold_s') or 0.0))})"
        f" while the queue tables have {int(d.get('dead_rows') or 0):,} dead rows"
    )


def reason(d: Mapping[str, Any]) -> str:
    """Why the session does not hold up the queue (or, for an execution, why it was left
    alone), from the facts of :data:`TARGET_QUERY`. The statement decides; this says it."""
    refusal = other_database(d)
    if refusal is not None:
        return refusal
    if d.get("same_backend") is False:
        return f"pid {d.get('pid')} is now another session (it started at {d.get('backend_start')})"
    if d.get("eligible"):  # it qualified, yet the cancel did not happen
        return "it holds up the queue, but the server found no such process to signal (it ended)"
    threshold = format_limit(float(d.get("horizon_threshold_s") or 0.0))
    age = d.get("xact_age_s")
    if not d.get("holds_horizon"):
        horizon = "nor holds the xmin horizon"
    elif age is None:
        horizon = "and its transaction's age is hidden (pg_read_all_stats), so its hold on the"
        horizon += " xmin horizon cannot be judged"
    elif float(age) < float(d.get("horizon_threshold_s") or 0.0):
        horizon = f"and has held the xmin horizon for {format_age(age)} only (under {threshold})"
    else:
        horizon = "and the xmin horizon it holds keeps no dead row of the queue tables"
    return f"it does not hold up the queue: it blocks no lock on a queue table {horizon}"


def _jsonable(row: Mapping[str, Any]) -> JsonObject:
    """The statement's facts as the audit row's JSON keeps them (instants as ISO text)."""
    return {k: v.isoformat() if isinstance(v, datetime) else v for k, v in row.items()}


@dataclass(frozen=True)
class SessionAction(ServerAction[CancelSessionParams]):
    """A :class:`ServerAction` whose read and write are one statement: the preview runs
    :data:`TARGET_QUERY` as it is, the execution with ``cancel`` set, so both judge the
    session by the same definition, and the cancel re-checks it where it acts. The
    result keeps the statement's facts and :func:`reason` whether it cancelled or not."""

    def _execute(
        self, conn: Conn, selection: Selection, params: CancelSessionParams, steps: Steps
    ) -> ActionResult:
        params.check(self.name, selection)
        if not conn.autocommit:
            raise ConfigError(f"{self.name} needs an autocommit connection (Database.connect())")

        def once(progress: ActionProgress) -> Done:
            with batch_transaction(conn, progress) as batch:  # the cancel and its audit row
                with conn.cursor(row_factory=dict_row) as cur:
                    row = cur.execute(
                        query("health_session_target"),
                        {**params.sql_on(mapping_of(conn)), "cancel": True},
                        prepare=False,
                    ).fetchone()
                batch.add(int(row is not None and row["cancelled"] is True))
            progress.report(batch.changed, 1)
            if row is None:
                return Done(batch.changed, {"cancelled": False, "reason": "no such session"})
            why = holds_up(row) if row["cancelled"] else reason(row)
            return Done(batch.changed, {**_jsonable(row), "reason": why})

        return self._audited(conn, selection, steps, 1, once, params.details())


CANCEL_SESSION = SessionAction(
    Wording.of_one("cancel-session", "cancelled the statement of", "session"),
    params_type=CancelSessionParams,
    read=TARGET_QUERY,
    write=TARGET_QUERY,  # the same statement, with cancel set: see SessionAction
    needs=Needs(),  # pg_cancel_backend: the same role, or pg_signal_backend (else an error)
    confirm=Confirm.ASK,
    warning="Its statement fails and its transaction must roll back; idle sessions ignore it.",
)
