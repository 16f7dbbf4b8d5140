"""The index a per-key limit needs: one per keyed type, on its key, made and dropped by ``limit``.

Why: a claim of a keyed type (``sk_claim_keyed()``, sql/schema/128) enumerates
the type's distinct waiting keys by a loose index scan and takes each key's
head in claim order. Both read this index: the key expression exactly as the
function writes it (``sk_key(sk_try_jsonb(task_payload) #>> '{customer}'::text[])``:
a key of any size, bounded to its digest),
then the claim order, partial on the type. Without it the claim stays correct
but reads the type's whole queue.

``CREATE INDEX CONCURRENTLY`` cannot run in a transaction block and must not
block the workers' writes, so it runs after the limit's own transaction
committed (the limit already holds; the index only makes it cheap), without
the session's statement timeout, like ``find-index``. An invalid leftover (a
build that failed) is dropped and built again; the indexes of an earlier path
of the type, or of a cleared limit, are dropped. The name is derived from the
type and path (``sk_key_`` and a hash); the comment records both, as JSON.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass

import psycopg
from psycopg import sql
from psycopg.rows import dict_row

from skconsole.core.errors import BusyError
from skconsole.core.json_types import JsonObject
from skconsole.db.context import mapping_of
from skconsole.db.mapping import TableMapping
from skconsole.db.pooled import run_outside_transaction
from skconsole.db.sqlfiles import query
from skconsole.ops.common import Conn, drop_index, index_build_lock

PREFIX = "sk_key_"
QUEUE = "sk_tasks_queue_t"


@dataclass(frozen=True)
class KeyIndex:
    """One key index of a type as the catalog holds it."""

    index: str
    schema: str
    valid: bool
    path: str | None


#: what the index holds, in its name's hash: an index of an older version (on the
#: unbounded key) has another name, so ``limit`` builds this one and drops that
KEY_FORM = "sk_key"


def index_name(task_type: str, path: tuple[str, ...]) -> str:
    """The same type and path always name the same index (63 bytes at most)."""
    key = json.dumps([list(path), task_type, KEY_FORM])
    return PREFIX + hashlib.sha256(key.encode()).hexdigest()[:16]


def create_statement(
    name: str, task_type: str, path: tuple[str, ...], mapping: TableMapping
) -> sql.Composed:
    """The index on the key expression as sk_claim_keyed() writes it, then the claim order;
    values as literals (DDL takes no parameters; psycopg quotes them)."""
    return sql.SQL(
        "CREATE INDEX CONCURRENTLY {index} ON {table}"
        " (sk_key(sk_try_jsonb(task_payload) #>> {path}::text[]),"
        " task_priority, task_locked_until_ts, task_lock_handle_id)"
        " WHERE task_type = {task_type}"
    ).format(
        index=sql.Identifier(name),
        table=mapping.identifier(QUEUE),
        path=sql.Literal(list(path)),
        task_type=sql.Literal(task_type),
    )


def key_indexes(conn: Conn, task_type: str) -> list[KeyIndex]:
    """The type's key indexes, valid or not."""
    params = {"table": mapping_of(conn).regname(QUEUE), "task_type": task_type}
    with conn.cursor(row_factory=dict_row) as cur:
        rows = cur.execute(query("key_indexes"), params, prepare=False).fetchall()
    return [KeyIndex(**r) for r in rows]


def _drop(conn: Conn, found: KeyIndex) -> None:
    drop_index(conn, sql.Identifier(found.schema, found.index))


def _may_index(conn: Conn) -> tuple[bool, str | None]:
    with conn.cursor(row_factory=dict_row) as cur:
        row = cur.execute(
            query("key_index_rights"), {"table": mapping_of(conn).regname(QUEUE)}, prepare=False
        ).fetchone()
    return (bool(row["may_index"]), str(row["schema"])) if row else (False, None)


def _rebuild(
    conn: Conn,
    task_type: str,
    path: tuple[str, ...] | None,
    wanted: str | None,
    schema: str,
) -> bool:
    """Drop every index of the type but a valid ``wanted``; build ``wanted`` if missing
    (True: built). Run under the build lock: the indexes are read again there."""
    found = key_indexes(conn, task_type)
    for old in found:
        if old.index != wanted or not old.valid:
            _drop(conn, old)
    if wanted is None or path is None or any(f.index == wanted and f.valid for f in found):
        return False
    run_outside_transaction(conn, create_statement(wanted, task_type, path, mapping_of(conn)))
    comment = json.dumps({"task_type": task_type, "path": "payload." + ".".join(path)})
    conn.execute(
        sql.SQL("COMMENT ON INDEX {} IS {}").format(
            sql.Identifier(schema, wanted), sql.Literal(comment)
        )
    )
    return True


def sync(conn: Conn, task_type: str, path: tuple[str, ...] | None) -> JsonObject:
    """Make the type's key indexes what its limit needs: the one for ``path`` (None: none),
    valid; every other dropped. What it did, for the action's result; a failure to build
    is reported there, not raised: the limit is set and holds, only slower."""
    if not conn.autocommit:
        return {"key_index": None, "key_index_note": "not built: needs an autocommit connection"}
    found = key_indexes(conn, task_type)
    wanted = index_name(task_type, path) if path is not None else None
    if not found and wanted is None:
        return {}
    may, schema = _may_index(conn)
    if not may or schema is None:
        return {
            "key_index": wanted,
            "key_index_note": f"not changed: this role may not change indexes of {QUEUE}"
            " (its owner or a superuser may); the limit holds, its claims are slower",
        }
    done: JsonObject = {"key_index": wanted}
    try:
        with index_build_lock(conn, wanted or task_type, f"the key index of {task_type}"):
            if _rebuild(conn, task_type, path, wanted, schema):
                done["key_index_built"] = True
    except BusyError as exc:
        done["key_index_note"] = f"not built here: {exc}; the limit holds"
    except psycopg.Error as exc:
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        done["key_index_note"] = f"not built: {first}; the limit holds, its claims are slower"
    return done
