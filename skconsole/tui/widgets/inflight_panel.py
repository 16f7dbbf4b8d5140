"""Panel 2: jobs being processed now, hung ones first; each with what is known of
its worker's liveness (sk_inflight_tasks: the one definition of "hung").

The state ("HUNG: silent for 95 s, ...") is what an operator reads this panel for,
so it comes right after the job: on an 80-column terminal the columns after it go
under the table's scrollbar, never the state's first words.

The hung are a part of the running, and the words say so: "22 running, 2 of them
hung" in the title, "22 (2 HUNG)" on the tab. A job a reap put back (its worker's
lease had lapsed) leaves the list; a line under it says so for
:data:`~skconsole.tui.model.REAPED_SHOWN_S` ("↺ 3 reaped at 03:09 UTC, from web-9 pid
5120, its lease lapsed: back in the queue"), from the reaped attempts the database
records (:mod:`skconsole.read.reaped`)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC

from textual.app import ComposeResult
from textual.content import Content
from textual.widgets import Static

from skconsole.core.durations import format_limit
from skconsole.core.status import JobStatus
from skconsole.core.text import printable
from skconsole.read import InflightJob, ReapedAttempt
from skconsole.tui.formatting import format_age
from skconsole.tui.model import REAPED_SHOWN_S, Snapshot
from skconsole.tui.opening import Opening, job
from skconsole.tui.widgets.panel import Panel, console_columns
from skconsole.views.inflight import COLUMNS

#: the reaps a panel tells of, newest first (one line each); the rest are counted
REAPS_SHOWN = 2

#: what a reap left a job as, in words
_AFTER_REAP = {
    JobStatus.ERROR: "back in the queue",
    JobStatus.UNPROCESSED: "back in the queue",
    JobStatus.FAULTED: "Faulted past its attempts",
    JobStatus.CANCELLED: "Cancelled as asked",
}


def reaped_lines(reaped: Sequence[ReapedAttempt], now: float) -> list[str]:
    """The reaps of ``reaped`` (newest first), one line per worker and minute: "↺ 3
    reaped at 03:09 UTC (3m 00s ago) from web-9 pid 5120, its lease lapsed: back in the
    queue"; past :data:`REAPS_SHOWN` of them, a line that counts the rest."""
    groups: dict[tuple[str, str], list[ReapedAttempt]] = {}
    for r in reaped:
        minute = r.reaped_at.astimezone(UTC).strftime("%H:%M UTC")
        who = f"{r.host} pid {r.pid}" if r.host else "a worker no longer registered"
        groups.setdefault((minute, who), []).append(r)
    lines = []
    for (minute, who), rows in list(groups.items())[:REAPS_SHOWN]:
        age = format_age(max(now - rows[0].reaped_at.timestamp(), 0.0))
        after: dict[str, int] = {}
        for r in rows:
            words = _AFTER_REAP.get(r.status, r.status.label)
            after[words] = after.get(words, 0) + 1
        what = (
            next(iter(after))
            if len(after) == 1
            else ", ".join(f"{n} {words}" for words, n in after.items())
        )
        lines.append(
            f"↺ {len(rows)} reaped at {minute} ({age} ago) from {who}, its lease lapsed: {what}"
        )
    more = sum(len(rows) for rows in list(groups.values())[REAPS_SHOWN:])
    if more:
        lines.append(f"↺ {more:,} more reaped before, in the last {format_limit(REAPED_SHOWN_S)}")
    return lines


class InflightPanel(Panel):
    scope = "inflight"
    title = "In flight"
    COLUMNS = console_columns(COLUMNS)
    opens = "the running job"

    def compose(self) -> ComposeResult:
        yield from super().compose()
        yield Static("", id="inflight-reaped")

    def on_mount(self) -> None:
        super().on_mount()
        self.query_one("#inflight-reaped", Static).display = False

    def items(self, snapshot: Snapshot) -> Sequence[InflightJob]:
        """Hung jobs first, then the longest running."""
        return sorted(
            snapshot.inflight, key=lambda r: (not r.hung, -(r.running_s or 0.0), str(r.task_id))
        )

    def row_key(self, item: InflightJob) -> str:
        return str(item.task_id)

    def opening(self, key: str, snapshot: Snapshot) -> Opening | None:
        return job(key)

    def show_snapshot(self, snapshot: Snapshot) -> None:
        super().show_snapshot(snapshot)
        lines = reaped_lines(snapshot.reaped, snapshot.taken_at)
        notice = self.query_one("#inflight-reaped", Static)
        notice.display = bool(lines)
        notice.update(Content("\n".join(printable(line) for line in lines)))

    def tab_note(self, snapshot: Snapshot) -> str | None:
        hung = snapshot.hung_count
        return f"{len(snapshot.inflight):,}" + (f" ({hung} HUNG)" if hung else "")

    def brief_note(self, snapshot: Snapshot) -> str | None:
        hung = snapshot.hung_count
        return f"{hung} HUNG" if hung else f"{len(snapshot.inflight):,}"

    def alarm(self, snapshot: Snapshot) -> bool:
        return snapshot.hung_count > 0

    def summarize(self, snapshot: Snapshot) -> str:
        hung = snapshot.hung_count
        text = f"{len(snapshot.inflight):,} running"
        if not hung:
            return text
        return f"{text}, {hung:,} of them hung"
