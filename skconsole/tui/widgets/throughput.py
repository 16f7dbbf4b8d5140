"""The trend box beside queue depth: total waiting and jobs finished per minute."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import Vertical
from textual.content import Content
from textual.widgets import Label, Sparkline

from skconsole.core.status import JobStatus
from skconsole.tui.formatting import fmt_count
from skconsole.tui.model import Snapshot, Trends

SHOWN_STATUSES = (
    JobStatus.PROCESSED,
    JobStatus.ERROR,
    JobStatus.FAULTED,
    JobStatus.FATAL,
    JobStatus.CANCELLED,
)


class ThroughputBox(Vertical):
    """Two Sparklines (waiting jobs per refresh, finished per minute) and status counts."""

    def __init__(self) -> None:
        super().__init__(id="throughput", classes="panel")
        self.border_title = "Trend"

    def compose(self) -> ComposeResult:
        yield Label("", id="tp-waiting-label", classes="tp-label")
        yield Sparkline([], id="tp-waiting")
        yield Label("", id="tp-done-label", classes="tp-label")
        yield Sparkline([], id="tp-done")
        yield Label("", id="tp-failed-label", classes="tp-label")
        yield Sparkline([], id="tp-failed")
        yield Label("", id="tp-statuses")

    def show_snapshot(self, snapshot: Snapshot) -> None:
        """Waiting history and status counts: every refresh."""
        waiting = snapshot.waiting
        self.query_one("#tp-waiting-label", Label).update(
            Content(f"waiting {fmt_count(waiting[-1] if waiting else 0, snapshot.depth_estimated)}")
        )
        self.query_one("#tp-waiting", Sparkline).data = list(waiting) or [0]
        counts = snapshot.statuses.counts
        estimated = snapshot.statuses.estimated  # the planner's estimates: "≈3.87M"
        if snapshot.past_notes:
            self.query_one("#tp-statuses", Label).update(
                Content("jobs per status: not kept (the past keeps counts per minute)")
            )
            return
        self.query_one("#tp-statuses", Label).update(
            Content(
                " · ".join(
                    f"{s.label} {fmt_count(counts.get(s, 0), s in estimated)}"
                    for s in SHOWN_STATUSES
                )
            )
        )

    def show_trends(self, trends: Trends) -> None:
        """Per-minute lines: on their own, slower cycle."""
        done = trends.processed[-1] if trends.processed else 0
        self.query_one("#tp-done-label", Label).update(Content(f"finished per minute {done:,}"))
        self.query_one("#tp-done", Sparkline).data = list(trends.processed) or [0]
        failed = trends.failed[-1] if trends.failed else 0
        self.query_one("#tp-failed-label", Label).update(Content(f"failed per minute {failed:,}"))
        self.query_one("#tp-failed", Sparkline).data = list(trends.failed) or [0]
