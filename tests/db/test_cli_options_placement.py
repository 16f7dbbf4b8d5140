"""Connection options after the command name, on a real command against the test server
(the rewriting of the arguments alone is tests/unit/test_cli_options.py)."""

from __future__ import annotations

import json
from typing import Any


def test_status_accepts_the_dsn_after_the_command(run_cli: Any, dsn: str) -> None:
    proc = run_cli("status", "--json", "--dsn", dsn, use_dsn=False)

    assert proc.returncode == 0, proc.stderr
    assert "statuses" in json.loads(proc.stdout)


def test_read_only_after_an_action_command_refuses_the_action(run_cli: Any) -> None:
    proc = run_cli("cancel", "--type", "t.a", "--yes", "--read-only")

    assert proc.returncode != 0
    assert "read-only" in proc.stderr
    assert "Traceback" not in proc.stderr
