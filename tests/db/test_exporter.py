"""``skconsole exporter`` against a real PostgreSQL: what one cycle exports, the
real command over HTTP (scrapes never query), read-only mode, a server that is
not there, and hostile task types through the exposition format."""

from __future__ import annotations

import contextlib
import os
import select
import signal
import socket
import subprocess
import urllib.request
from collections.abc import Callable, Iterator
from typing import Any

import psycopg
from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.parser import text_string_to_metric_families

from skconsole import read
from skconsole.db.connect import Database
from skconsole.exporter import MAX_FAILURE_GROUPS, Exporter
from skconsole.producer import Job, Producer
from tests.conftest import ROOT, skconsole_cmd
from tests.support.waiting import wait_until

from .test_ops import TIMEOUT_A, add_job

Conn = psycopg.Connection[Any]
CLI = Callable[..., subprocess.CompletedProcess[str]]
#: sample name -> {labels as a sorted tuple of pairs: value}
Samples = dict[str, dict[tuple[tuple[str, str], ...], float]]

HOSTILE = 'we"ird\\type\nline two \\n \\" ${x} \x1b[31m é\t'


def parse(text: str) -> Samples:
    samples: Samples = {}
    for family in text_string_to_metric_families(text):
        for s in family.samples:
            samples.setdefault(s.name, {})[tuple(sorted(s.labels.items()))] = s.value
    return samples


def one_cycle(dsn: str) -> Samples:
    """Run one cycle and render it as a scrape would, on a private registry."""
    exporter = Exporter(Database(dsn), interval_s=60)
    snapshot = exporter.cycle()
    assert snapshot.up
    registry = CollectorRegistry()
    registry.register(exporter)
    return parse(generate_latest(registry).decode())


def queue_jobs(samples: Samples) -> dict[tuple[str, str], float]:
    return {
        (dict(k)["task_type"], dict(k)["state"]): v
        for k, v in samples["skconsole_queue_jobs"].items()
    }


# -- one cycle --------------------------------------------------------------------------------
def test_one_cycle_exports_depth_per_type_and_jobs_per_status(dsn: str, db: Database) -> None:
    with Producer(db) as p:
        p.post_many([Job("t.a", {"n": n}) for n in range(3)])
        p.post_many([Job("t.b", delay=3600) for _ in range(2)])

    samples = one_cycle(dsn)

    assert queue_jobs(samples) == {
        ("t.a", "ready"): 3,
        ("t.a", "scheduled"): 0,
        ("t.a", "in_flight"): 0,
        ("t.b", "ready"): 0,
        ("t.b", "scheduled"): 2,
        ("t.b", "in_flight"): 0,
    }
    statuses = {dict(k)["status"]: v for k, v in samples["skconsole_jobs"].items()}
    assert statuses["Unprocessed"] == 5
    assert sum(statuses.values()) == 5
    assert set(statuses) >= {"Unknown", "Processing", "Processed", "Faulted", "Cancelled"}
    oldest = samples["skconsole_queue_oldest_ready_age_seconds"]
    assert list(oldest) == [(("task_type", "t.a"),)]  # t.b has no ready job
    assert samples["skconsole_exporter_up"][()] == 1
    assert samples["skconsole_workers_alive"][()] == 0
    dead = {dict(k)["table"]: v for k, v in samples["skconsole_table_dead_tuples"].items()}
    assert "sk_tasks_queue_t" in dead and dead["sk_tasks_queue_t"] >= 0
    assert samples["skconsole_lock_waits"][()] == 0


def test_a_breached_slo_is_exported_per_type(dsn: str, db: Database, conn: Conn) -> None:
    with Producer(db) as p:
        p.post_many([Job("t.slo", None) for _ in range(2)])
    conn.execute("UPDATE sk_tasks_queue_t SET task_locked_until_ts = now() - interval '2 minutes'")
    conn.execute(
        "INSERT INTO sk_task_types_t (task_type, tt_slo_max_wait_seconds) VALUES ('t.slo', 30)"
        " ON CONFLICT (task_type) DO UPDATE SET tt_slo_max_wait_seconds = 30"
    )

    samples = one_cycle(dsn)

    label = (("task_type", "t.slo"),)
    assert samples["skconsole_slo_max_wait_seconds"] == {label: 30}
    assert samples["skconsole_slo_breached"] == {label: 1}
    assert samples["skconsole_slo_breach_in_seconds"][label] < -80


