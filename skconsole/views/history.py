"""The history view: jobs posted, processed and failed per minute over the last hour
(``skconsole status history``; the console draws the same minutes as its trends)."""

from __future__ import annotations

from skconsole import read
from skconsole.core.figures import fmt_int
from skconsole.read.query import Conn
from skconsole.views.registry import Table, View, ViewArgs
from skconsole.views.table import Column, figure_column

COLUMNS: tuple[Column[read.Minute], ...] = (
    Column("minute", "minute", 6, cell=lambda m, _: m.minute.strftime("%H:%M")),
    figure_column("posted", 9, lambda m, _: fmt_int(m.posted), priority=1),
    figure_column("processed", 9, lambda m, _: fmt_int(m.processed), priority=1),
    figure_column("failed", 9, lambda m, _: fmt_int(m.failed), priority=1),
)


def _read(conn: Conn, args: ViewArgs) -> read.History:
    return read.history(conn, minutes=args.minutes)


HISTORY: View[read.History] = View(
    "history",
    _read,
    read.History.as_dict,
    Table(
        COLUMNS,
        lambda h: h.minutes,
        lambda h: f"Jobs per minute, last {len(h.minutes)} min (the last minute is partial)",
    ),
)
