"""A post on a connection inside a two-phase transaction (``tpc_begin``) is refused.

A post sends a NOTIFY, and PostgreSQL cannot PREPARE a transaction that did:
joined, the post would doom the caller's ``tpc_prepare()`` and the caller's own
rows with it. So it is refused before anything is sent, with one line, and the
caller's transaction goes on to prepare and commit its own rows.

Preparing needs ``max_prepared_transactions`` > 0, which PostgreSQL's default
(0) is not: where the session's server has it at 0, these tests start a
server of their own (embedded, with it set), once for the module.
"""

from __future__ import annotations

import contextlib
import shutil
import tempfile
import uuid
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest
from psycopg import sql
from psycopg.pq import TransactionStatus

from skconsole.core.errors import ConfigError
from skconsole.db.embedded import EmbeddedServer
from skconsole.db.schema import setup_schema
from skconsole.producer import COPY_MIN_ROWS, AsyncProducer, Job, Producer
from tests.conftest import TABLES
from tests.support.server_control import restart_server

Conn = psycopg.Connection[Any]
ORDERS = sql.Identifier("tpc_test_orders")
#: gids of the transactions these tests prepare (rolled back if a test leaves one)
GID_PREFIX = "sk-tpc-test-"
REFUSAL = (
    "connection= is in a two-phase transaction (tpc_begin): a post sends a NOTIFY,"
    " and PostgreSQL cannot PREPARE a transaction that did, so tpc_prepare() would"
    " fail; post in an ordinary transaction instead"
)


def _prepares(dsn: str) -> bool:
    with psycopg.connect(dsn, autocommit=True) as c:
        row = c.execute("SHOW max_prepared_transactions").fetchone()
    assert row is not None
    return int(row[0]) > 0


@pytest.fixture(scope="module")
def preparing_server(_schema: str) -> Iterator[str]:
    """A server that can PREPARE TRANSACTION, with skconsole's schema: the session's,
    else an embedded one of this module's own."""
    if _prepares(_schema):
        yield _schema
        return
    tmp = Path(tempfile.mkdtemp(prefix="skconsole-tpc-"))
    server = EmbeddedServer(tmp / "pgdata")
    try:
        dsn = server.start(cleanup="delete")
        with psycopg.connect(dsn, autocommit=True) as c:
            c.execute("ALTER SYSTEM SET max_prepared_transactions = 4")
        restart_server(dsn)  # the setting takes a restart
        with psycopg.connect(dsn, autocommit=True) as c:
            setup_schema(c)
        yield dsn
    finally:
        server.release()
        shutil.rmtree(tmp, ignore_errors=True)


@pytest.fixture
def tpc_dsn(preparing_server: str) -> Iterator[str]:
    """Empty queue tables and an orders table of the caller's own; afterwards, no
    transaction of these tests is left prepared (it would hold its locks for good)."""
    with psycopg.connect(preparing_server, autocommit=True) as c:
        c.execute(
            sql.SQL("TRUNCATE {} RESTART IDENTITY").format(
                sql.SQL(", ").join(sql.Identifier(t) for t in TABLES)
            )
        )
        c.execute(sql.SQL("DROP TABLE IF EXISTS {}").format(ORDERS))
        c.execute(
            sql.SQL("CREATE TABLE {} (id bigserial PRIMARY KEY, item text NOT NULL)").format(ORDERS)
        )
    yield preparing_server
    with psycopg.connect(preparing_server, autocommit=True) as c:
        left = c.execute(
            "SELECT gid FROM pg_prepared_xacts WHERE gid LIKE %s AND database = current_database()",
            (GID_PREFIX + "%",),
        ).fetchall()
        for (gid,) in left:
            c.execute(sql.SQL("ROLLBACK PREPARED {}").format(sql.Literal(gid)))
        c.execute(sql.SQL("DROP TABLE IF EXISTS {}").format(ORDERS))


def new_gid() -> str:
    """A transaction id as a plain string: PostgreSQL's gid is then this very text."""
    return GID_PREFIX + uuid.uuid4().hex


