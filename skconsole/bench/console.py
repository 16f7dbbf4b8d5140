"""The console's memory and refresh time on a big queue (a benchmark, not a test).

    python -m skconsole.bench.console --dsn postgresql://postgres@127.0.0.1:5432/skconsole_bench \\
        [--cycles 30] [--interval 0.5]

Runs the real console headless (120x40) against the DSN with a read-only
session, lets it refresh ``--cycles`` times, opens the biggest failure group
and one of its jobs, and prints the resident memory (VmRSS, and VmHWM: the
peak), the first load (from start to the first snapshot on screen, and to the
failure groups on screen), and the time of each refresh cycle: the database
reads in the worker thread, and the widget update on the UI thread. The
failure groups are read on their own cadence (``failure_groups_read``, with
its ``cadence_s``), never inside a refresh. Seed a big database first with
``python -m skconsole.bench.read_models`` (1M queued, 5M results).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import time
from collections.abc import Callable
from typing import Any, TypeVar

from skconsole.bench.stats import ms_stats
from skconsole.core.status import JobStatus
from skconsole.db.connect import Database
from skconsole.tui import cadences
from skconsole.tui.app import ConsoleApp
from skconsole.tui.database_source import DatabaseSource
from skconsole.tui.model import FailureGroups, Snapshot, Trends, Windows
from skconsole.tui.reads import Read
from skconsole.tui.screens.group_jobs import GroupJobsScreen
from skconsole.tui.screens.job_detail import JobDetailScreen


def memory_mb() -> dict[str, float]:
    """Resident set size now and at its peak, from /proc/self/status (Linux)."""
    out = {}
    with open("/proc/self/status", encoding="ascii") as f:
        for line in f:
            key, _, value = line.partition(":")
            if key in ("VmRSS", "VmHWM"):
                out[key] = int(value.split()[0]) / 1024.0
    return out


T = TypeVar("T")


class _Recording(DatabaseSource):
    """The real source, keeping every cycle's per-read-model timings."""

    def __init__(self, db: Database) -> None:
        super().__init__(db)
        self.cycles: list[tuple[tuple[str, float], ...]] = []
        self.trend_reads_ms: list[float] = []
        self.failure_reads_ms: list[float] = []
        self.window_reads_ms: list[float] = []

    def read(self, request: Read[T]) -> T:
        started = time.perf_counter()
        answer = super().read(request)
        if isinstance(answer, Snapshot):
            self.cycles.append(answer.timings)
        elif isinstance(answer, FailureGroups):
            self.failure_reads_ms.append(answer.read_ms)
        elif isinstance(answer, Windows):
            self.window_reads_ms.append(answer.read_ms)
        elif isinstance(answer, Trends):
            self.trend_reads_ms.append((time.perf_counter() - started) * 1000.0)
        return answer


async def _wait(app: ConsoleApp, pilot: Any, predicate: Any, timeout: float) -> float:
    started = time.perf_counter()
    while not predicate():
        if time.perf_counter() - started > timeout:
            raise TimeoutError("the console did not get there in time")
        await pilot.pause(0.02)
    return (time.perf_counter() - started) * 1000.0


def _record_loaded(screen_class: Any, marks: dict[str, float], name: str) -> None:
    """Note when a drill-down screen has its data on screen (not when the pilot returns)."""
    original = screen_class._loaded

    def loaded(self: Any, data: Any) -> None:
        original(self, data)
        marks[name] = time.perf_counter()

    screen_class._loaded = loaded


#: the drill-down timed: from the failures panel to a group's jobs, then to one job
#: (each screen, its name in the result, and the attribute that holds its data)
DRILL_DOWN = ((GroupJobsScreen, "group_jobs", "jobs"), (JobDetailScreen, "job_detail", "detail"))


def _showing(app: ConsoleApp, screen_class: Any, attr: str) -> Callable[[], bool]:
    """Whether the console shows a ``screen_class`` screen with its data loaded."""
    return lambda: isinstance(app.screen, screen_class) and getattr(app.screen, attr) is not None


