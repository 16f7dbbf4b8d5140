"""Fixtures of the browser face: ``skconsole serve`` as a process, a real Chromium.

The root fixtures give the database (``dsn``, ``db``). A served console is a
real ``skconsole serve`` process (``serve``); the browser is Debian's Chromium
(``/usr/bin/chromium``) driven by Playwright, whose own browser download is not
used. What the console draws is read from the websocket's frames
(:class:`~skconsole.web.terminal_text.TerminalText`): xterm.js paints on a
canvas, so no DOM node holds its words.
"""

from __future__ import annotations

import asyncio
import os
import queue
import re
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from skconsole.db.connect import Database
from skconsole.producer import Producer
from skconsole.worker.engine import Engine, WorkerConfig
from tests.conftest import ROOT, skconsole_cmd
from tests.support.tasks_console import failed_and_ok, tasks

CHROMIUM = "/usr/bin/chromium"
#: how long a served console may take to draw, or to answer a key (it reads the database)
SCREEN_TIMEOUT_S = 30.0


@pytest.fixture
def seeded(db: Database) -> Database:
    """3 jobs failed with a timeout (one group), 2 declined (another), 2 processed."""
    with Producer(db) as p:
        p.post_many(failed_and_ok(3, 2, 2))
    config = WorkerConfig(concurrency=4, burst=True, poll_interval=0.1, reap=False)
    # a thread of its own: Playwright's sync API keeps an event loop running in this one
    with ThreadPoolExecutor(1) as pool:
        pool.submit(asyncio.run, Engine(db, tasks, config).run()).result()
    return db


@dataclass
class Served:
    """A running ``skconsole serve``: its process, its address, and the URL it printed
    with its token ("" when the token is a --token-file's: the URL does not show it)."""

    process: subprocess.Popen[str]
    base: str = ""
    url: str = ""
    output: list[str] = field(default_factory=list)


def _read_lines(process: subprocess.Popen[str], lines: queue.Queue[str | None]) -> None:
    assert process.stdout is not None
    for line in process.stdout:
        lines.put(line)
    lines.put(None)


@pytest.fixture
def serve(dsn: str, tmp_path: Path) -> Iterator[Callable[..., Served]]:
    """Start ``skconsole --dsn DSN serve --port 0 ARGS``; returns once it printed its URL.
    Every server started is stopped (SIGTERM) at the end."""
    started: list[Served] = []

    def start(*args: str) -> Served:
        env = {**os.environ, "XDG_STATE_HOME": str(tmp_path / "state")}
        process = subprocess.Popen(
            skconsole_cmd("--dsn", dsn, "serve", "--port", "0", *args),
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            env=env,
            cwd=ROOT,
        )
        served = Served(process)
        started.append(served)
        lines: queue.Queue[str | None] = queue.Queue()
        threading.Thread(target=_read_lines, args=(process, lines), daemon=True).start()
        deadline = time.monotonic() + 60
        while not served.base:
            line = lines.get(timeout=max(0.0, deadline - time.monotonic()))
            if line is None:
                raise AssertionError("skconsole serve ended:\n" + "".join(served.output))
            served.output.append(line)
            if found := re.search(r"open (http://[^\s?]+)\?token=(\S+)", line):
                served.base = found.group(1)
                if not found.group(2).startswith("<"):
                    served.url = found.group(0).removeprefix("open ")
        return served

    yield start
    for served in started:
        served.process.terminate()
        served.process.wait(30)


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """One Chromium for the module's tests (each test opens a page of its own)."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        chromium = pw.chromium.launch(executable_path=CHROMIUM)
        yield chromium
        chromium.close()


class ConsoleTab:
    """A browser tab on a served console: every request it made, what its websocket was
    sent (as text), and keys typed into it."""

    def __init__(self, page: Any, url: str) -> None:
        from skconsole.web.terminal_text import TerminalText

        self.page = page
        self.screen = TerminalText()
        self.requests: list[str] = []
        page.on("request", lambda request: self.requests.append(request.url))
        # on before the first frame arrives: nothing drawn is missed
        page.on("websocket", lambda socket: socket.on("framereceived", self.screen.feed))
        with page.expect_websocket() as opened:
            page.goto(url)
        self.socket = opened.value

    def wait_for(self, words: str, since: int = 0) -> None:
        """Until ``words`` were drawn (after the mark ``since``)."""

        def there(_: object = None) -> bool:
            return words in self.screen.since(since)

        if not there():
            self.socket.wait_for_event(
                "framereceived", predicate=there, timeout=SCREEN_TIMEOUT_S * 1000
            )

    def press(self, *keys: str) -> int:
        """Type ``keys`` into the console (as after a click on it); returns the mark of what
        was drawn before them."""
        mark = self.screen.mark()
        self.page.focus(".xterm-helper-textarea")
        for key in keys:
            self.page.keyboard.press(key)
        return mark


@pytest.fixture
def open_tab(browser: Any) -> Iterator[Callable[[str], ConsoleTab]]:
    """Open a URL in a new tab of the module's browser; the tabs are closed at the end."""
    pages: list[Any] = []

    def open_url(url: str) -> ConsoleTab:
        page = browser.new_page(viewport={"width": 1280, "height": 800})
        pages.append(page)
        return ConsoleTab(page, url)

    yield open_url
    for page in pages:
        page.close()
