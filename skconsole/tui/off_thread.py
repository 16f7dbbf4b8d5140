"""One read off the UI thread, its result or its error handed back to it.

No database call runs on the UI thread: a screen that reads once (a drill-down's
data, why a job waits, a job by its id, a requeue's error counts, a failure group's
factors) reads in a worker thread of its own, one at a time, and gets the value, or
the error, back on the UI thread. (The cadences' repeated reads are
:mod:`~skconsole.tui.polling`'s.)
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from textual.dom import DOMNode

T = TypeVar("T")


def read_off_thread(
    node: DOMNode,
    read: Callable[[], T],
    done: Callable[[T], None],
    failed: Callable[[Exception], None],
    *,
    group: str,
) -> None:
    """``read()`` in a worker thread of ``node`` (a new read of ``group`` replaces the
    last), then ``done(value)`` or ``failed(error)`` on the UI thread."""

    def work() -> None:
        try:
            value = read()
        except Exception as exc:
            node.app.call_from_thread(failed, exc)
            return
        node.app.call_from_thread(done, value)

    node.run_worker(work, thread=True, exclusive=True, group=group, exit_on_error=False)