async def measure(dsn: str, cycles: int, interval: float) -> dict[str, Any]:
    before = memory_mb()
    source = _Recording(Database(dsn, read_only=True, application_name="skconsole-bench"))
    app = ConsoleApp(source, refresh_interval=interval)
    result: dict[str, Any] = {"rss_before_mb": round(before["VmRSS"], 1)}
    async with app.run_test(size=(120, 40)) as pilot:
        first = await _wait(app, pilot, lambda: app.snapshot is not None, 120)
        result["first_load_ms"] = round(first, 1)
        groups = await _wait(app, pilot, lambda: app.failure_groups is not None, 120)
        result["failure_groups_shown_ms"] = round(first + groups, 1)
        await _wait(app, pilot, lambda: app.refresh_count >= cycles, cycles * (interval + 30))
        snap = app.snapshot
        assert snap is not None
        result["shown"] = {
            "types": len(snap.depth),
            "waiting": sum(d.ready + d.scheduled for d in snap.depth),
            "failure_groups": len(snap.failures),
            "failed_jobs": snap.failed_jobs,
            "in_flight": len(snap.inflight),
            "statuses": {JobStatus.label_of(s): n for s, n in sorted(snap.statuses.counts.items())},
            "estimated": {
                "depth": snap.depth_estimated,
                "statuses": [JobStatus.label_of(s) for s in snap.statuses.estimated],
            },
        }
        per_model: dict[str, list[float]] = {}
        for cycle in source.cycles[1:]:
            for name, ms in cycle:
                per_model.setdefault(name, []).append(ms)
        result["reads_ms"] = {k: ms_stats(v) for k, v in per_model.items()}
        result["failure_groups_read"] = {
            "cadence_s": max(cadences.FAILURES_EVERY_S, interval),
            **ms_stats(source.failure_reads_ms),
        }
        result["windows_read"] = {
            "cadence_s": max(cadences.WINDOWS_EVERY_S, interval),
            **ms_stats(source.window_reads_ms),
        }
        result["trends_read"] = {
            "cadence_s": cadences.TRENDS_EVERY_S,
            **ms_stats(source.trend_reads_ms),
        }
        marks: dict[str, float] = {}
        for screen_class, name, _attr in DRILL_DOWN:
            _record_loaded(screen_class, marks, name)
        await pilot.press("3")
        drilldown: dict[str, float] = {}
        for screen_class, name, attr in DRILL_DOWN:
            started = time.perf_counter()
            await pilot.press("enter")
            await _wait(app, pilot, _showing(app, screen_class, attr), 60)
            drilldown[name] = round((marks[name] - started) * 1000.0, 1)
        result["drilldown_to_data_ms"] = drilldown
        reads = list(app.refresh_times_ms)
        applies = list(app.apply_times_ms)
        result["refresh_read"] = ms_stats(reads[1:])  # the first one also connects
        result["refresh_apply_ui"] = ms_stats(applies[1:])
        result["refresh_total"] = ms_stats(
            [r + a for r, a in zip(reads[1:], applies[1:], strict=False)]
        )
        after = memory_mb()
        result["rss_after_mb"] = round(after["VmRSS"], 1)
        result["rss_peak_mb"] = round(after["VmHWM"], 1)
    source.close()
    return result


def summary(result: dict[str, Any]) -> str:
    """The figures that matter, in two lines."""
    total = result["refresh_total"]
    groups = result["failure_groups_read"]
    return (
        f"first load {result['first_load_ms']:.0f} ms (failure groups on screen at"
        f" {result['failure_groups_shown_ms']:.0f} ms) · refresh (read + UI) median"
        f" {total['median_ms']:.0f}, p95 {total['p95_ms']:.0f}, max {total['max_ms']:.0f} ms"
        f" over {total['n']}\nfailure groups read median {groups.get('median_ms', 0):.0f},"
        f" max {groups.get('max_ms', 0):.0f} ms ({groups.get('n', 0)} reads),"
        f" every {groups['cadence_s']:g} s, not in the refresh"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dsn", required=True)
    parser.add_argument("--cycles", type=int, default=30)
    parser.add_argument("--interval", type=float, default=0.5)
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args()
    result = asyncio.run(measure(args.dsn, args.cycles, args.interval))
    if args.json:
        print(json.dumps(result))
        return
    print(json.dumps(result, indent=2))
    print(summary(result))


if __name__ == "__main__":
    main()