def counts(dsn: str) -> tuple[int, int]:
    """(orders, jobs) committed."""
    with psycopg.connect(dsn, autocommit=True) as c:
        row = c.execute(
            sql.SQL(
                "SELECT (SELECT count(*) FROM {}), (SELECT count(*) FROM sk_task_results_t)"
            ).format(ORDERS)
        ).fetchone()
    assert row is not None
    return int(row[0]), int(row[1])


ADD_ORDER = sql.SQL("INSERT INTO {} (item) VALUES (%s)").format(ORDERS)


def add_order(conn: Conn) -> None:
    conn.execute(ADD_ORDER, ("teapot",))


@contextlib.asynccontextmanager
async def in_two_phase_async(
    dsn: str,
) -> AsyncIterator[tuple[AsyncProducer, psycopg.AsyncConnection[Any]]]:
    """An async producer, and the caller's connection in a two-phase transaction it began."""
    async with (
        AsyncProducer(dsn) as producer,
        await psycopg.AsyncConnection.connect(dsn) as app,
    ):
        await app.tpc_begin(new_gid())
        yield producer, app


@pytest.mark.parametrize("many", [1, COPY_MIN_ROWS], ids=["one", "copy"])
def test_a_post_in_a_two_phase_transaction_is_refused_with_one_line(
    tpc_dsn: str, many: int
) -> None:
    with Producer(tpc_dsn) as producer, psycopg.connect(tpc_dsn) as app:
        app.tpc_begin(new_gid())
        add_order(app)
        with pytest.raises(ConfigError) as refused:
            producer.post_many([Job("tpc.order") for _ in range(many)], connection=app)
        assert str(refused.value) == REFUSAL
        # nothing was sent: the caller's transaction is as it was
        assert app.info.transaction_status == TransactionStatus.INTRANS
        app.tpc_rollback()


def test_after_a_refused_post_the_callers_two_phase_transaction_prepares_and_commits(
    tpc_dsn: str,
) -> None:
    with Producer(tpc_dsn) as producer, psycopg.connect(tpc_dsn) as app:
        app.tpc_begin(new_gid())
        add_order(app)
        with contextlib.suppress(ConfigError):  # refused (the test above): it sends nothing
            producer.post("tpc.order", connection=app)
        app.tpc_prepare()
        app.tpc_commit()
    assert counts(tpc_dsn) == (1, 0)


def test_a_post_between_tpc_prepare_and_tpc_commit_is_refused(tpc_dsn: str) -> None:
    with Producer(tpc_dsn) as producer, psycopg.connect(tpc_dsn) as app:
        app.tpc_begin(new_gid())
        add_order(app)
        app.tpc_prepare()
        with pytest.raises(ConfigError, match="two-phase transaction"):
            producer.post("tpc.order", connection=app)
        app.tpc_commit()
        # the two-phase transaction is over: the connection takes posts again
        producer.post("tpc.order", connection=app)
        app.commit()
    assert counts(tpc_dsn) == (1, 1)


async def test_an_async_post_in_a_two_phase_transaction_is_refused_with_one_line(
    tpc_dsn: str,
) -> None:
    async with in_two_phase_async(tpc_dsn) as (producer, app):
        with pytest.raises(ConfigError) as refused:
            await producer.post("tpc.order", connection=app)
        assert str(refused.value) == REFUSAL
        assert app.info.transaction_status == TransactionStatus.INTRANS
        await app.tpc_rollback()


async def test_after_a_refused_async_post_the_two_phase_transaction_prepares_and_commits(
    tpc_dsn: str,
) -> None:
    async with in_two_phase_async(tpc_dsn) as (producer, app):
        await app.execute(ADD_ORDER, ("kettle",))
        with contextlib.suppress(ConfigError):
            jobs = [Job("tpc.order") for _ in range(COPY_MIN_ROWS)]
            await producer.post_many(jobs, connection=app)
        await app.tpc_prepare()
        await app.tpc_commit()
    assert counts(tpc_dsn) == (1, 0)
