"""``why`` names its fixes as operator actions (``ops.ACTIONS``) and their arguments; the
CLI offers each as a command line, the console with the key that runs it there."""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

from skconsole import ops
from skconsole.read import Fix
from skconsole.tui.actions import fix_key, offer_with_key

WHY_SOURCE = Path(str(importlib.import_module("skconsole.read.why").__file__)).read_text(
    encoding="utf-8"
)


def _fix_actions() -> set[str]:
    """Every action name a ``Fix(...)`` in read/why.py is made with."""
    return {
        node.args[0].value
        for node in ast.walk(ast.parse(WHY_SOURCE))
        if isinstance(node, ast.Call)
        and getattr(node.func, "id", None) == "Fix"
        and node.args
        and isinstance(node.args[0], ast.Constant)
    }


def test_every_fix_of_why_is_an_operator_action() -> None:
    names = {a.name for a in ops.ACTIONS}
    assert _fix_actions() and _fix_actions() <= names


def test_every_fix_of_why_has_a_key_in_the_console() -> None:
    assert [a for a in sorted(_fix_actions()) if fix_key(Fix(a)) is None] == []


def test_the_read_model_names_no_console_key_or_panel() -> None:
    assert "/ key" not in WHY_SOURCE and "panel)" not in WHY_SOURCE


def test_a_fix_reads_as_a_command_line_and_in_the_console_with_its_key() -> None:
    now = Fix("bump", ("--now", "--id", "0f1e"))

    assert now.command() == "skconsole bump --now --id 0f1e"
    assert offer_with_key(now) == "skconsole bump --now --id 0f1e / key N (depth panel)"
    assert offer_with_key(Fix("bump", ("--to", "0", "--id", "0f1e"))).endswith(
        "/ key B (depth panel)"
    )
    assert offer_with_key(Fix("resume", ("t.a",))) == "skconsole resume t.a / key P (depth panel)"


def test_a_fix_argument_from_the_database_is_quoted_for_a_shell() -> None:
    assert Fix("resume", ("t; rm -rf /",)).command() == "skconsole resume 't; rm -rf /'"
