"""Task handlers for the circuit-breaker fault tests (``--tasks tests.support.tasks_breaker``).

``partner.call`` (payload ``{"partner": NAME}``) logs every execution as it starts, one
line ``<task_id> <partner>`` in ``$SKTEST_LOG_DIR/<pid>.runs`` (flushed at once), so a
test counts what really ran, whatever the database says; it then times out (raises
``TimeoutError("partner timed out")``) for the partners named in
``$SKTEST_FAILING_PARTNERS`` (comma-separated) and succeeds for the others. Its retries
wait 0.2 s and it has 1,000 attempts: a job held back stays waiting, never faulted.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from skconsole.worker.registry import JobContext, TaskOptions, TaskRegistry

tasks = TaskRegistry(TaskOptions(max_attempts=1_000, backoff=0.2, timeout=10.0))
FAILING = frozenset(p for p in os.environ.get("SKTEST_FAILING_PARTNERS", "").split(",") if p)
SIGNATURE = "TimeoutError: partner timed out"


def _log(line: str) -> None:
    folder = os.environ.get("SKTEST_LOG_DIR")
    if folder:
        with (Path(folder) / f"{os.getpid()}.runs").open("a", encoding="utf-8") as f:
            f.write(line + "\n")
            f.flush()


@tasks.task("partner.call")
def call(payload: dict[str, Any], ctx: JobContext) -> None:
    partner = str(payload["partner"])
    _log(f"{ctx.task_id} {partner}")
    if partner in FAILING:
        raise TimeoutError("partner timed out")


def runs(log_dir: Path) -> list[tuple[str, str]]:
    """Every execution logged: (task id, partner)."""
    out = []
    for path in sorted(log_dir.glob("*.runs")):
        for line in path.read_text(encoding="utf-8").splitlines():
            task_id, partner = line.split(" ", 1)
            out.append((task_id, partner))
    return out
