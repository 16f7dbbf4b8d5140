"""Transactional posts: ``post(..., connection=conn)`` joins the caller's transaction.

The job rows and the NOTIFY commit or roll back with the caller's own rows;
the producer never commits, rolls back or prepares on the caller's behalf;
connections a post cannot join are refused with a clear error, before
anything is written. Plus the SQLAlchemy and Django recipes, run as scripts.
"""

from __future__ import annotations

import datetime as dt
import importlib.util
import inspect
import re
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from typing import Any

import psycopg
import pytest
from psycopg import conninfo
from psycopg.pq import TransactionStatus
from psycopg.rows import dict_row
from psycopg.types.datetime import TimestamptzLoader

from skconsole.core.errors import ConfigError, ConnectError, InvalidJobError
from skconsole.core.status import JobStatus
from skconsole.producer import COPY_MIN_ROWS, AsyncProducer, Job, Producer, job_id_for_key
from tests.conftest import ROOT
from tests.support.rows import one_row
from tests.support.statuses import status_of
from tests.support.waiting import wait_until

Conn = psycopg.Connection[Any]
ORDERS = "tx_test_orders"
COPY_SIZE = 500
assert COPY_SIZE >= COPY_MIN_ROWS  # the COPY path, several statements in one post
#: handlers that succeed at once (tests.support.tasks_retry)
TASKS = "tests.support.tasks_retry"
OK_TYPE = "retry.ok"


# -- helpers ----------------------------------------------------------------------
def jobs_in(conn: Conn) -> tuple[int, int]:
    """(result rows, queue rows) as ``conn`` sees them."""
    row = one_row(
        conn,
        "SELECT (SELECT count(*) FROM sk_task_results_t), (SELECT count(*) FROM sk_tasks_queue_t)",
    )
    return int(row[0]), int(row[1])


def orders_in(conn: Conn) -> int:
    row = conn.execute(f"SELECT count(*) FROM {ORDERS}").fetchone()  # type: ignore[arg-type]
    assert row is not None
    return int(row[0])


def add_order(conn: Conn, item: str = "teapot") -> None:
    conn.execute(f"INSERT INTO {ORDERS} (item) VALUES (%s)", (item,))  # type: ignore[arg-type]


def post_kind(producer: Producer, kind: str, caller: Conn) -> int:
    """Post one shape of post (a lone job, COPY, keyed) over ``caller``; returns its job count."""
    if kind == "single":
        producer.post("tx.single", {"n": 1}, connection=caller)
        return 1
    if kind == "copy":
        jobs = [Job("tx.copy", {"n": i}) for i in range(COPY_SIZE)]
        assert producer.post_many(jobs, connection=caller).posted == COPY_SIZE
        return COPY_SIZE
    producer.post("tx.keyed", {"n": 1}, key=f"order-{uuid.uuid4()}", connection=caller)
    return 1


KINDS = ["single", "copy", "keyed"]


@pytest.fixture
def orders(dsn: str) -> Iterator[str]:
    """A table of the caller's own, for its rows beside the jobs."""
    with psycopg.connect(dsn, autocommit=True) as c:
        c.execute(f"DROP TABLE IF EXISTS {ORDERS}")  # type: ignore[arg-type]
        c.execute(f"CREATE TABLE {ORDERS} (id bigserial PRIMARY KEY, item text NOT NULL)")  # type: ignore[arg-type]
    yield ORDERS
    with psycopg.connect(dsn, autocommit=True) as c:
        c.execute(f"DROP TABLE IF EXISTS {ORDERS}")  # type: ignore[arg-type]


@pytest.fixture
def producer(dsn: str) -> Iterator[Producer]:
    with Producer(dsn) as p:
        yield p


@pytest.fixture
def caller(dsn: str) -> Iterator[Conn]:
    """The application's own connection, as psycopg opens it by default (not autocommit)."""
    with psycopg.connect(dsn) as c:
        yield c


