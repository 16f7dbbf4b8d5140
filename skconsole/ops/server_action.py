"""An action on the server around the queue rather than on jobs (vacuum a queue table,
cancel a blocking session's statement, add or drop a search index): one target, read,
re-checked and acted on once."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime

from psycopg.rows import dict_row

from skconsole.core.errors import ConfigError
from skconsole.core.json_types import JsonObject
from skconsole.db.context import mapping_of
from skconsole.db.sqlfiles import query
from skconsole.ops.common import ActionProgress, Conn, Done, batch_transaction
from skconsole.ops.model import ActionResult, Preview, Selection
from skconsole.ops.spec import Action, Confirm, Needs, P, Row, Steps, Wording


def _jsonable(row: Row) -> JsonObject:
    """A row as the audit row's JSON keeps it (instants as ISO text)."""
    return {k: v.isoformat() if isinstance(v, datetime) else v for k, v in row.items()}


def _qualifies(row: Row | None) -> bool:
    """A server action's target is there and qualifies (its ``eligible`` column, if any)."""
    return row is not None and row.get("eligible", True) is not False


@dataclass(frozen=True)
class ServerAction(Action[P]):
    """An action on the server around the queue rather than on jobs (vacuum a queue table,
    cancel a blocking session's statement): one target, named by its parameters, previewed
    with ``read`` and acted on once with ``write``, which re-checks in SQL that the target
    is still the one previewed and still qualifies (no row: left alone).

    ``then`` (optional) runs after ``write`` with its row, outside any transaction, for a
    statement that cannot run in a transaction block (VACUUM); the audit row is then
    written in its own transaction right after it. Without ``then``, ``write`` and the
    audit row commit together. The connection must be in autocommit mode either way.
    """

    wording: Wording
    params_type: type[P]
    read: str  # query: the target now (one row: its columns are the preview's details)
    write: str  # query: re-check and act; a row when it acted
    needs: Needs
    then: Callable[[Conn, P, Row], JsonObject] | None = None
    confirm: Confirm = Confirm.ASK
    warning: str = ""

    def __post_init__(self) -> None:
        query(self.read)
        query(self.write)

    def default_params(self) -> P:
        raise ConfigError(f"{self.name} needs parameters: what to act on")

    def _row(self, conn: Conn, name: str, params: P) -> Row | None:
        with conn.cursor(row_factory=dict_row) as cur:
            return cur.execute(
                query(name), params.sql_on(mapping_of(conn)), prepare=False
            ).fetchone()

    def _target(self, conn: Conn, params: P) -> Row | None:
        """The write query's row, when the target is there and still qualifies: a write
        that re-reads its target (``write`` the read query) acts only then."""
        row = self._row(conn, self.write, params)
        return row if _qualifies(row) else None

    def _preview(self, conn: Conn, selection: Selection, params: P, sample_size: int) -> Preview:
        """The target as it is now: count 1, or 0 when there is none or it does not qualify
        (the read query's ``eligible`` column, when it has one, says)."""
        params.check(self.name, selection)
        row = self._row(conn, self.read, params)
        count = int(_qualifies(row))
        return Preview(self.name, selection, count, (), None, {**params.details(), **(row or {})})

    def _execute(self, conn: Conn, selection: Selection, params: P, steps: Steps) -> ActionResult:
        """Act once, audited; a target that no longer qualifies is counted as left alone."""
        params.check(self.name, selection)
        if not conn.autocommit:
            raise ConfigError(f"{self.name} needs an autocommit connection (Database.connect())")
        then = self.then

        def in_transaction(progress: ActionProgress) -> Done:
            with batch_transaction(conn, progress) as batch:  # the action and its audit row
                row = self._target(conn, params)
                batch.add(int(row is not None))
            progress.report(batch.changed, 1)
            return Done(batch.changed, _jsonable(row or {}))

        def outside(progress: ActionProgress) -> Done:
            assert then is not None
            row = self._target(conn, params)  # autocommit: no transaction open
            extra = then(conn, params, row) if row is not None else {}
            # the statement ran outside any transaction (it must); its audit row follows
            # at once, in a transaction of its own
            with batch_transaction(conn, progress) as batch:
                batch.add(int(row is not None))
            progress.report(batch.changed, 1)
            return Done(batch.changed, _jsonable({**(row or {}), **extra}))

        return self._audited(
            conn,
            selection,
            steps,
            1,
            in_transaction if then is None else outside,
            params.details(),
        )
