"""``skconsole`` without a command opens the console; ``skconsole demo`` the demo."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from skconsole.cli import full_app
from skconsole.core.errors import ConfigError
from skconsole.db.queues import QueueSpec
from skconsole.demo import run as demo_run
from skconsole.tui import launch


@pytest.fixture
def calls(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, Any]]:
    seen: list[tuple[str, Any]] = []
    monkeypatch.setattr(launch, "run_console", lambda opts: seen.append(("console", opts)) or 0)
    monkeypatch.setattr(
        demo_run,
        "run_demo",
        lambda dsn, data_dir, **kw: seen.append(("demo", (dsn, data_dir, kw))) or 0,
    )
    monkeypatch.delenv("SKCONSOLE_DSN", raising=False)
    monkeypatch.delenv("SKCONSOLE_READ_ONLY", raising=False)
    return seen


def test_no_command_opens_the_console_with_its_options(calls: list[tuple[str, Any]]) -> None:
    args = ["--dsn", "postgresql://x@h/db", "--refresh", "5s", "--tasks", "m.t", "--workers", "3"]
    result = CliRunner().invoke(full_app(), args)
    assert result.exit_code == 0, result.output
    [(what, opts)] = calls
    assert what == "console"
    assert (opts.dsn, opts.refresh, opts.tasks, opts.workers) == (
        "postgresql://x@h/db",
        5.0,
        "m.t",
        3,
    )
    assert not opts.setup and not opts.read_only  # the console creates nothing unless told


def test_read_only_and_setup_reach_the_console(calls: list[tuple[str, Any]]) -> None:
    result = CliRunner().invoke(full_app(), ["--read-only", "--setup"])
    assert result.exit_code == 0, result.output
    [(_, opts)] = calls
    assert opts.read_only and opts.setup and opts.refresh == 2.0


def test_demo_ignores_a_dsn_from_the_environment(
    calls: list[tuple[str, Any]], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("SKCONSOLE_DSN", "postgresql://prod@db/queue")
    result = CliRunner().invoke(full_app(), ["--data-dir", str(tmp_path), "demo", "--rate", "1"])
    assert result.exit_code == 0, result.output
    [(what, (dsn, data_dir, kw))] = calls
    assert what == "demo" and dsn is None and data_dir == tmp_path and kw["rate"] == 1.0


def test_demo_uses_an_explicit_dsn(calls: list[tuple[str, Any]]) -> None:
    result = CliRunner().invoke(full_app(), ["--dsn", "postgresql://me@h/scratch", "demo"])
    assert result.exit_code == 0, result.output
    [(_, (dsn, _, _))] = calls
    assert dsn == "postgresql://me@h/scratch"


def test_repeated_dsns_open_the_console_of_several_queues(calls: list[tuple[str, Any]]) -> None:
    args = ["--dsn", "postgresql://w@db1/billing", "--dsn", "postgresql://w@db2/emails"]
    result = CliRunner().invoke(full_app(), args)
    assert result.exit_code == 0, result.output
    [(what, opts)] = calls
    assert what == "console" and opts.dsn is None
    assert [(q.name, q.dsn) for q in opts.queues] == [
        ("billing@db1", "postgresql://w@db1/billing"),
        ("emails@db2", "postgresql://w@db2/emails"),
    ]


def test_one_dsn_opens_the_console_of_one_queue(calls: list[tuple[str, Any]]) -> None:
    result = CliRunner().invoke(full_app(), ["--dsn", "postgresql://w@db1/billing"])
    assert result.exit_code == 0, result.output
    [(_, opts)] = calls
    assert opts.dsn == "postgresql://w@db1/billing" and opts.queues == ()


def test_an_embedded_engine_is_refused_beside_several_queues() -> None:
    queues = tuple(QueueSpec(n, f"postgresql://h/{n}") for n in ("a", "b"))
    with pytest.raises(ConfigError, match="--tasks runs an engine on one queue"):
        launch.run_console(launch.ConsoleOptions(queues=queues, tasks="m.t"))