# -- the transaction is the caller's ----------------------------------------------------
@pytest.mark.parametrize("kind", KINDS)
def test_a_rolled_back_transaction_leaves_no_job(
    producer: Producer, caller: Conn, conn: Conn, orders: str, kind: str
) -> None:
    add_order(caller)
    post_kind(producer, kind, caller)
    assert jobs_in(caller) != (0, 0)
    caller.rollback()
    assert jobs_in(conn) == (0, 0)
    assert orders_in(conn) == 0


@pytest.mark.parametrize("kind", KINDS)
def test_a_post_never_ends_the_callers_transaction(
    producer: Producer, caller: Conn, conn: Conn, kind: str
) -> None:
    post_kind(producer, kind, caller)
    assert caller.info.transaction_status == TransactionStatus.INTRANS
    assert jobs_in(conn) == (0, 0)


def test_a_commit_makes_the_jobs_visible_with_the_callers_rows(
    producer: Producer, caller: Conn, conn: Conn, orders: str
) -> None:
    add_order(caller)
    total = sum(post_kind(producer, kind, caller) for kind in KINDS)
    add_order(caller, "kettle")
    caller.commit()
    assert jobs_in(conn) == (total, total)
    assert orders_in(conn) == 2


def test_before_the_commit_another_session_sees_nothing(
    producer: Producer, dsn: str, conn: Conn, orders: str
) -> None:
    with psycopg.connect(dsn, autocommit=True) as app:
        with app.transaction():  # an autocommit connection inside a transaction block joins it
            add_order(app)
            task_id = producer.post("tx.single", connection=app)
            assert jobs_in(conn) == (0, 0)
            assert orders_in(conn) == 0
        assert status_of(conn, task_id) == JobStatus.UNPROCESSED
        assert orders_in(conn) == 1


def wait_for_listening_worker(conn: Conn) -> None:
    """Until the worker's LISTEN is in place, and its start-up claim is over."""
    wait_until(
        lambda: (
            conn.execute(
                # after its LISTENs the connection reads the worker's cancel requests
                "SELECT 1 FROM pg_stat_activity WHERE application_name = 'skconsole-worker-listen'"
                " AND (query ILIKE 'LISTEN%' OR query ILIKE '%operator asked to cancel%')"
                " AND datname = current_database()"
            ).fetchone()
            is not None
        ),
        timeout=30,
    )
    claim_rounds(conn, 0)  # its start-up claim is over


def claim_rounds(conn: Conn, rounds: int) -> None:
    """Until the worker's claim session is idle after a claim, and then has finished
    ``rounds`` more (each one ends with a new state_change, the session idle again)."""
    seen: set[Any] = set()

    def finished() -> bool:
        row = conn.execute(
            "SELECT state_change FROM pg_stat_activity WHERE application_name ="
            " 'skconsole-worker-claim' AND datname = current_database() AND state = 'idle'"
            " AND query LIKE '%%Claim up to%%'"
        ).fetchone()
        if row is not None:
            seen.add(row[0])
        return len(seen) > rounds

    wait_until(finished, timeout=30, interval=0.01)


def test_a_running_worker_claims_nothing_before_the_commit(
    producer: Producer,
    caller: Conn,
    conn: Conn,
    start_worker: Callable[..., subprocess.Popen[str]],
) -> None:
    start_worker("--tasks", TASKS, "--types", OK_TYPE, "--poll", "100ms")
    wait_for_listening_worker(conn)
    task_id = producer.post(OK_TYPE, connection=caller)
    claim_rounds(conn, 5)  # five polls: each could have claimed it, had it been visible
    row = one_row(conn, "SELECT clock_timestamp()")
    committed_at = row[0]
    caller.commit()
    wait_until(lambda: status_of(conn, task_id) == JobStatus.PROCESSED, timeout=10)
    first = one_row(
        conn,
        "SELECT task_first_processing_attempted_at_ts FROM sk_task_results_t WHERE task_id = %s",
        (task_id,),
    )
    assert first[0] >= committed_at


