"""A search index on one payload path: ``skconsole find-index add|drop PATH [--type T]``, audited.

Why: a search bounded by type reads that type's results through the type
index; on a big type, a frequent search (``payload.customer.id``) is served
from an expression index on exactly the expression the search's first term
compiles to (``sk_key(sk_try_jsonb(task_payload) #>> '{customer,id}')``, see
``sql/schema/122_skconsole_find.sql``: a value of any size, bounded to its digest), optionally partial on one type. An
operator adds it when a search is slow and drops it when it is no longer
worth its write cost; both are audited like every action.

``CREATE INDEX CONCURRENTLY`` (and its ``DROP``) cannot run in a transaction
block and does not block the workers' writes, so it runs as the ``then`` of a
:class:`ServerAction`, like VACUUM: on its own in autocommit, without the
session's statement timeout, its audit row right after. A failed concurrent
build leaves an invalid index, and an older version's index is on the unbounded
value (stale); adding again drops and rebuilds either. Two builds of one index
at once: the second refuses in one line (``index_build_lock``). The index's
name is derived from its path and type (``sk_find_`` and a hash); its comment
records both, as JSON, for ``find-index list``.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from psycopg import sql
from psycopg.rows import dict_row

from skconsole.core.errors import ConfigError, ReadOnlyError
from skconsole.core.json_types import JsonObject
from skconsole.core.payload_terms import PayloadTerm
from skconsole.db.context import mapping_of
from skconsole.db.mapping import TableMapping
from skconsole.db.pooled import run_outside_transaction
from skconsole.db.sqlfiles import query
from skconsole.ops.common import Conn, drop_index, index_build_lock
from skconsole.ops.server_action import ServerAction
from skconsole.ops.spec import Confirm, Needs, Params, Row, Wording
from skconsole.producer import MAX_NAME

PREFIX = "sk_find_"
RESULTS = "sk_task_results_t"


@dataclass(frozen=True)
class FindIndexParams(Params):
    """The payload path to index (as a term's path), and the one type it covers (None: all)."""

    path: tuple[str, ...] = ()
    task_type: str | None = None
    adding: bool = True

    def __post_init__(self) -> None:
        PayloadTerm(self.path, "")  # checks the path
        if self.task_type is not None and (
            len(self.task_type) > MAX_NAME or "\x00" in self.task_type
        ):
            raise ConfigError(f"--type must be a task type (at most {MAX_NAME} characters)")

    @property
    def dotted(self) -> str:
        return PayloadTerm(self.path, "").dotted

    @property
    def index(self) -> str:
        """The index's name: the same path and type always name the same index."""
        key = json.dumps([list(self.path), self.task_type])
        return PREFIX + hashlib.sha256(key.encode()).hexdigest()[:16]

    def sql_on(self, mapping: TableMapping) -> dict[str, object]:
        return {"table": mapping.regname(RESULTS), "index": self.index, "adding": self.adding}

    def details(self) -> JsonObject:
        return {"path": self.dotted, "task_type": self.task_type, "index": self.index}

    @classmethod
    def from_details(cls, details: Mapping[str, object]) -> FindIndexParams | None:
        """Not worded again: the audit row's details name the path and the index."""
        return None

    def phrase(self) -> str:
        on = f" of type {self.task_type}" if self.task_type is not None else ""
        return f" on {self.dotted}{on}"


def create_statement(params: FindIndexParams, mapping: TableMapping) -> sql.Composed:
    """CREATE INDEX CONCURRENTLY on the search expression (values as literals: DDL takes no
    parameters; psycopg quotes them)."""
    path = sql.SQL(", ").join(sql.Literal(k) for k in params.path)
    where = (
        sql.SQL(" WHERE task_type = {}::text").format(sql.Literal(params.task_type))
        if params.task_type is not None
        else sql.SQL("")
    )
    return sql.SQL(
        "CREATE INDEX CONCURRENTLY {index} ON {table}"
        " ((sk_key(sk_try_jsonb(task_payload) #>> ARRAY[{path}]::text[]))){where}"
    ).format(
        index=sql.Identifier(params.index),
        table=mapping.identifier(RESULTS),
        path=path,
        where=where,
    )


def _state(conn: Conn, params: FindIndexParams) -> Row | None:
    """The index as it is now (find_index_state.sql)."""
    with conn.cursor(row_factory=dict_row) as cur:
        state = query("find_index_state")
        return cur.execute(state, params.sql_on(mapping_of(conn)), prepare=False).fetchone()


def _qualified(params: FindIndexParams, target: Row) -> sql.Identifier:
    """The index by name in its table's schema (an index lives in its table's schema)."""
    return sql.Identifier(str(target["schema"]), params.index)


def _refuse_unless_allowed(target: Row, params: FindIndexParams) -> None:
    if not target["may_index"]:
        raise ReadOnlyError(
            f"refused: this database role may not change indexes of {RESULTS}"
            " (its owner or a superuser may)"
        )


def _add(conn: Conn, params: FindIndexParams, target: Row) -> JsonObject:
    _refuse_unless_allowed(target, params)
    with index_build_lock(conn, params.index, f"the search index{params.phrase()}"):
        target = _state(conn, params) or target  # another build may have ended meanwhile
        if target["index_exists"] and target["valid"] and not target["stale"]:
            return {"created": False}
        if target["index_exists"]:
            # invalid (a build failed) or stale (on the unbounded value of an older
            # version): build it again
            drop_index(conn, _qualified(params, target))
        run_outside_transaction(conn, create_statement(params, mapping_of(conn)))
        comment = json.dumps({"path": params.dotted, "task_type": params.task_type})
        conn.execute(
            sql.SQL("COMMENT ON INDEX {} IS {}").format(
                _qualified(params, target), sql.Literal(comment)
            )
        )
    return {"created": True}


def _drop(conn: Conn, params: FindIndexParams, target: Row) -> JsonObject:
    _refuse_unless_allowed(target, params)
    with index_build_lock(conn, params.index, f"the search index{params.phrase()}"):
        drop_index(conn, _qualified(params, target))
    return {"dropped": True}


def _index_action(
    wording: Wording,
    then: Callable[[Conn, FindIndexParams, Row], JsonObject],
    warning: str = "",
) -> ServerAction[FindIndexParams]:
    """Adding and dropping an index read the same target, re-read at execution (they act
    only while it is eligible), and list no privilege: CREATE and DROP INDEX need the
    table's ownership, which the target query checks."""
    return ServerAction(
        wording,
        params_type=FindIndexParams,
        read="find_index_state",
        write="find_index_state",
        needs=Needs(),
        then=then,
        confirm=Confirm.ASK,
        warning=warning,
    )


FIND_INDEX_ADD = _index_action(
    Wording(
        "find-index-add",
        "added the search index",
        "index",
        question="Add a search index{phrase}?",
        outcome="{Done}{phrase}.",
        left_alone="Left alone: the index{phrase} exists already.",
        nothing="Nothing to add: the index{phrase} exists already.",
    ),
    _add,
    warning="The build reads the whole results table; workers go on meanwhile.",
)

FIND_INDEX_DROP = _index_action(
    Wording(
        "find-index-drop",
        "dropped the search index",
        "index",
        question="Drop the search index{phrase}?",
        outcome="{Done}{phrase}.",
        left_alone="Left alone: the index{phrase} is gone already.",
        nothing="Nothing to drop: there is no index{phrase}.",
    ),
    _drop,
)
