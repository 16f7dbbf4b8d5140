"""Read-only mode and read-only roles: every action refuses clearly; reads keep working."""

from __future__ import annotations

import subprocess
import uuid
from collections.abc import Callable, Iterator
from typing import Any

import psycopg
import pytest

from skconsole import ops, read
from skconsole.core.errors import ReadOnlyError
from skconsole.core.status import JobStatus
from skconsole.db.connect import Database
from skconsole.ops import Actor, Selection
from tests.support.statuses import status_of

from ..conftest import select_only_role
from .test_ops import add_job

Conn = psycopg.Connection[Any]
CLI = Callable[..., subprocess.CompletedProcess[str]]
ACTOR = Actor("tester", "test-host")

ACTIONS: list[tuple[str, Callable[[Conn], Any]]] = [
    ("requeue", lambda c: ops.REQUEUE.execute(c, Selection(statuses=(5,)), actor=ACTOR)),
    (
        "bump",
        lambda c: ops.BUMP.execute(
            c, Selection(task_type="t.a"), actor=ACTOR, params=ops.BumpParams(to=0)
        ),
    ),
    (
        "bump_now",
        lambda c: ops.BUMP.execute(
            c, Selection(task_type="t.a"), actor=ACTOR, params=ops.BumpParams(now=True)
        ),
    ),
    ("purge", lambda c: ops.PURGE.execute(c, Selection(older_than_seconds=0), actor=ACTOR)),
    ("reap", lambda c: ops.REAP.execute(c, actor=ACTOR)),
    ("cancel", lambda c: ops.CANCEL.execute(c, Selection(task_type="t.a"), actor=ACTOR)),
    ("pause", lambda c: ops.PAUSE.execute(c, Selection(task_type="t.a"), actor=ACTOR)),
    ("resume", lambda c: ops.RESUME.execute(c, Selection(task_type="t.a"), actor=ACTOR)),
]
CLI_ACTIONS = [
    ("requeue", "--status", "5"),
    ("bump", "--type", "t.a", "--to", "0"),
    ("bump", "--type", "t.a", "--now"),
    ("purge", "--older-than", "0s"),
    ("reap",),
    ("cancel", "--type", "t.a"),
    ("pause", "t.a"),
    ("resume", "t.a"),
]


@pytest.fixture
def jobs(conn: Conn) -> dict[str, uuid.UUID]:
    """One job each action could change."""
    return {
        "failed": add_job(conn, 5),
        "waiting": add_job(conn, 1, priority=9),
        "done": add_job(conn, 3, age_s=60),
        "hung": add_job(conn, 2, owner=uuid.uuid4()),
    }


def unchanged(conn: Conn, jobs: dict[str, uuid.UUID]) -> bool:
    return (
        [status_of(conn, jobs[k]) for k in ("failed", "waiting", "done", "hung")] == [5, 1, 3, 2]
        and conn.execute("SELECT count(*) FROM sk_audit_t").fetchone() == (0,)
        and conn.execute("SELECT count(*) FROM sk_task_types_t").fetchone() == (0,)
    )


@pytest.fixture
def select_only_dsn(dsn: str) -> Iterator[str]:
    """A login role that may only SELECT the queue's tables."""
    with select_only_role(dsn, "sk_ro") as role_dsn:
        yield role_dsn


# -- a read-only session (--read-only) -----------------------------------------------------
@pytest.mark.parametrize(("name", "action"), ACTIONS, ids=[a[0] for a in ACTIONS])
def test_every_action_refuses_on_a_read_only_session(
    dsn: str, conn: Conn, jobs: dict[str, uuid.UUID], name: str, action: Callable[[Conn], Any]
) -> None:
    with (
        Database(dsn, read_only=True).connect() as ro,
        pytest.raises(ReadOnlyError, match="read-only"),
    ):
        action(ro)
    assert unchanged(conn, jobs)


def test_previews_and_read_models_work_on_a_read_only_session(
    dsn: str, jobs: dict[str, uuid.UUID]
) -> None:
    with Database(dsn, read_only=True).connect() as ro:
        assert ops.REQUEUE.preview(ro, Selection(statuses=(5,))).ids == (jobs["failed"],)
        assert ops.REAP.preview(ro).count == 1
        assert read.depth(ro).ready == 1
        assert read.inflight(ro).hung == 1
        assert len(read.failure_groups(ro)) == 1
        read.history(ro)
        read.execution_stats(ro)
        read.metrics(ro)
        read.overview(ro)


@pytest.mark.parametrize("args", CLI_ACTIONS, ids=[a[0] for a in CLI_ACTIONS])
def test_every_action_command_refuses_with_read_only(
    run_cli: CLI, conn: Conn, jobs: dict[str, uuid.UUID], args: tuple[str, ...]
) -> None:
    proc = run_cli("--read-only", *args, "--yes")

    assert proc.returncode == 5, proc.stdout + proc.stderr
    assert "read-only" in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1
    assert unchanged(conn, jobs)


def test_the_read_only_environment_variable_refuses_too(
    run_cli: CLI, conn: Conn, jobs: dict[str, uuid.UUID]
) -> None:
    proc = run_cli("requeue", "--status", "5", "--yes", env={"SKCONSOLE_READ_ONLY": "1"})

    assert proc.returncode == 5
    assert "read-only" in proc.stderr
    assert unchanged(conn, jobs)


def test_dry_runs_status_and_audit_work_in_read_only_mode(
    run_cli: CLI, jobs: dict[str, uuid.UUID]
) -> None:
    for args in (
        ("requeue", "--status", "5", "--dry-run"),
        ("status",),
        ("status", "failures"),
        ("audit",),
    ):
        proc = run_cli("--read-only", *args)
        assert proc.returncode == 0, (args, proc.stderr)


# -- a role that may only SELECT -----------------------------------------------------------
@pytest.mark.parametrize(("name", "action"), ACTIONS, ids=[a[0] for a in ACTIONS])
def test_every_action_refuses_for_a_select_only_role(
    select_only_dsn: str,
    conn: Conn,
    jobs: dict[str, uuid.UUID],
    name: str,
    action: Callable[[Conn], Any],
) -> None:
    with psycopg.connect(select_only_dsn, autocommit=True) as ro:
        with pytest.raises(ReadOnlyError, match="may only read the queue") as refused:
            action(ro)
        role = ro.info.user
    assert role in str(refused.value)
    assert unchanged(conn, jobs)


def test_a_select_only_role_still_reads_and_previews(
    select_only_dsn: str, jobs: dict[str, uuid.UUID]
) -> None:
    with psycopg.connect(select_only_dsn, autocommit=True) as ro:
        assert ops.CANCEL.preview(ro, Selection(task_type="t.a")).ids == (jobs["waiting"],)
        assert read.overview(ro).statuses.counts[JobStatus.FAULTED] == 1


def test_the_cli_refuses_clearly_for_a_select_only_role(
    run_cli: CLI, select_only_dsn: str, conn: Conn, jobs: dict[str, uuid.UUID]
) -> None:
    proc = run_cli(
        "--dsn", select_only_dsn, "--no-setup", "requeue", "--status", "5", "--yes", use_dsn=False
    )

    assert proc.returncode == 5, proc.stdout + proc.stderr
    assert "may only read the queue" in proc.stderr
    assert unchanged(conn, jobs)