def test_a_commit_wakes_a_waiting_worker_through_its_notification(
    producer: Producer,
    caller: Conn,
    conn: Conn,
    start_worker: Callable[..., subprocess.Popen[str]],
) -> None:
    # polls once an hour: only the NOTIFY, delivered at the commit, explains a prompt pickup
    start_worker("--tasks", TASKS, "--types", OK_TYPE, "--poll", "1h")
    wait_for_listening_worker(conn)
    task_id = producer.post(OK_TYPE, connection=caller)
    time.sleep(0.5)
    assert status_of(conn, task_id) is None
    caller.commit()
    wait_until(lambda: status_of(conn, task_id) == JobStatus.PROCESSED, timeout=5)


# -- what goes wrong stays with the caller ------------------------------------------------
def test_an_invalid_job_leaves_nothing_committed(
    producer: Producer, dsn: str, conn: Conn, orders: str
) -> None:
    with psycopg.connect(dsn) as app:
        with pytest.raises(InvalidJobError), app.transaction():
            add_order(app)
            producer.post("tx.single", connection=app)
            producer.post_many([Job("tx.copy") for _ in range(COPY_SIZE)], connection=app)
            producer.post("tx.bad", priority=-1, connection=app)
        assert app.info.transaction_status == TransactionStatus.IDLE
    assert jobs_in(conn) == (0, 0)
    assert orders_in(conn) == 0


def test_a_post_failing_on_the_server_leaves_the_callers_transaction_aborted(
    producer: Producer, caller: Conn, dsn: str, conn: Conn, orders: str
) -> None:
    add_order(caller)
    caller.execute("SET LOCAL lock_timeout = '100ms'")
    with psycopg.connect(dsn) as other:
        other.execute("LOCK TABLE sk_tasks_queue_t IN ACCESS EXCLUSIVE MODE")
        # the COPY into sk_task_results_t goes through; the one into the queue times out
        with pytest.raises(psycopg.errors.LockNotAvailable):
            producer.post_many([Job("tx.copy") for _ in range(COPY_SIZE)], connection=caller)
        other.rollback()
    assert caller.info.transaction_status == TransactionStatus.INERROR
    caller.rollback()
    assert jobs_in(conn) == (0, 0)
    assert orders_in(conn) == 0


# -- the caller's connection settings -------------------------------------------------
@pytest.mark.parametrize("kind", KINDS)
def test_a_dict_row_connection_works(producer: Producer, dsn: str, conn: Conn, kind: str) -> None:
    with psycopg.connect(dsn, row_factory=dict_row) as app:
        posted = post_kind(producer, kind, app)
        app.commit()
    assert jobs_in(conn) == (posted, posted)


@pytest.mark.parametrize(
    "cursor_factory", [psycopg.ClientCursor, psycopg.RawCursor], ids=["client", "raw"]
)
@pytest.mark.parametrize("kind", KINDS)
def test_a_connection_with_a_cursor_factory_of_its_own_works(
    producer: Producer, dsn: str, conn: Conn, kind: str, cursor_factory: Any
) -> None:
    # Django's psycopg 3 backend makes client-side-binding cursors by default
    with psycopg.connect(dsn, cursor_factory=cursor_factory) as app:
        posted = post_kind(producer, kind, app)
        app.commit()
    assert jobs_in(conn) == (posted, posted)


class NaiveLoader(TimestamptzLoader):
    """What Django's connection does with USE_TZ=False: timestamps without their zone."""

    def load(self, data: Any) -> dt.datetime:
        return super().load(data).replace(tzinfo=None)


def test_a_connection_loading_timestamps_its_own_way_posts_by_copy_on_the_servers_clock(
    producer: Producer, dsn: str, conn: Conn
) -> None:
    with psycopg.connect(dsn) as app:
        app.execute("SET TIME ZONE 'America/Chicago'")
        app.adapters.register_loader("timestamptz", NaiveLoader)
        producer.post_many([Job("tx.copy", delay=60) for _ in range(COPY_SIZE)], connection=app)
        app.commit()
    row = one_row(
        conn,
        "SELECT count(*), max(abs(extract(epoch FROM now() - task_posted_at_ts))),"
        " min(extract(epoch FROM task_locked_until_ts - task_posted_at_ts)),"
        " max(extract(epoch FROM task_locked_until_ts - task_posted_at_ts))"
        " FROM sk_tasks_queue_t",
    )
    assert row[0] == COPY_SIZE
    assert row[1] < 60  # posted just now, not hours off
    assert row[2] == row[3] == 60


