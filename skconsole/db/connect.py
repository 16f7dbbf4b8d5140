"""Connections with clear errors, and the description of a server without its password."""

from __future__ import annotations

import os
import socket
from dataclasses import dataclass, field
from typing import Any

import psycopg
from psycopg import conninfo

from skconsole.errors import ConnectError

APPLICATION_NAME = "skconsole"
STATEMENT_TIMEOUT_MS = 30_000


def masked_dsn(dsn: str) -> str:
    """The DSN as safe to print: no password, keeping what identifies the server."""
    if not dsn:
        return "libpq environment (PGHOST, PGDATABASE, ...)"
    try:
        params = conninfo.conninfo_to_dict(dsn)
    except psycopg.ProgrammingError:
        return "<unparseable DSN>"
    host = str(params.get("host") or "localhost")
    user = params.get("user")
    port = params.get("port")
    where = f"{host}:{port}" if port else host
    db = params.get("dbname", "")
    return f"{str(user) + '@' if user else ''}{where}/{db}"


def connect_error_message(dsn: str, exc: Exception) -> str:
    first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
    return f"cannot connect to PostgreSQL at {masked_dsn(dsn)}: {first}"


@dataclass
class Database:
    """Where the queue lives and how every connection to it is set up.

    ``read_only`` makes each session read-only on the server too, a second
    guard behind the application's own refusal.
    """

    dsn: str
    read_only: bool = False
    application_name: str = APPLICATION_NAME
    description: str = field(default="")
    keepalive: Any = None  # the embedded server handle, held for this process's lifetime

    def __post_init__(self) -> None:
        if not self.description:
            self.description = masked_dsn(self.dsn)

    def _kwargs(self, application_name: str | None) -> dict[str, Any]:
        # JIT compiles for longer (100+ ms) than our short queries over big tables run
        options = f"-c statement_timeout={STATEMENT_TIMEOUT_MS} -c jit=off"
        if self.read_only:
            options += " -c default_transaction_read_only=on"
        return {
            "autocommit": True,
            "application_name": application_name or self.application_name,
            "options": options,
            "connect_timeout": 10,
        }

    def connect(self, application_name: str | None = None, **extra: Any) -> psycopg.Connection[Any]:
        kwargs = self._kwargs(application_name) | extra
        try:
            return psycopg.connect(self.dsn, **kwargs)
        except (psycopg.OperationalError, psycopg.ProgrammingError) as exc:
            raise ConnectError(connect_error_message(self.dsn, exc)) from None

    async def aconnect(
        self, application_name: str | None = None, **extra: Any
    ) -> psycopg.AsyncConnection[Any]:
        kwargs = self._kwargs(application_name) | extra
        try:
            return await psycopg.AsyncConnection.connect(self.dsn, **kwargs)
        except (psycopg.OperationalError, psycopg.ProgrammingError) as exc:
            raise ConnectError(connect_error_message(self.dsn, exc)) from None


def libpq_env_given() -> bool:
    return any(
        os.environ.get(k) for k in ("PGHOST", "PGHOSTADDR", "PGDATABASE", "PGSERVICE", "PGPORT")
    )


def host_name() -> str:
    return socket.gethostname()
