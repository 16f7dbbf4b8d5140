"""Connections with clear errors, and the description of a server without its password.

Every session gets skconsole's settings through libpq's ``options`` (sent in the
startup packet, so they hold before the first query), merged with the user's own
``options`` (the DSN's, else PGOPTIONS) rather than replacing them.

Some connection poolers refuse the ``options`` startup parameter (PgBouncer:
"unsupported startup parameter: options") or drop it (PgBouncer with
``ignore_startup_parameters = options``). Behind those, the same settings are
applied with ``set_config`` right after connecting, which holds for the life of
the session on a direct connection or a session-mode pooler.

A pooler in transaction mode is found out on the first connection to a server
path (two sessions that share a server process, or one that moves between
transactions) and from then on every connection to it is a pooled one
(:mod:`skconsole.db.pooled`): the settings travel with each transaction, and
the worker polls instead of listening and leaves its liveness to its lease. A
pooler in statement mode is refused: skconsole's writes need transactions.

Every connection also reads a timestamptz that Python's datetime cannot hold
(``infinity``, ``-infinity``, beyond year 9999 or before year 1: what Npgsql
writes for DateTime.MaxValue and MinValue) as the edge of what it can hold, in
UTC (:mod:`skconsole.db.timestamps`), so one such row written by another
application never fails a read.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import Enum
from typing import Any

import psycopg
from psycopg import conninfo

from skconsole.core.errors import ConnectError, PoolerError, ServerUnreachable
from skconsole.db.context import (
    AsyncMappedCursor,
    ConnectionContext,
    MappedCursor,
    with_context,
)
from skconsole.db.mapping import DEFAULT_MAPPING, TableMapping
from skconsole.db.pooled import (
    AsyncPooledConnection,
    AsyncPooledCursor,
    LocalSettings,
    PooledConnection,
    PooledCursor,
)
from skconsole.db.rows import one
from skconsole.db.session_probe import Probe, probe_sessions
from skconsole.db.timestamps import tolerate_odd_timestamps

APPLICATION_NAME = "skconsole"
STATEMENT_TIMEOUT_MS = 30_000
# JIT compiles for longer (100+ ms) than our short queries over big tables run
DEFAULT_OPTIONS = f"-c statement_timeout={STATEMENT_TIMEOUT_MS} -c jit=off"
READ_ONLY_OPTION = "-c default_transaction_read_only=on"

_SPACE = " \t\n\r\f\v"  # C isspace(), as PostgreSQL splits the options string
_APPLY_SETTINGS = (
    "SELECT set_config(name, value, false) FROM unnest(%s::text[], %s::text[]) AS s(name, value)"
)


def masked_dsn(dsn: str) -> str:
    """The DSN as safe to print: no password, keeping what identifies the server."""
    if not dsn:
        return "libpq environment (PGHOST, PGDATABASE, ...)"
    try:
        params = conninfo.conninfo_to_dict(dsn)
    except psycopg.ProgrammingError:
        return "<unparseable DSN>"
    user = params.get("user")
    where = ",".join(_hosts(params))
    db = params.get("dbname", "")
    return f"{str(user) + '@' if user else ''}{where}/{db}"


def _hosts(params: Mapping[str, Any]) -> list[str]:
    """ "host:port" of each server a (multi-host) DSN names, as libpq pairs them: one port
    for all, or one per host."""
    hosts = str(params.get("host") or "localhost").split(",")
    ports = str(params.get("port") or "").split(",")
    if len(ports) == 1:
        ports *= len(hosts)
    return [
        f"{h or 'localhost'}:{p}" if p else (h or "localhost")
        for h, p in zip(hosts, ports, strict=False)
    ]


def shown_dsn(dsn: str) -> str:
    """The DSN as a connection string to show and copy, its password masked: as it
    is when it has none (the embedded server's), else every parameter with
    ``password=****``. An empty DSN is libpq's environment, said in words."""
    if not dsn:
        return masked_dsn(dsn)
    try:
        params = conninfo.conninfo_to_dict(dsn)
    except psycopg.ProgrammingError:
        return "<unparseable DSN>"
    if not params.get("password"):
        return dsn
    params["password"] = "****"
    return conninfo.make_conninfo(**params)  # type: ignore[arg-type]


# What libpq (and psycopg's host resolution) say when no server answered: no
# listener, a silent path, a name that does not resolve (yet: a container's
# service name before its container starts), a server going up or down, or one
# with no connection slot free. Trying again later may work. A server that
# answered and refused (FATAL: password authentication failed, role or database
# does not exist, no pg_hba.conf entry) or a DSN libpq cannot parse is a mistake
# that waiting does not fix.
_UNREACHABLE = (
    "connection refused",
    "timeout expired",
    "timed out",
    "failed to resolve host",
    "could not translate host name",
    "temporary failure in name resolution",
    "name or service not known",
    "no route to host",
    "network is unreachable",
    "host is down",
    "connection reset",
    "server closed the connection unexpectedly",
    "no such file or directory",  # a Unix socket not there (yet)
    "the database system is starting up",
    "the database system is shutting down",
    "the database system is in recovery mode",
    "the database system is not yet accepting connections",
    "the database system is not accepting connections",
    "too many clients",
    "remaining connection slots are reserved",
    # target_session_attrs=read-write (or primary) while no server is writable yet:
    # a failover in progress, its standby not promoted yet
    "session is read-only",
    "server is in hot standby mode",
    "could not make a writable connection",
)


def unreachable(exc: BaseException) -> bool:
    """Whether a failed connection attempt found no server to talk to (worth trying
    again later), rather than a server that refused us or a DSN that is wrong."""
    if not isinstance(exc, psycopg.OperationalError):
        return False  # a ProgrammingError: the DSN itself is wrong
    text = str(exc).lower()
    return any(cause in text for cause in _UNREACHABLE)


#: SQLSTATEs that mean the session itself ended: class 08 (connection exception)
#: and the server shutting the session down
_SESSION_ENDED = ("57P01", "57P02", "57P03")


def connection_failed(exc: BaseException) -> bool:
    """Whether a database error is the connection failing (no answer, the session ended),
    rather than a statement the server refused on a healthy connection (a deadlock, a
    constraint, a value too big for an index), which has an SQLSTATE of its own."""
    if not isinstance(exc, psycopg.OperationalError | psycopg.InterfaceError):
        return False
    state = exc.sqlstate
    return state is None or state.startswith("08") or state in _SESSION_ENDED


def database_error_message(exc: psycopg.Error) -> tuple[str, int]:
    """One line for a database error that ended a command, and its exit code: 3 when the
    connection failed, 1 when the server refused a statement (with the SQLSTATE)."""
    first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
    if connection_failed(exc):
        return f"the connection to PostgreSQL failed: {first}", 3
    state = f" (SQLSTATE {exc.sqlstate})" if exc.sqlstate else ""
    return f"database error: {first}{state}", 1


def connect_error_message(dsn: str, exc: Exception) -> str:
    first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
    return f"cannot connect to PostgreSQL at {masked_dsn(dsn)}: {first}"


# -- the options string ----------------------------------------------------------------
def user_options(dsn: str, environ: Mapping[str, str] | None = None) -> str:
    """The user's own ``options``: the DSN's parameter if present, else PGOPTIONS.

    That is libpq's precedence (a conninfo parameter beats the environment). The
    DSN may be a URI, a key=value string, or empty (the libpq environment). An
    unparseable DSN gives "": connecting reports it.
    """
    try:
        params = conninfo.conninfo_to_dict(dsn)
    except psycopg.ProgrammingError:
        params = {}
    given = params.get("options")
    if given is not None:
        return str(given)
    return (os.environ if environ is None else environ).get("PGOPTIONS", "")


def target_session_attrs(dsn: str, environ: Mapping[str, str] | None = None) -> str:
    """The server a (multi-host) DSN asks for: its ``target_session_attrs``, else
    PGTARGETSESSIONATTRS, else libpq's default, ``any``."""
    try:
        params = conninfo.conninfo_to_dict(dsn)
    except psycopg.ProgrammingError:
        params = {}
    given = params.get("target_session_attrs")
    if given is None:
        given = (os.environ if environ is None else environ).get("PGTARGETSESSIONATTRS")
    return str(given or "any")


def merge_options(user: str, *, read_only: bool) -> str:
    """Ours, then the user's, then the read-only guard: the last ``-c`` of a name wins,
    so the user can override our defaults but never the guard.

    The user's string is kept whole (its escaped spaces, ``a,\\ b``, stay escaped).
    """
    parts = [DEFAULT_OPTIONS]
    if user.strip(_SPACE):
        parts.append(user)
    if read_only:
        parts.append(READ_ONLY_OPTION)
    return " ".join(parts)


def split_options(options: str) -> list[str]:
    """The arguments PostgreSQL reads from an ``options`` string (its pg_split_opts):
    split at unescaped whitespace; a backslash makes the next character literal."""
    args: list[str] = []
    current: list[str] | None = None
    chars = iter(options)
    for ch in chars:
        if ch in _SPACE:
            if current is not None:
                args.append("".join(current))
                current = None
            continue
        if current is None:
            current = []
        current.append(next(chars, "") if ch == "\\" else ch)
    if current is not None:
        args.append("".join(current))
    return args


def settings_options(settings: Mapping[str, str]) -> str:
    """An ``options`` string that makes ``settings`` (the inverse of :func:`option_settings`):
    a backslash before each whitespace or backslash of a value."""

    def escaped(text: str) -> str:
        return "".join(f"\\{ch}" if ch in _SPACE or ch == "\\" else ch for ch in text)

    return " ".join(f"-c {escaped(name)}={escaped(value)}" for name, value in settings.items())


def option_settings(options: str) -> dict[str, str]:
    """The settings an ``options`` string makes (``-c name=value``, ``-cname=value``,
    ``--name=value``), the last of a name winning, as ``set_config`` takes them.

    Raises ValueError for anything else (PostgreSQL's single-letter switches).
    """
    args = split_options(options)
    settings: dict[str, str] = {}
    i = 0
    while i < len(args):
        arg = args[i]
        if arg == "-c" and i + 1 < len(args):
            item, i = args[i + 1], i + 2
        elif len(arg) > 2 and arg[:2] in ("-c", "--"):
            item, i = arg[2:], i + 1
        else:
            raise ValueError(f"option {arg!r} is not -c name=value")
        name, equals, value = item.partition("=")
        if not (name and equals):
            raise ValueError(f"option {item!r} is not name=value")
        key = name.replace("-", "_").lower()
        settings.pop(key, None)
        settings[key] = value
    return settings


def refuses_startup_options(exc: Exception) -> bool:
    """The server (a pooler, really) refused the ``options`` startup parameter or a setting in it."""
    text = str(exc)
    return "unsupported startup parameter" in text or "unsupported options startup" in text


# -- what this process learnt about a server path ---------------------------------------
@dataclass
class _ServerPath:
    startup_options: bool = True  # the ``options`` startup parameter reaches the server
    checked: bool = False  # whether its sessions are real sessions is known
    #: why it looks like a pooler in transaction mode; None: sessions are real sessions
    pooled: str | None = None


_PATHS: dict[str, _ServerPath] = {}  # by DSN, for every Database of this process


def _path(dsn: str) -> _ServerPath:
    return _PATHS.setdefault(dsn, _ServerPath())


class _Found(Enum):
    """What the session probe found out about a server path."""

    SESSIONS = "real sessions, with the startup options"
    OPTIONS_DROPPED = "real sessions; the startup options do not reach the server"
    TRANSACTION_POOLER = "a pooler in transaction mode"


_PROBE_TRANSACTION = "SELECT pg_backend_pid() AS pid, NULL::text AS probe"


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
    #: the names of the queue's objects (--mapping, --schema, a queues file's queue)
    mapping: TableMapping = DEFAULT_MAPPING

    def __post_init__(self) -> None:
        if not self.description:
            self.description = masked_dsn(self.dsn)

    @property
    def context(self) -> ConnectionContext:
        """What each of its connections carries (:mod:`skconsole.db.context`)."""
        return ConnectionContext(self.mapping, self.read_only)

    def options(self, extra: str = "") -> str:
        """The ``options`` every session gets: ours, the layout's (``--schema``), the
        user's (and ``extra``), the guard."""
        user = user_options(self.dsn)
        layout = self.mapping.session_options
        if layout:
            user = f"{layout} {user}" if user.strip(_SPACE) else layout
        if extra.strip(_SPACE):
            user = f"{user} {extra}" if user.strip(_SPACE) else extra
        return merge_options(user, read_only=self.read_only)

    def _kwargs(self, application_name: str | None, extra: dict[str, Any]) -> dict[str, Any]:
        extra = dict(extra)
        options = self.options(str(extra.pop("options", None) or ""))
        if self.read_only and target_session_attrs(self.dsn) == "read-write":
            # our guard makes the session read-only, which "read-write" would refuse on
            # every server: ask for what the user meant, the primary
            extra.setdefault("target_session_attrs", "primary")
        return {
            "autocommit": True,
            "application_name": application_name or self.application_name,
            "connect_timeout": 10,
            **extra,
            "options": options,
        }

    def _error(self, exc: Exception) -> ConnectError:
        kind = ServerUnreachable if unreachable(exc) else ConnectError
        return kind(connect_error_message(self.dsn, exc))

    def _settings_error(self, exc: Exception) -> ConnectError:
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        return ConnectError(
            f"cannot apply the connection options at {masked_dsn(self.dsn)} "
            f"(set after connecting: the server path does not take the options startup parameter): {first}"
        )

    def _settings(self, options: str) -> tuple[list[str], list[str]]:
        try:
            settings = option_settings(options)
        except ValueError as exc:
            raise self._settings_error(exc) from None
        return list(settings), list(settings.values())

    @property
    def pooled(self) -> bool:
        """Whether this process found a pooler in transaction mode on the way to the
        server (known once a connection was opened)."""
        return _path(self.dsn).pooled is not None

    def _pooled_kwargs(self, kwargs: dict[str, Any]) -> dict[str, Any]:
        """Connection parameters through a transaction pooler: no startup options (the
        settings go with each transaction), nothing prepared on the server."""
        return kwargs | {"options": "", "prepare_threshold": None}

    def _local_settings(self, options: str) -> LocalSettings:
        names, values = self._settings(options)
        return LocalSettings(tuple(names), tuple(values))

    # -- sync ---------------------------------------------------------------------
    def _open(self, kwargs: dict[str, Any]) -> tuple[psycopg.Connection[Any], bool]:
        """A connection, with the startup options when the server path takes them;
        returns it and whether the settings still have to be applied."""
        path = _path(self.dsn)
        try:
            if path.pooled is not None:
                settings = self._local_settings(kwargs["options"])
                pooled: PooledConnection[Any] = PooledConnection.connect(
                    self.dsn, **self._pooled_kwargs(kwargs), cursor_factory=PooledCursor
                )
                pooled.local_settings = settings
                pooled.read_only = self.read_only  # READ WRITE too: whatever a shared session left
                return pooled, False
            if path.startup_options:
                try:
                    return psycopg.connect(self.dsn, cursor_factory=MappedCursor, **kwargs), False
                except psycopg.OperationalError as exc:
                    if not refuses_startup_options(exc):
                        raise
                    path.startup_options = False
            plain = kwargs | {"options": ""}
            return psycopg.connect(self.dsn, cursor_factory=MappedCursor, **plain), True
        except (psycopg.OperationalError, psycopg.ProgrammingError) as exc:
            raise self._error(exc) from None

    def _apply(self, conn: psycopg.Connection[Any], options: str) -> None:
        names, values = self._settings(options)
        try:
            conn.execute(_APPLY_SETTINGS, (names, values))
            if not conn.autocommit:
                conn.commit()
        except psycopg.Error as exc:
            raise self._settings_error(exc) from None

    def connect(self, application_name: str | None = None, **extra: Any) -> psycopg.Connection[Any]:
        kwargs = self._kwargs(application_name, extra)
        conn, pending = self._open(kwargs)
        try:
            # before any setting is SET, so none can leak into a transaction pool
            found = self._check_sessions(conn)
            if found is _Found.TRANSACTION_POOLER:
                conn.close()
                conn, pending = self._open(kwargs)  # a pooled one, now
            elif found is _Found.OPTIONS_DROPPED:
                pending = True
            tolerate_odd_timestamps(conn)
            with_context(conn, self.context)
            if pending:
                self._apply(conn, kwargs["options"])
        except BaseException:
            conn.close()
            raise
        return conn

    def _check_sessions(self, conn: psycopg.Connection[Any]) -> _Found:
        """What the server path is, found out on ``conn`` (done on the first connection to
        a server path in this process, never for the embedded server): a direct TCP
        session is proven from its addresses; otherwise :func:`probe_sessions` probes
        whether sessions are real or a pooler's in transaction mode. A pooler in
        statement mode (no transactions at all) is refused (PoolerError).
        """
        path = _path(self.dsn)
        if path.checked or self.keepalive is not None:
            return _Found.SESSIONS
        autocommit = conn.autocommit
        try:
            conn.autocommit = True  # each probe statement its own transaction
            verdict = probe_sessions(
                conn, lambda: self._open(self._kwargs("skconsole-probe", {}))[0]
            )
        except psycopg.OperationalError as exc:
            raise self._error(exc) from None
        if verdict.pooled is not None:
            self._refuse_statement_pooling(conn, verdict.pooled)
            # the probe's setting may linger on a shared server session: it names
            # nothing anyone reads, and dies with that session
            path.pooled = verdict.pooled
            path.checked = True
            return _Found.TRANSACTION_POOLER
        conn.autocommit = autocommit
        path.checked = True
        if path.startup_options and verdict.source not in (None, "client"):
            # a pooler that ignores the options startup parameter (ignore_startup_parameters)
            path.startup_options = False
            return _Found.OPTIONS_DROPPED
        return _Found.SESSIONS

    def _refuse_statement_pooling(self, conn: psycopg.Connection[Any], evidence: str) -> None:
        """A pooler that shares sessions must keep one for a whole transaction."""
        try:
            with conn.transaction():
                first = one(conn, _PROBE_TRANSACTION, Probe)
                second = one(conn, _PROBE_TRANSACTION, Probe)
            kept = first is not None and second is not None and first.pid == second.pid
        except psycopg.Error:
            kept = False
        if not kept:
            raise PoolerError(
                f"{self.description} looks like a connection pooler in statement mode "
                f"({evidence}, and a transaction was refused): skconsole needs transactions: "
                "use a direct connection, or PgBouncer in transaction or session mode"
            )

    # -- async --------------------------------------------------------------------
    async def _aopen(self, kwargs: dict[str, Any]) -> tuple[psycopg.AsyncConnection[Any], bool]:
        path = _path(self.dsn)
        try:
            if path.pooled is not None:
                settings = self._local_settings(kwargs["options"])
                pooled: AsyncPooledConnection[Any] = await AsyncPooledConnection.connect(
                    self.dsn, **self._pooled_kwargs(kwargs), cursor_factory=AsyncPooledCursor
                )
                pooled.local_settings = settings
                await pooled.set_read_only(self.read_only)
                return pooled, False
            if path.startup_options:
                try:
                    conn = await psycopg.AsyncConnection.connect(
                        self.dsn, cursor_factory=AsyncMappedCursor, **kwargs
                    )
                    return conn, False
                except psycopg.OperationalError as exc:
                    if not refuses_startup_options(exc):
                        raise
                    path.startup_options = False
            conn = await psycopg.AsyncConnection.connect(
                self.dsn, cursor_factory=AsyncMappedCursor, **(kwargs | {"options": ""})
            )
            return conn, True
        except (psycopg.OperationalError, psycopg.ProgrammingError) as exc:
            raise self._error(exc) from None

    async def aconnect(
        self, application_name: str | None = None, **extra: Any
    ) -> psycopg.AsyncConnection[Any]:
        kwargs = self._kwargs(application_name, extra)
        conn, pending = await self._aopen(kwargs)
        try:
            unchecked = not (_path(self.dsn).checked or self.keepalive is not None)
            # the same check, on sync connections of its own, off the event loop
            found = await asyncio.to_thread(self._check_sessions_alone) if unchecked else None
            if found is _Found.TRANSACTION_POOLER:
                await conn.close()
                conn, pending = await self._aopen(kwargs)  # a pooled one, now
            elif found is _Found.OPTIONS_DROPPED:
                pending = True
            tolerate_odd_timestamps(conn)
            with_context(conn, self.context)
            if pending:
                names, values = self._settings(kwargs["options"])
                try:
                    await conn.execute(_APPLY_SETTINGS, (names, values))
                    if not conn.autocommit:
                        await conn.commit()
                except psycopg.Error as exc:
                    raise self._settings_error(exc) from None
        except BaseException:
            await conn.close()
            raise
        return conn

    def _check_sessions_alone(self) -> _Found:
        conn, _ = self._open(self._kwargs("skconsole-probe", {}))
        with conn:
            return self._check_sessions(conn)


def libpq_env_given() -> bool:
    return any(
        os.environ.get(k) for k in ("PGHOST", "PGHOSTADDR", "PGDATABASE", "PGSERVICE", "PGPORT")
    )
