"""Connection options work before or after the command name, as people type them."""

from __future__ import annotations

from skconsole.cli.app import hoist_connection_options


def test_connection_options_after_the_command_move_before_it() -> None:
    argv = ["worker", "--tasks", "m", "--dsn", "postgresql://h/db", "--read-only"]

    assert hoist_connection_options(argv) == [
        "--dsn",
        "postgresql://h/db",
        "--read-only",
        "worker",
        "--tasks",
        "m",
    ]


def test_an_option_given_twice_keeps_its_order_so_the_later_one_wins() -> None:
    argv = ["--dsn=a", "status", "--dsn", "b", "--no-setup", "--data-dir=/d"]

    assert hoist_connection_options(argv) == [
        "--dsn=a",
        "--dsn",
        "b",
        "--no-setup",
        "--data-dir=/d",
        "status",
    ]


def test_arguments_after_a_double_dash_are_left_alone() -> None:
    argv = ["enqueue", "t", "--", "--dsn", "x"]

    assert hoist_connection_options(argv) == argv


def test_a_trailing_value_option_without_its_value_is_left_for_click_to_report() -> None:
    assert hoist_connection_options(["status", "--dsn"]) == ["status", "--dsn"]
