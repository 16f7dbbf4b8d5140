"""How quickly the browser console answers (a benchmark, not a test).

    python -m skconsole.bench.browser_keys \\
        [--server-dsn postgresql://postgres@127.0.0.1:5432/postgres] \\
        [--database skconsole_bench_keys] [--presses 20] [--refresh 2s] [--json]

Seeds a small queue of its own in ``--database`` (dropped and made again: a few task
types, two failure groups, some successes), starts ``skconsole serve`` on it, opens
the page in Debian's Chromium (``/usr/bin/chromium``, driven by Playwright, as the web
tests do) and measures, from the page's request:

- ``websocket_ms``: until the page's websocket is open (the page, its script, font);
- ``first_frame_ms``: until the console's first frame (its process started);
- ``first_data_ms``: until the depth panel shows the seeded types (the first snapshot);

then ``--presses`` times each of a few keys, each one from the key press to the frame
that draws what it opens: ``?`` (the help opens), ``?`` again (it closes, the main
screen is drawn again), ``s`` (the search opens) and ``escape`` (it closes). What the
console draws is read from the websocket's frames (:mod:`skconsole.web.terminal_text`).
Printed: the median, p95 and max of each, in milliseconds.

Timings depend on the machine being quiet: run it alone.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import queue
import re
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from skconsole.bench.seeded import fresh_database
from skconsole.bench.stats import ms_stats
from skconsole.core.errors import FatalTaskError
from skconsole.db.connect import Database
from skconsole.producer import Job, Producer
from skconsole.web.terminal_text import TerminalText
from skconsole.worker.engine import Engine, WorkerConfig
from skconsole.worker.registry import TaskOptions, TaskRegistry

CHROMIUM = "/usr/bin/chromium"
#: how long one wait (a start, a key's answer) may take before the run is given up
WAIT_S = 60.0
#: what the depth panel draws once the first snapshot is in
SEEDED_TYPE = "bench.keys.ok"
#: (key, what its answer draws): pressed in this order, ``--presses`` times
KEYS: tuple[tuple[str, str, str], ...] = (
    ("help_open", "?", "Keys and actions"),
    ("help_close", "?", "Queue depth"),
    ("search_open", "s", "payload.customer.id=42"),
    ("search_close", "Escape", "Queue depth"),
)

#: the serve command's own arguments
SERVE = ("serve", "--port", "0")

tasks = TaskRegistry(TaskOptions(max_attempts=1, backoff=0.1, timeout=10.0))


class UpstreamTimeout(Exception):
    pass


@tasks.task("bench.keys.timeout")
async def _timeout(payload: Any) -> None:
    raise UpstreamTimeout(f"timeout after {payload['n']}s")


@tasks.task("bench.keys.declined")
async def _declined(payload: Any) -> None:
    raise FatalTaskError(f"card declined for customer cus_{payload['n']:08d}")


@tasks.task(SEEDED_TYPE)
async def _ok(payload: Any) -> None:
    """Succeeds."""


def seed(server_dsn: str, database: str) -> str:
    """``database`` made again, set up, with jobs run once by a burst engine (two failure
    groups, successes) and some left waiting; its DSN."""

    dsn = fresh_database(server_dsn, database)
    db = Database(dsn)
    from skconsole.db.schema import setup_schema

    with db.connect() as conn:
        setup_schema(conn)
    with Producer(db) as p:
        p.post_many(
            [Job("bench.keys.timeout", {"n": i}) for i in range(20)]
            + [Job("bench.keys.declined", {"n": i}) for i in range(10)]
            + [Job(SEEDED_TYPE, {"i": i}) for i in range(50)]
        )
    config = WorkerConfig(concurrency=4, burst=True, poll_interval=0.1, reap=False)
    asyncio.run(Engine(db, tasks, config).run())
    with Producer(db) as p:  # waiting jobs for the depth panel
        p.post_many([Job(SEEDED_TYPE, {"i": i}) for i in range(30)])
    return dsn


@dataclass
class Serve:
    """A running ``skconsole serve``: its process and the URL it printed."""

    process: subprocess.Popen[str]
    url: str = ""
    lines: list[str] = field(default_factory=list)

    @classmethod
    def start(cls, dsn: str, refresh: str) -> Serve:
        argv = [sys.executable, "-m", "skconsole", "--dsn", dsn, "--refresh", refresh, *SERVE]
        process = subprocess.Popen(
            argv,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            env={**os.environ, "PYTHONUNBUFFERED": "1"},
        )
        served = cls(process)
        lines: queue.Queue[str | None] = queue.Queue()

        def read() -> None:
            assert process.stdout is not None
            for line in process.stdout:
                lines.put(line)
            lines.put(None)

        threading.Thread(target=read, daemon=True).start()
        deadline = time.monotonic() + WAIT_S
        while not served.url:
            line = lines.get(timeout=max(0.0, deadline - time.monotonic()))
            if line is None:
                raise SystemExit("skconsole serve ended:\n" + "".join(served.lines))
            served.lines.append(line)
            if found := re.search(r"open (http://\S+\?token=\S+)", line):
                served.url = found.group(1)
        return served

    def stop(self) -> None:
        self.process.terminate()
        self.process.wait(30)


class Screen:
    """What the websocket brought, as text, with the time each frame came."""

    def __init__(self) -> None:
        self.text = TerminalText()
        self.frames: list[float] = []

    def feed(self, payload: bytes | str) -> None:
        if isinstance(payload, bytes):
            self.frames.append(time.perf_counter())
        self.text.feed(payload)


def _until(socket: Any, there: Callable[[], bool]) -> None:
    if not there():
        socket.wait_for_event("framereceived", predicate=lambda _f: there(), timeout=WAIT_S * 1000)


def measure(url: str, presses: int, *, headless: bool = True) -> dict[str, Any]:
    """Open ``url`` in Chromium; the start's marks and each key's latencies, in ms."""
    from playwright.sync_api import sync_playwright

    screen = Screen()
    result: dict[str, Any] = {}
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, headless=headless)
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 800})
            page.on("websocket", lambda ws: ws.on("framereceived", screen.feed))
            started = time.perf_counter()
            with page.expect_websocket(timeout=WAIT_S * 1000) as opened:
                page.goto(url)
            socket = opened.value
            result["websocket_ms"] = (time.perf_counter() - started) * 1000
            _until(socket, lambda: bool(screen.frames))
            result["first_frame_ms"] = (screen.frames[0] - started) * 1000
            _until(socket, lambda: SEEDED_TYPE in screen.text.text)
            result["first_data_ms"] = (time.perf_counter() - started) * 1000
            page.focus(".xterm-helper-textarea")
            latencies: dict[str, list[float]] = {name: [] for name, _, _ in KEYS}
            for _ in range(presses):
                for name, key, drawn in KEYS:
                    mark = screen.text.mark()
                    pressed = time.perf_counter()
                    page.keyboard.press(key)
                    _until(socket, lambda d=drawn, m=mark: d in screen.text.since(m))  # type: ignore[misc]
                    latencies[name].append((time.perf_counter() - pressed) * 1000)
            result["keys"] = {name: ms_stats(values) for name, values in latencies.items()}
            result["frames"] = len(screen.frames)
        finally:
            browser.close()
    return result


def summary(result: dict[str, Any]) -> str:
    lines = [
        f"page to websocket open  {result['websocket_ms']:8.0f} ms",
        f"page to first frame     {result['first_frame_ms']:8.0f} ms",
        f"page to first data      {result['first_data_ms']:8.0f} ms",
        f"{'key':<14}{'n':>4}{'median':>10}{'p95':>10}{'max':>10}  (ms, key press to its frame)",
    ]
    for name, s in result["keys"].items():
        lines.append(
            f"{name:<14}{s['n']:>4}{s['median_ms']:>10.1f}{s['p95_ms']:>10.1f}{s['max_ms']:>10.1f}"
        )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--server-dsn",
        default=os.environ.get(
            "SKCONSOLE_BENCH_DSN", "postgresql://postgres@127.0.0.1:5432/postgres"
        ),
        help="a server's DSN; the bench makes its own --database there",
    )
    parser.add_argument("--database", default="skconsole_bench_keys")
    parser.add_argument("--presses", type=int, default=20, help="times each key is pressed")
    parser.add_argument("--refresh", default="2s", help="the consoles' --refresh")
    parser.add_argument("--headed", action="store_true", help="show the browser (needs a display)")
    parser.add_argument("--json", action="store_true", help="print the result as JSON")
    args = parser.parse_args()
    if not os.path.exists(CHROMIUM):
        raise SystemExit(f"no {CHROMIUM}: apt-get install chromium")
    dsn = seed(args.server_dsn, args.database)
    served = Serve.start(dsn, args.refresh)
    try:
        result = measure(served.url, args.presses, headless=not args.headed)
    finally:
        served.stop()
    print(json.dumps(result, indent=2) if args.json else summary(result))


if __name__ == "__main__":
    main()