def test_failure_groups_are_labelled_by_id_never_by_their_text(dsn: str, conn: Conn) -> None:
    add_job(conn, 5, error=TIMEOUT_A)
    add_job(conn, 6, error=TIMEOUT_A)
    (group,) = read.failure_groups(conn)

    samples = one_cycle(dsn)

    assert samples["skconsole_failure_group_jobs"] == {(("group", group.id),): 2}
    assert samples["skconsole_failure_groups_truncated"][()] == 0
    assert "UpstreamTimeout" not in repr(samples)


def test_failure_groups_beyond_the_cap_are_left_out_and_flagged(dsn: str, conn: Conn) -> None:
    for n in range(MAX_FAILURE_GROUPS + 1):
        add_job(conn, 6, error=f"app.Error{n}: broken")

    samples = one_cycle(dsn)

    assert len(samples["skconsole_failure_group_jobs"]) == MAX_FAILURE_GROUPS
    assert samples["skconsole_failure_groups_truncated"][()] == 1


def test_a_cycle_cannot_write(dsn: str) -> None:
    def writes(conn: Conn) -> list[Any]:
        conn.execute("CREATE TABLE sk_exporter_must_not_write (x int)")
        return []

    exporter = Exporter(Database(dsn), interval_s=60, sources=[writes])

    snapshot = exporter.cycle()

    assert (snapshot.up, snapshot.cycles_failed, snapshot.families) == (False, 1, ())
    with psycopg.connect(dsn) as c:
        row = c.execute("SELECT to_regclass('sk_exporter_must_not_write')").fetchone()
    assert row == (None,)


def test_a_hostile_task_type_round_trips_through_the_exposition(dsn: str, db: Database) -> None:
    with Producer(db) as p:
        p.post(HOSTILE)

    samples = one_cycle(dsn)

    assert queue_jobs(samples)[(HOSTILE, "ready")] == 1
    assert list(samples["skconsole_task_type_paused"]) == [(("task_type", HOSTILE),)]


# -- the real command -------------------------------------------------------------------------
@contextlib.contextmanager
def exporter_process(*args: str) -> Iterator[tuple[subprocess.Popen[str], int]]:
    """``skconsole ARGS`` (an exporter on --port 0); yields it and the port it printed."""
    proc = subprocess.Popen(
        skconsole_cmd(*args),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=ROOT,
        env=os.environ.copy(),
        start_new_session=True,
    )
    try:
        assert proc.stdout is not None
        ready, _, _ = select.select([proc.stdout], [], [], 60)
        line = proc.stdout.readline() if ready else ""
        assert "/metrics" in line, f"no serving line: {line!r}"
        port = int(line.split("/metrics")[0].rsplit(":", 1)[1])
        yield proc, port
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGINT)
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(10)


def scrape(port: int) -> Samples:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as resp:
        return parse(resp.read().decode())


def test_the_command_serves_the_cycle_and_scrapes_do_not_query(dsn: str, db: Database) -> None:
    with Producer(db) as p:
        p.post_many([Job("t.a") for _ in range(4)])

    with exporter_process("--dsn", dsn, "exporter", "--port", "0", "--interval", "1s") as (
        proc,
        port,
    ):
        burst = [scrape(port) for _ in range(20)]
        ok = (("result", "ok"),)
        # the cycles go on at their interval, scraped or not: two more, unprompted
        wait_until(
            lambda: (
                scrape(port)["skconsole_exporter_cycles_total"][ok]
                >= burst[-1]["skconsole_exporter_cycles_total"][ok] + 2
            ),
            timeout=30,
        )
        assert proc.poll() is None

    assert queue_jobs(burst[0])[("t.a", "ready")] == 4
    assert all(s["skconsole_exporter_up"][()] == 1 for s in burst)
    # 20 scrapes in well under a second: at most two cycles between them
    stamps = {s["skconsole_exporter_last_cycle_timestamp_seconds"][()] for s in burst}
    cycles = [s["skconsole_exporter_cycles_total"][(("result", "ok"),)] for s in burst]
    assert len(stamps) <= 2
    assert cycles[-1] - cycles[0] <= 1


