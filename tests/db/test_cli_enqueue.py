"""``skconsole enqueue`` tells which jobs it posted: their ids one a line, or with
``--json`` a list of ``{id, type, outcome}``; the ids are the jobs in the queue."""

from __future__ import annotations

import json
import subprocess
import uuid
from collections.abc import Callable
from typing import Any

import psycopg

Conn = psycopg.Connection[Any]
CLI = Callable[..., subprocess.CompletedProcess[str]]


def queued_ids(conn: Conn, task_type: str) -> set[str]:
    rows = conn.execute(
        "SELECT task_id FROM sk_task_results_t WHERE task_type = %s", (task_type,)
    ).fetchall()
    return {str(r[0]) for r in rows}


def test_enqueue_with_a_count_prints_every_posted_id_one_a_line(run_cli: CLI, conn: Conn) -> None:
    proc = run_cli("enqueue", "cli.ids", "--count", "3")

    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.split()
    assert len(lines) == 3 and all(uuid.UUID(line) for line in lines)
    assert set(lines) == queued_ids(conn, "cli.ids")
    assert "posted 3 job(s) of type cli.ids" in proc.stderr


def test_enqueue_json_is_a_list_of_the_posted_jobs(run_cli: CLI, conn: Conn) -> None:
    proc = run_cli("enqueue", "cli.json", "--count", "2", "--json")

    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert [(d["type"], d["outcome"]) for d in doc] == [("cli.json", "posted")] * 2
    assert {d["id"] for d in doc} == queued_ids(conn, "cli.json")


def test_enqueue_json_of_a_keyed_job_says_it_was_already_waiting(run_cli: CLI) -> None:
    first = run_cli("enqueue", "cli.key", "--key", "k1", "--json")
    again = run_cli("enqueue", "cli.key", "--key", "k1", "--json")

    assert first.returncode == 0 and again.returncode == 0, first.stderr + again.stderr
    [posted], [skipped] = json.loads(first.stdout), json.loads(again.stdout)
    assert (posted["outcome"], skipped["outcome"]) == ("posted", "already waiting (key)")
    assert posted["id"] == skipped["id"]