@pytest.mark.parametrize(
    ("threshold", "prepares"),
    [(None, False), (100, False), (0, True)],
    ids=["never", "after-100-runs", "at-once"],
)
def test_the_callers_prepare_threshold_decides_what_is_prepared(
    producer: Producer, dsn: str, threshold: int | None, prepares: bool
) -> None:
    # None: never (PgBouncer in transaction mode, Django's default); the producer's
    # own connection prepares its statements at once, a caller's is not forced to
    with psycopg.connect(dsn, prepare_threshold=threshold) as app:
        for kind in KINDS * 3:
            post_kind(producer, kind, app)
        prepared = app.execute("SELECT count(*) FROM pg_prepared_statements").fetchone()
        app.commit()
    assert prepared is not None
    assert (prepared[0] > 0) is prepares


def test_a_non_autocommit_idle_connection_gets_a_transaction_the_caller_commits(
    producer: Producer, caller: Conn, conn: Conn
) -> None:
    assert caller.info.transaction_status == TransactionStatus.IDLE
    producer.post("tx.single", connection=caller)
    assert caller.info.transaction_status == TransactionStatus.INTRANS
    assert jobs_in(conn) == (0, 0)
    caller.commit()
    assert jobs_in(conn) == (1, 1)


# -- connections a post cannot join ---------------------------------------------------------
def test_an_autocommit_connection_outside_a_transaction_is_refused(
    producer: Producer, conn: Conn
) -> None:
    with pytest.raises(ConfigError) as refused:
        producer.post("tx.single", connection=conn)
    assert str(refused.value) == (
        "connection= joins the caller's transaction, but this connection is in autocommit"
        " mode outside any transaction: open one first (with conn.transaction(): ...)"
        " or connect with autocommit=False"
    )
    with pytest.raises(ConfigError, match="autocommit"):
        producer.post_many([Job("tx.copy") for _ in range(COPY_SIZE)], connection=conn)
    assert jobs_in(conn) == (0, 0)


def test_a_closed_connection_is_refused(producer: Producer, dsn: str) -> None:
    app = psycopg.connect(dsn)
    app.close()
    with pytest.raises(ConfigError, match="the connection given as connection= is closed"):
        producer.post("tx.single", connection=app)


def test_a_broken_connection_is_refused(producer: Producer, dsn: str, conn: Conn) -> None:
    with psycopg.connect(dsn) as app:
        conn.execute("SELECT pg_terminate_backend(%s)", (app.info.backend_pid,))
        with pytest.raises(psycopg.OperationalError):
            app.execute("SELECT 1")
        assert app.broken
        with pytest.raises(ConnectError, match="connection= is broken"):
            producer.post("tx.single", connection=app)


def test_a_failed_transaction_is_refused_until_rolled_back(
    producer: Producer, caller: Conn, conn: Conn
) -> None:
    with pytest.raises(psycopg.errors.DivisionByZero):
        caller.execute("SELECT 1 / 0")
    with pytest.raises(ConfigError, match="has already failed: roll it back"):
        producer.post("tx.single", connection=caller)
    caller.rollback()
    producer.post("tx.single", connection=caller)
    caller.commit()
    assert jobs_in(conn) == (1, 1)


async def test_a_producer_refuses_an_async_connection_and_other_objects(
    producer: Producer, dsn: str
) -> None:
    async with await psycopg.AsyncConnection.connect(dsn) as aconn:
        with pytest.raises(ConfigError) as refused:
            producer.post("tx.single", connection=aconn)  # type: ignore[arg-type]
    assert str(refused.value) == (
        "Producer takes a psycopg.Connection as connection=,"
        " got a psycopg.AsyncConnection: use AsyncProducer for it"
    )
    with pytest.raises(ConfigError, match="pass the psycopg 3 connection underneath"):
        producer.post("tx.single", connection=object())  # type: ignore[arg-type]


