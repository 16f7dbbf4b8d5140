"""``skconsole status failures`` fits an 80-column terminal (ids whole, the signature on
one line); ``--wide`` shows every column. The real CLI, as a process."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from typing import Any

import psycopg
import pytest

from skconsole.core.signature import error_signature
from skconsole.read import group_id

from .test_ops import TIMEOUT_A, add_job

Conn = psycopg.Connection[Any]
CLI = Callable[..., subprocess.CompletedProcess[str]]

LONG_ERROR = (
    "psycopg.errors.SerializationFailure: could not serialize access due to concurrent update "
    "while processing order 1234 for customer 98765 in warehouse 'north-east' after retrying "
    "the payment provider call that timed out at https://payments.example.com/v2/charges/ch_9f"
)
ALL_COLUMNS = ("id", "jobs", "statuses", "types", "first seen", "last seen", "signature")


def seed(conn: Conn) -> str:
    """Two failure groups, one with a long signature; returns that group's id."""
    for status in (4, 5, 6):
        add_job(conn, status, task_type="billing.charge_customer_card", error=LONG_ERROR)
    add_job(conn, 6, task_type="emails.send", error=TIMEOUT_A)
    return group_id(error_signature(LONG_ERROR))


def test_status_failures_at_80_columns_fits_and_keeps_the_group_id_whole(
    run_cli: CLI, conn: Conn
) -> None:
    gid = seed(conn)

    proc = run_cli("status", "failures", env={"COLUMNS": "80"})

    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert all(len(line) <= 80 for line in lines), proc.stdout
    [row] = [line for line in lines if gid in line]
    assert "psycopg.errors.SerializationFailure" in row and "…" in row
    header = next(line for line in lines if "signature" in line)
    assert "id" in header and "jobs" in header and "first seen" not in header


def test_status_failures_with_wide_shows_every_column_and_the_whole_signature(
    run_cli: CLI, conn: Conn
) -> None:
    gid = seed(conn)

    proc = run_cli("status", "failures", "--wide", env={"COLUMNS": "80"})

    assert proc.returncode == 0, proc.stderr
    header = next(line for line in proc.stdout.splitlines() if "signature" in line)
    assert all(column in header for column in ALL_COLUMNS), header
    [row] = [line for line in proc.stdout.splitlines() if gid in line]
    assert error_signature(LONG_ERROR) in row
    assert "billing.charge_customer_card" in row


def test_a_wide_terminal_shows_every_column_without_wide(run_cli: CLI, conn: Conn) -> None:
    seed(conn)

    proc = run_cli("status", "failures", env={"COLUMNS": "400"})

    assert proc.returncode == 0, proc.stderr
    header = next(line for line in proc.stdout.splitlines() if "signature" in line)
    assert all(column in header for column in ALL_COLUMNS), header
    assert "…" not in proc.stdout


def test_the_json_document_is_the_same_whatever_the_width(run_cli: CLI, conn: Conn) -> None:
    seed(conn)

    narrow = run_cli("status", "failures", "--json", env={"COLUMNS": "40"})
    wide = run_cli("status", "failures", "--json", env={"COLUMNS": "400"})

    assert narrow.returncode == 0, narrow.stderr
    assert narrow.stdout == wide.stdout


def test_a_table_piped_without_columns_keeps_every_cell_whole(
    run_cli: CLI, conn: Conn, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`skconsole status failures | grep warehouse` finds what a terminal would cut."""
    monkeypatch.delenv("COLUMNS", raising=False)
    gid = seed(conn)

    proc = run_cli("status", "failures")

    assert proc.returncode == 0, proc.stderr
    [row] = [line for line in proc.stdout.splitlines() if gid in line]
    assert error_signature(LONG_ERROR) in row and "…" not in row


@pytest.mark.parametrize(
    ("command", "key", "line"),
    [
        (("limit",), "limits", "no task type is limited"),
        (("audit",), "entries", "no operator action recorded yet"),
        (("retention",), "policies", "no retention policy"),
        (("slo",), "slos", "no task type has an SLO"),
        (("find-index", "list"), "indexes", "no search index"),
    ],
)
def test_an_empty_listing_prints_its_line_alone_and_an_empty_json_list(
    run_cli: CLI, conn: Conn, command: tuple[str, ...], key: str, line: str
) -> None:
    shown = run_cli(*command)
    as_json = run_cli(*command, "--json")

    assert shown.returncode == as_json.returncode == 0, shown.stderr + as_json.stderr
    assert shown.stdout.startswith(line)
    assert "┃" not in shown.stdout and "│" not in shown.stdout  # no table drawn
    assert json.loads(as_json.stdout) == {key: []}
