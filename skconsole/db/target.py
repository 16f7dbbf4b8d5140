"""Choosing the server: an explicit DSN, the libpq environment, or the embedded server."""

from __future__ import annotations

import os
from pathlib import Path

from skconsole.core.errors import SchemaError
from skconsole.db.connect import Database, libpq_env_given
from skconsole.db.embedded import EmbeddedServer
from skconsole.db.mapping import DEFAULT_MAPPING, TableMapping
from skconsole.db.schema import check_schema, setup_schema


def resolve_database(
    dsn: str | None = None,
    data_dir: Path | str | None = None,
    *,
    read_only: bool = False,
    application_name: str = "skconsole",
    mapping: TableMapping | None = None,
) -> Database:
    """A Database for the given options; starts (and registers with) the embedded server if chosen."""
    dsn = dsn if dsn is not None else os.environ.get("SKCONSOLE_DSN")
    mapping = mapping or DEFAULT_MAPPING
    if dsn:
        return Database(
            dsn, read_only=read_only, application_name=application_name, mapping=mapping
        )
    if libpq_env_given():
        return Database("", read_only=read_only, application_name=application_name, mapping=mapping)
    server = EmbeddedServer(data_dir or os.environ.get("SKCONSOLE_DATA_DIR") or None)
    uri = server.start()
    return Database(
        uri,
        read_only=read_only,
        application_name=application_name,
        description=f"embedded PostgreSQL ({server.data_dir})",
        keepalive=server,
        mapping=mapping,
    )


def open_database(
    dsn: str | None = None,
    data_dir: Path | str | None = None,
    *,
    setup: bool = False,
    read_only: bool = False,
    application_name: str = "skconsole",
    degraded_ok: bool = False,
    mapping: TableMapping | None = None,
) -> Database:
    """Resolve, connect once to fail fast with a clear message, and check the schema (set
    it up first only when ``setup``: asked for with --setup; nothing else creates
    anything). ``degraded_ok`` (commands that only read): a database with
    Stakhanovise.NET's tables alone is read degraded (:mod:`skconsole.db.layout`)."""
    db = resolve_database(
        dsn, data_dir, read_only=read_only, application_name=application_name, mapping=mapping
    )
    with db.connect() as conn:
        if setup and not read_only:
            try:
                setup_schema(conn)
            except SchemaError:  # e.g. a role that may not create anything
                if not degraded_ok:
                    raise
                check_schema(conn, allow_degraded=True)
        else:
            check_schema(conn, allow_degraded=degraded_ok)
    return db