async def test_an_async_producer_refuses_a_sync_connection(dsn: str, caller: Conn) -> None:
    async with AsyncProducer(dsn) as producer:
        with pytest.raises(ConfigError) as refused:
            await producer.post("tx.single", connection=caller)  # type: ignore[arg-type]
    assert str(refused.value) == (
        "AsyncProducer takes a psycopg.AsyncConnection as connection=,"
        " got a psycopg.Connection: use Producer for it"
    )


def test_a_producer_refuses_a_connection_in_place_of_a_dsn(caller: Conn) -> None:
    for make in (Producer, AsyncProducer):
        with pytest.raises(ConfigError) as refused:
            make(caller)  # type: ignore[arg-type]
        name = make.__name__
        assert str(refused.value) == (
            f"{name} takes a DSN or a Database, not a connection: to post inside your"
            f" transaction, pass the connection to each post: {name.lower()}.post(..., connection=conn)"
        )


def test_a_producer_given_connections_never_opens_its_own(
    caller: Conn, conn: Conn, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("SKCONSOLE_DSN", "PGHOST", "PGHOSTADDR", "PGDATABASE", "PGSERVICE", "PGPORT"):
        monkeypatch.delenv(name, raising=False)
    # nothing listens on port 1: any connection of its own would fail
    with Producer("postgresql://nobody@127.0.0.1:1/nowhere") as producer:
        producer.post("tx.single", connection=caller)
        producer.post_many([Job("tx.copy") for _ in range(COPY_SIZE)], connection=caller)
    with Producer() as without_dsn:
        without_dsn.post("tx.single", connection=caller)
        with pytest.raises(ConfigError, match="no database to post to: pass a DSN"):
            without_dsn.post("tx.single")
    caller.commit()
    assert jobs_in(conn) == (COPY_SIZE + 2, COPY_SIZE + 2)


def test_a_producer_without_a_dsn_posts_to_the_environments_database(
    dsn: str, conn: Conn, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The rule every command follows: SKCONSOLE_DSN, else the libpq variables."""
    monkeypatch.setenv("SKCONSOLE_DSN", dsn)
    with Producer() as producer:
        producer.post("env.one")
    monkeypatch.delenv("SKCONSOLE_DSN")
    params = conninfo.conninfo_to_dict(dsn)
    for key, var in (
        ("host", "PGHOST"),
        ("port", "PGPORT"),
        ("dbname", "PGDATABASE"),
        ("user", "PGUSER"),
    ):
        if params.get(key):
            monkeypatch.setenv(var, str(params[key]))
    with Producer() as producer:
        producer.post("env.two")
    rows = conn.execute(
        "SELECT task_type FROM sk_task_results_t WHERE task_type LIKE 'env.%%' ORDER BY 1"
    ).fetchall()
    assert rows == [("env.one",), ("env.two",)]


def test_post_stream_takes_no_connection_for_it_commits_chunk_by_chunk() -> None:
    assert "connection" not in inspect.signature(Producer.post_stream).parameters
    assert "connection" not in inspect.signature(AsyncProducer.post_stream).parameters


# -- AsyncProducer ----------------------------------------------------------------------
async def test_an_async_rolled_back_transaction_leaves_no_job(dsn: str, conn: Conn) -> None:
    async with AsyncProducer(dsn) as producer, await psycopg.AsyncConnection.connect(dsn) as app:
        await producer.post("tx.single", connection=app)
        await producer.post_many([Job("tx.copy") for _ in range(COPY_SIZE)], connection=app)
        await producer.post("tx.keyed", key="async-order", connection=app)
        assert app.info.transaction_status == TransactionStatus.INTRANS
        await app.rollback()
    assert jobs_in(conn) == (0, 0)


async def test_an_async_commit_makes_the_jobs_visible(dsn: str, conn: Conn) -> None:
    async with (
        AsyncProducer(dsn) as producer,
        await psycopg.AsyncConnection.connect(dsn, row_factory=dict_row) as app,
    ):
        await producer.post("tx.single", connection=app)
        await producer.post_many([Job("tx.copy") for _ in range(COPY_SIZE)], connection=app)
        task_id = await producer.post("tx.keyed", key="async-order", connection=app)
        assert jobs_in(conn) == (0, 0)
        await app.commit()
    assert jobs_in(conn) == (COPY_SIZE + 2, COPY_SIZE + 2)
    assert task_id == job_id_for_key("async-order")


async def test_an_async_autocommit_connection_outside_a_transaction_is_refused(
    dsn: str, conn: Conn
) -> None:
    async with (
        AsyncProducer(dsn) as producer,
        await psycopg.AsyncConnection.connect(dsn, autocommit=True) as app,
    ):
        with pytest.raises(ConfigError, match="joins the caller's transaction"):
            await producer.post("tx.single", connection=app)
        async with app.transaction():
            await producer.post("tx.single", connection=app)
    assert jobs_in(conn) == (1, 1)


# -- the recipes ----------------------------------------------------------------------------
RECIPE_LINE = re.compile(r"^(commit|rollback): +order (\d+), job ([0-9a-f-]{36}): ", re.M)


def run_recipe(name: str, dsn: str, table: str) -> dict[str, tuple[int, uuid.UUID]]:
    """Run examples/NAME.py against the test database; returns its orders and jobs."""
    with psycopg.connect(dsn, autocommit=True) as c:
        c.execute(f"DROP TABLE IF EXISTS {table}")  # type: ignore[arg-type]
    try:
        done = subprocess.run(
            [sys.executable, str(ROOT / "examples" / f"{name}.py"), dsn],
            capture_output=True,
            text=True,
            timeout=120,
            cwd=ROOT,
        )
    finally:
        with psycopg.connect(dsn, autocommit=True) as c:
            rows = {}
            if c.execute("SELECT to_regclass(%s)", (table,)).fetchone() != (None,):
                rows = dict(c.execute(f"SELECT id, item FROM {table}").fetchall())  # type: ignore[arg-type]
            c.execute(f"DROP TABLE IF EXISTS {table}")  # type: ignore[arg-type]
    assert done.returncode == 0, done.stdout + done.stderr
    said = {m[1]: (int(m[2]), uuid.UUID(m[3])) for m in RECIPE_LINE.finditer(done.stdout)}
    assert set(said) == {"commit", "rollback"}, done.stdout
    assert rows == {said["commit"][0]: "teapot"}  # the rolled-back order is not there
    return said


def check_recipe_jobs(conn: Conn, said: dict[str, tuple[int, uuid.UUID]]) -> None:
    order_id, job_id = said["commit"]
    row = conn.execute(
        "SELECT r.task_type, r.task_payload::jsonb, r.task_status, q.task_id IS NOT NULL"
        " FROM sk_task_results_t r LEFT JOIN sk_tasks_queue_t q USING (task_id)"
        " WHERE r.task_id = %s",
        (job_id,),
    ).fetchone()
    assert row == ("orders.confirm", {"order_id": order_id}, JobStatus.UNPROCESSED, True)
    assert jobs_in(conn) == (1, 1)  # the rolled-back job is in neither table


def test_the_sqlalchemy_recipe_commits_and_rolls_back_the_job_with_the_session(
    dsn: str, conn: Conn
) -> None:
    if importlib.util.find_spec("sqlalchemy") is None:
        pytest.skip("sqlalchemy is not installed (pip install -c constraints.txt -e '.[dev]')")
    check_recipe_jobs(
        conn, run_recipe("transactional_sqlalchemy", dsn, "example_sqlalchemy_orders")
    )


def test_the_django_recipe_commits_and_rolls_back_the_job_with_atomic(dsn: str, conn: Conn) -> None:
    if importlib.util.find_spec("django") is None:
        pytest.skip("django is not installed (pip install -c constraints.txt -e '.[dev]')")
    check_recipe_jobs(conn, run_recipe("transactional_django", dsn, "example_django_orders"))
