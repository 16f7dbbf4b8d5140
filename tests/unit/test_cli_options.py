"""Connection options work before or after the command name, as people type them."""

from __future__ import annotations

import pytest

from skconsole.cli.app import hoist_connection_options


@pytest.mark.parametrize(
    ("argv", "hoisted"),
    [
        pytest.param(
            ["worker", "--tasks", "m", "--dsn", "postgresql://h/db", "--read-only"],
            ["--dsn", "postgresql://h/db", "--read-only", "worker", "--tasks", "m"],
            id="connection-options-after-the-command-move-before-it",
        ),
        pytest.param(
            ["--dsn=a", "status", "--dsn", "b", "--no-setup", "--data-dir=/d"],
            ["--dsn=a", "--dsn", "b", "--no-setup", "--data-dir=/d", "status"],
            id="an-option-given-twice-keeps-its-order-so-the-later-one-wins",
        ),
        pytest.param(
            ["enqueue", "t", "--", "--dsn", "x"],
            ["enqueue", "t", "--", "--dsn", "x"],
            id="arguments-after-a-double-dash-are-left-alone",
        ),
        pytest.param(
            ["status", "--dsn"],
            ["status", "--dsn"],
            id="a-trailing-value-option-without-its-value-is-left-for-click-to-report",
        ),
    ],
)
def test_connection_options_are_hoisted_before_the_command(
    argv: list[str], hoisted: list[str]
) -> None:
    assert hoist_connection_options(argv) == hoisted
