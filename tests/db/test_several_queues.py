"""`skconsole check` and `skconsole exporter` over several queues: the test database, a
second scratch database on the same server, and a DSN whose port nothing listens on.
Each queue gets a verdict and labels of its own; the one that cannot be reached is
UNKNOWN (check) or its own up 0 (exporter) and the others are read all the same."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import psycopg
import pytest
from prometheus_client import CollectorRegistry, generate_latest

from skconsole.db.connect import Database
from skconsole.db.mapping import TableMapping
from skconsole.db.queues import name_from_dsn
from skconsole.db.schema import setup_schema
from skconsole.exporter import Exporter, QueueExporters
from tests.support.waiting import wait_until

from .test_exporter import exporter_process, parse, scrape
from .test_flow_and_check import QUIET_HEALTH, add_ready

Conn = psycopg.Connection[Any]
CLI = Callable[..., subprocess.CompletedProcess[str]]
LATE = "t.late"


def breach_an_slo(dsn: str) -> None:
    """A type whose oldest ready job has waited 2 minutes past a 30 s SLO."""
    with psycopg.connect(dsn, autocommit=True) as conn:
        add_ready(conn, LATE, 2, ready_for_s=150)
        conn.execute(
            "INSERT INTO sk_task_types_t (task_type, tt_slo_max_wait_seconds) VALUES (%s, 30)",
            (LATE,),
        )


def queues_file(tmp_path: Path, **dsns: str) -> Path:
    path = tmp_path / "queues.toml"
    path.write_text("".join(f'[[queue]]\nname = "{n}"\ndsn = "{d}"\n\n' for n, d in dsns.items()))
    return path


# -- check ------------------------------------------------------------------------------------
def test_check_gives_one_verdict_per_queue_and_exits_with_the_worst(
    run_cli: CLI, dsn: str, second: str, nowhere: str, tmp_path: Path
) -> None:
    breach_an_slo(second)
    path = queues_file(tmp_path, billing=dsn, emails=second, search=nowhere)

    done = run_cli("--queues", str(path), "check", "--json", *QUIET_HEALTH, use_dsn=False)

    assert done.returncode == 2, done.stderr
    verdicts = {d["queue"]: d["status_name"] for d in json.loads(done.stdout)}
    assert verdicts == {"billing": "OK", "emails": "CRITICAL", "search": "UNKNOWN"}


def test_check_prints_each_queues_lines_under_one_summary(
    run_cli: CLI, dsn: str, second: str, nowhere: str, tmp_path: Path
) -> None:
    breach_an_slo(second)
    path = queues_file(tmp_path, billing=dsn, emails=second, search=nowhere)

    done = run_cli("--queues", str(path), "check", *QUIET_HEALTH, use_dsn=False)

    first, *rest = done.stdout.splitlines()
    assert first.startswith("SKCONSOLE CRITICAL - emails CRITICAL, search UNKNOWN, billing OK |")
    assert f"emails:oldest_ready_{LATE}=" in first
    assert "emails: CRITICAL slo: t.late: oldest ready 2m" in "\n".join(rest)
    assert any(line.startswith("search: SKCONSOLE UNKNOWN - cannot connect") for line in rest)
    assert any(line.startswith("billing: SKCONSOLE OK - ") for line in rest)


def test_repeated_dsns_name_the_queues_from_their_databases(
    run_cli: CLI, dsn: str, second: str, nowhere: str
) -> None:
    done = run_cli("--dsn", second, "--dsn", nowhere, "check", "--json", *QUIET_HEALTH)

    assert done.returncode == 3, done.stderr  # one queue UNKNOWN, the others OK
    names = [d["queue"] for d in json.loads(done.stdout)]
    assert names == [name_from_dsn(d) for d in (dsn, second, nowhere)]
    assert names[2] == "nowhere@127.0.0.1"


def test_a_command_of_one_queue_refuses_several_in_one_line(run_cli: CLI, second: str) -> None:
    done = run_cli("--dsn", second, "status")

    assert done.returncode == 2
    assert "works on one queue, and 2 were named" in done.stderr
    assert "Traceback" not in done.stderr


# -- exporter ---------------------------------------------------------------------------------
def test_each_queues_metrics_carry_its_label_and_an_unreachable_one_is_its_own_up_0(
    dsn: str, second: str, nowhere: str
) -> None:
    breach_an_slo(second)
    engine = QueueExporters(
        [
            (name, Exporter(Database(d), interval_s=60, timeout_s=5, name=name))
            for name, d in (("billing", dsn), ("emails", second), ("search", nowhere))
        ]
    )
    for _, exporter in engine.exporters:
        exporter.cycle()
    registry = CollectorRegistry()
    registry.register(engine)

    samples = parse(generate_latest(registry).decode())

    assert samples["skconsole_exporter_up"] == {
        (("queue", "billing"),): 1,
        (("queue", "emails"),): 1,
        (("queue", "search"),): 0,
    }
    assert samples["skconsole_slo_breached"] == {(("queue", "emails"), ("task_type", LATE)): 1}
    ready = {
        dict(k)["queue"]: v
        for k, v in samples["skconsole_queue_jobs"].items()
        if dict(k)["state"] == "ready"
    }
    assert ready == {"emails": 2}  # billing has no type, search no figures at all
    statuses = {dict(k)["queue"] for k in samples["skconsole_jobs"]}
    assert statuses == {"billing", "emails"}


def test_the_command_serves_every_queue_and_one_down_does_not_stall_the_others(
    dsn: str, second: str, nowhere: str, tmp_path: Path
) -> None:
    path = queues_file(tmp_path, billing=dsn, emails=second, search=nowhere)
    args = ("--queues", str(path), "exporter", "--port", "0", "--interval", "1s")

    with exporter_process(*args) as (_, port):
        wait_until(lambda: len(scrape(port).get("skconsole_exporter_up", {})) == 3, timeout=30)
        samples = scrape(port)

    assert samples["skconsole_exporter_up"] == {
        (("queue", "billing"),): 1,
        (("queue", "emails"),): 1,
        (("queue", "search"),): 0,
    }
    failed = samples["skconsole_exporter_cycles_total"]
    assert failed[(("queue", "search"), ("result", "failed"))] >= 1
    assert failed[(("queue", "billing"), ("result", "failed"))] == 0


# -- a queue with names of its own ------------------------------------------------------------
RENAMED = {"queue_table": "billing_queue", "results_table": "billing_results"}


@pytest.fixture
def renamed(fresh_database: str) -> str:
    """A fresh database whose queue tables were renamed and live in schema ``jobs``, with
    two ready jobs of LATE in them."""
    with psycopg.connect(fresh_database, autocommit=True) as c:
        c.execute("CREATE SCHEMA jobs")
    layout = TableMapping.from_dict({**RENAMED, "schema": "jobs"})
    with Database(fresh_database, mapping=layout).connect() as conn:
        setup_schema(conn)
    with psycopg.connect(fresh_database, autocommit=True) as c:
        c.execute(
            "INSERT INTO jobs.billing_queue (task_id, task_type, task_source, task_payload,"
            " task_priority, task_posted_at_ts, task_locked_until_ts)"
            " SELECT gen_random_uuid(), %s, 'test', 'null', 0, now(), now()"
            " FROM generate_series(1, 2)",
            (LATE,),
        )
    return fresh_database


def test_each_queue_is_read_with_its_own_names(
    run_cli: CLI, dsn: str, renamed: str, tmp_path: Path
) -> None:
    path = tmp_path / "queues.toml"
    path.write_text(
        f'[[queue]]\nname = "plain"\ndsn = "{dsn}"\n\n'
        f'[[queue]]\nname = "billing"\ndsn = "{renamed}"\nschema = "jobs"\n'
        'mapping = { queue_table = "billing_queue", results_table = "billing_results" }\n'
    )

    done = run_cli("--queues", str(path), "check", "--json", *QUIET_HEALTH, use_dsn=False)
    exporter = Exporter(
        Database(renamed),
        interval_s=60,
        layout=TableMapping.from_dict({**RENAMED, "schema": "jobs"}),
    )

    plain, billing = json.loads(done.stdout)
    assert (plain["queue"], plain["status_name"]) == ("plain", "OK")
    # its two ready jobs were read from jobs.billing_queue: nobody runs them
    assert billing["queue"] == "billing"
    assert f"{LATE}: 2 ready, no alive worker runs it" in billing["summary"]
    assert exporter.cycle().up
    registry = CollectorRegistry()
    registry.register(exporter)
    samples = parse(generate_latest(registry).decode())
    ready = samples["skconsole_queue_jobs"][(("state", "ready"), ("task_type", LATE))]
    assert ready == 2
