"""Vacuum one queue table now: ``VACUUM (ANALYZE)`` of one of the hot tables, audited.

For when autovacuum is off, throttled or behind and the queue's dead rows slow
claims down. Only the four hot tables may be named (:data:`HOT_TABLES`); the
name reaches SQL only as an identifier. VACUUM cannot run in a transaction
block, so it runs on its own in autocommit and its audit row is written in a
transaction of its own right after it (:class:`ServerAction`'s ``then``): a
process that dies in between leaves a vacuum with no audit row, never an audit
row of a vacuum that did not run. A vacuum cannot remove the dead rows an open
transaction can still see: the preview's table health says whether it is worth it.
"""

from __future__ import annotations

from dataclasses import dataclass

from psycopg import sql

from skconsole.core.errors import ConfigError, ReadOnlyError
from skconsole.core.json_types import JsonObject
from skconsole.core.text import quoted
from skconsole.db.context import mapping_of
from skconsole.db.mapping import TableMapping
from skconsole.db.pooled import run_outside_transaction
from skconsole.ops.common import Conn
from skconsole.ops.server_action import ServerAction
from skconsole.ops.spec import Confirm, Needs, Params, Row, Wording
from skconsole.read.health import HOT_TABLES


@dataclass(frozen=True)
class VacuumParams(Params):
    """The table to vacuum: one of the hot tables, checked on creation."""

    table: str = ""

    def default_name(self, mapping: TableMapping) -> str:
        """Stakhanovise.NET's default name of the table, which ``mapping`` may rename; a
        ConfigError names the tables it may be."""
        found = next((t for t in HOT_TABLES if mapping.table(t) == self.table), None)
        if found is None:
            tables = [mapping.table(t) for t in HOT_TABLES]
            raise ConfigError(
                f"vacuum takes one of the queue's tables ({', '.join(tables)}),"
                f" not {quoted(self.table)}"
            )
        return found

    def sql_on(self, mapping: TableMapping) -> dict[str, object]:
        return {"table": mapping.regname(self.default_name(mapping))}

    def details(self) -> JsonObject:
        return {"table": self.table}

    def phrase(self) -> str:
        return f" {self.table}"


def _vacuum(conn: Conn, params: VacuumParams, target: Row) -> JsonObject:
    """Run VACUUM (ANALYZE) outside any transaction, without the session's statement timeout
    (a big table takes longer than a query may)."""
    if not target["may_vacuum"]:
        # VACUUM itself would only warn and skip the table
        raise ReadOnlyError(
            f"refused: this database role may not vacuum {params.table}"
            " (its owner, a superuser, pg_maintain or a MAINTAIN grant may)"
        )
    mapping = mapping_of(conn)
    table = mapping.identifier(params.default_name(mapping))
    run_outside_transaction(conn, sql.SQL("VACUUM (ANALYZE) {}").format(table))
    return {"vacuumed": True}


VACUUM = ServerAction(
    Wording.of_one("vacuum", "vacuumed", "table"),
    params_type=VacuumParams,
    read="health_vacuum_target",
    write="health_vacuum_target",  # re-read at execution: is it still there, may we
    needs=Needs(),  # VACUUM needs ownership, which the target query checks (may_vacuum)
    then=_vacuum,
    confirm=Confirm.ASK,
    warning="VACUUM reads the whole table and writes to it; claims go on meanwhile.",
)