def test_the_command_works_in_read_only_mode(dsn: str, db: Database) -> None:
    with Producer(db) as p:
        p.post("t.ro")

    with exporter_process("--read-only", "--dsn", dsn, "exporter", "--port", "0") as (_, port):
        samples = scrape(port)

    assert samples["skconsole_exporter_up"][()] == 1
    assert queue_jobs(samples)[("t.ro", "ready")] == 1


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_a_server_that_is_not_there_gives_up_0_and_the_exporter_keeps_serving() -> None:
    dsn = f"postgresql://postgres@127.0.0.1:{_free_port()}/nowhere"
    args = ("--dsn", dsn, "exporter", "--port", "0", "--interval", "1s")

    failed = (("result", "failed"),)
    with exporter_process(*args) as (proc, port):
        first = scrape(port)
        wait_until(  # two more cycles fail, and it still serves
            lambda: (
                scrape(port)["skconsole_exporter_cycles_total"][failed]
                >= first["skconsole_exporter_cycles_total"][failed] + 2
            ),
            timeout=30,
        )
        second = scrape(port)
        alive = proc.poll() is None
    assert proc.stderr is not None
    stderr = proc.stderr.read()

    assert alive
    assert first["skconsole_exporter_up"][()] == 0 == second["skconsole_exporter_up"][()]
    assert "skconsole_queue_jobs" not in second
    assert "Traceback" not in stderr
    # the same failure is logged once, not once a cycle
    assert stderr.count("cycle failed") == 1, stderr


# -- bad input --------------------------------------------------------------------------------
def test_bad_options_are_one_line_errors(run_cli: CLI) -> None:
    for args, code, words in [
        (("--port", "70000"), 2, "--port must be between 0 and 65,535"),
        (("--interval", "0"), 2, "--interval must be between 1s and 1h"),
    ]:
        proc = run_cli("exporter", *args)
        assert proc.returncode == code, proc.stderr
        assert words in proc.stderr
        assert len(proc.stderr.strip().splitlines()) == 1, proc.stderr


def test_a_port_in_use_is_a_one_line_error(run_cli: CLI) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]

        proc = run_cli("exporter", "--port", str(port))

    assert proc.returncode == 1
    assert f"cannot listen on 127.0.0.1:{port}" in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1, proc.stderr


def test_the_failure_rate_and_its_max_are_exported_per_type(dsn: str, conn: Conn) -> None:
    conn.execute(
        "INSERT INTO sk_task_results_t (task_id, task_type, task_source, task_payload,"
        " task_status, task_priority, task_posted_at_ts, task_processing_finalized_at_ts)"
        " SELECT gen_random_uuid(), 't.failing', 'test', 'null', s, 0, now(), now()"
        " FROM unnest(array[3, 3, 3, 6]) AS s"
    )
    conn.execute(
        "INSERT INTO sk_task_types_t (task_type, tt_slo_max_failure_rate) VALUES ('t.failing', 0.1)"
    )

    samples = one_cycle(dsn)

    assert samples["skconsole_failure_rate"] == {(("task_type", "t.failing"),): 0.25}
    assert samples["skconsole_slo_max_failure_rate"] == {(("task_type", "t.failing"),): 0.1}
    finished = samples["skconsole_recent_finished_jobs"]
    assert finished[(("outcome", "failed"), ("task_type", "t.failing"))] == 1
    assert finished[(("outcome", "succeeded"), ("task_type", "t.failing"))] == 3
