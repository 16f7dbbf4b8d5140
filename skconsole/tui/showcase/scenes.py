"""Named console states on fixed data: what the snapshot tests compare and the
README's screenshots show. One list, so the pictures are exactly what is tested.

Each scene builds a fresh app on :class:`~skconsole.tui.showcase.fake_source.FixedSource` with
a frozen clock, and drives it with ``prepare`` (a Pilot coroutine).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from textual.pilot import Pilot
from textual.widgets import Input, TextArea

from skconsole.ops.edit import editable_json
from skconsole.tui.app import ConsoleApp
from skconsole.tui.past_source import BundleBooks, PastBooks, PastSource
from skconsole.tui.showcase.fake_source import FixedEngine, FixedSource
from skconsole.tui.showcase.fixed_data import FrozenClock
from skconsole.tui.showcase.fixed_incident import INCIDENT_AT, FixedBooks, fixed_incident
from skconsole.tui.showcase.fixed_overview import FIXED_QUEUES
from skconsole.tui.source import Queue

SIZE = (120, 40)


#: at most this many rounds of reads set off by reads (a few are: refresh, then its followers)
SETTLE_ROUNDS = 20


async def settle(pilot: Pilot[Any]) -> None:
    """Wait until every worker finished and the screen caught up; cursors stop blinking
    (shown steadily), so a picture taken half a second later is the same picture.

    A read's result can set off another read (a refresh, then the cadences that follow
    it), so this waits until a pause leaves no worker behind, however slowly a loaded
    machine gets there, not for a fixed number of rounds."""
    for _ in range(SETTLE_ROUNDS):
        await pilot.pause()
        await pilot.app.workers.wait_for_complete()
        await pilot.pause()
        if not pilot.app.workers:
            break
    for widget in pilot.app.screen.query("Input, TextArea"):
        if isinstance(widget, Input | TextArea):
            widget.cursor_blink = False
    await pilot.pause()


@dataclass(frozen=True)
class Scene:
    name: str
    keys: tuple[str, ...] = ()
    read_only: bool = False
    offline_after_load: bool = False
    engine: bool = True
    extra: Callable[[Pilot[Any]], Awaitable[None]] | None = field(default=None, compare=False)
    #: the console of several queues (FIXED_QUEUES): the busy one, a quiet one, one down
    several: bool = False
    #: the busy queue after every worker was killed (kill -9)
    dead_workers: bool = False
    #: a failure group first seen two minutes ago (panel 3 marks it new)
    new_group: bool = False
    #: a circuit breaker open on the timeouts' group (panels 1 and 3 mark it)
    breaker: bool = False
    #: a canary-waves requeue in progress (the audit panel's rows)
    waves: bool = False
    #: a past minute: "at" (skconsole --at 02:47 on a database) or "bundle" (--bundle)
    past: str | None = None

    def build(self) -> ConsoleApp:
        if self.several:
            return self._build_several()
        if self.past is not None:
            return self._build_past(self.past)
        source = FixedSource(
            read_only=self.read_only,
            dead_workers=self.dead_workers,
            new_group=self.new_group,
            breaker=self.breaker,
            waves=self.waves,
        )
        app = ConsoleApp(
            source,
            clock=FrozenClock(),
            engine=FixedEngine() if self.engine else None,
            actor="maria",
            auto_refresh=False,
        )
        # the tab underline glides for 0.3 s of wall time; a picture taken
        # mid-glide differs from run to run
        app.animation_level = "none"
        return app

    def _build_past(self, kind: str) -> ConsoleApp:
        incident = fixed_incident()
        books: PastBooks
        if kind == "bundle":
            books = BundleBooks(incident, "incident-0247.json")
        else:
            books = FixedBooks(incident.book, "ops@db.prod.example:5432/queue")
        app = ConsoleApp(
            PastSource(books, INCIDENT_AT), clock=FrozenClock(), actor="maria", auto_refresh=False
        )
        app.animation_level = "none"
        return app

    def _build_several(self) -> ConsoleApp:
        busy, quiet, down = FIXED_QUEUES
        queues = [
            Queue(busy, FixedSource(description=f"ops@{busy}-db.prod.example:5432/{busy}")),
            Queue(
                quiet,
                FixedSource(quiet=True, description=f"ops@{quiet}-db.prod.example:5432/{quiet}"),
            ),
            Queue(
                down,
                FixedSource(offline=True, description=f"ops@{down}-db.prod.example:5432/{down}"),
            ),
        ]
        app = ConsoleApp.of_queues(queues, clock=FrozenClock(), actor="maria", auto_refresh=False)
        app.animation_level = "none"
        return app

    async def prepare(self, pilot: Pilot[Any]) -> None:
        app = pilot.app
        assert isinstance(app, ConsoleApp)
        await settle(pilot)
        if self.offline_after_load:
            source = app.source
            assert isinstance(source, FixedSource)
            source.offline = True
            clock = app.clock
            assert isinstance(clock, FrozenClock)
            clock.advance(47)
            app.request_refresh()
            await settle(pilot)
        for key in self.keys:
            await pilot.press(key)
            await settle(pilot)
        if self.extra is not None:
            await self.extra(pilot)
            await settle(pilot)


async def _type_filter(pilot: Pilot[Any]) -> None:
    await pilot.press("slash", *"timeout", "enter")


EDITED_PAYLOAD = (
    '{"order_id": 48213, "amount": "139.90", "currency": "EUR", '
    '"customer": "cus_00048213", "note": "fixed by hand"}'
)


async def _edit_payload(pilot: Pilot[Any]) -> None:
    """In the job editor: a new amount and a note, priority 0, then ctrl+s (the diff)."""
    pilot.app.screen.query_one(TextArea).text = editable_json(EDITED_PAYLOAD)
    pilot.app.screen.query_one("#edit-priority", Input).value = "0"
    await pilot.pause()
    await pilot.press("ctrl+s")


async def _break_payload(pilot: Pilot[Any]) -> None:
    """In the job editor: JSON cut short, so Save is disabled and says why."""
    pilot.app.screen.query_one(TextArea).text = '{"order_id": 48213, "amount": '
    await pilot.pause()


SCENES: tuple[Scene, ...] = (
    Scene("main"),
    Scene("in-flight", keys=("2",)),
    Scene("exec-times", keys=("4",)),
    Scene("metrics", keys=("5",)),
    Scene("workers", keys=("6",)),
    Scene("audit", keys=("7",)),
    Scene("schedules", keys=("8",)),
    Scene("depth-focused", keys=("1",)),
    Scene("filter", extra=_type_filter),
    # the record's charts: the whole queue's last hour; a type with a wait SLO over 7 d
    Scene("charts", keys=("h",)),
    Scene("charts-type-week", keys=("h", "t", "t", "t", "t", "4")),
    # panel 3 with a group first seen 2 minutes ago: marked NEW
    Scene("failures-new-group", keys=("3",), new_group=True),
    # a breaker open on the timeouts' group: panel 3 marks the group, panel 1 its type;
    # Z on a group opens (or closes) one
    Scene("failures-breaker-open", keys=("3",), breaker=True),
    Scene("breaker-open-depth", breaker=True),
    Scene("breaker-dialog", keys=("3", "Z")),
    # a canary-waves requeue of that group in progress: its waves on the audit panel
    Scene("waves-in-progress", keys=("7",), waves=True),
    Scene("failure-drilldown", keys=("enter",)),
    Scene("job-detail", keys=("enter", "enter")),
    Scene("factors", keys=("enter", "F")),
    # the group's second job is a pipeline's stage 2; u opens the stage before it
    Scene("job-lineage", keys=("enter", "down", "enter")),
    Scene("job-parent", keys=("enter", "down", "enter", "u")),
    Scene("requeue-jobs", keys=("R",)),
    Scene("requeue-jobs-options", keys=("R", "space", "tab", "1", "0", "m")),
    Scene("confirm", keys=("R", "enter")),
    Scene("confirm-done", keys=("R", "enter", "y")),
    Scene("confirm-no", keys=("R", "enter", "enter")),
    Scene("reap-confirm", keys=("2", "H")),
    # the third in-flight row: a running job whose handler ignores its cancel
    Scene("cancel-running-confirm", keys=("2", "down", "down", "X")),
    Scene("cancel-running-done", keys=("2", "down", "down", "X", "y")),
    Scene("purge-age", keys=("D",)),
    # E on a Faulted job: its payload in an editor, then the change as a diff
    Scene("edit-job", keys=("enter", "enter", "E")),
    Scene("edit-job-invalid", keys=("enter", "enter", "E"), extra=_break_payload),
    Scene("edit-confirm", keys=("enter", "enter", "E"), extra=_edit_payload),
    # emails.send runs at its concurrency limit (8/8) and has a rate limit
    Scene("limit-type", keys=("1", "L")),
    Scene("pause-type-confirm", keys=("1", "P")),
    Scene("limit-type-confirm", keys=("1", "L", "ctrl+a", "ctrl+k", "4", "enter")),
    Scene("purge-confirm", keys=("D", "enter")),
    # a report left open 2h holds the horizon; an operator's UPDATE blocks a worker
    Scene("health", keys=("9",)),
    Scene("health-vacuum-confirm", keys=("9", "V")),
    # the sessions list (tab), its third row: the UPDATE that blocks the worker
    Scene("health-cancel-session-confirm", keys=("9", "tab", "down", "down", "K")),
    Scene("help", keys=("question_mark",)),
    Scene("read-only", read_only=True),
    Scene("read-only-drilldown", read_only=True, keys=("enter",)),
    Scene("lost-connection", offline_after_load=True),
    Scene("no-engine", engine=False),
    # every worker killed (kill -9) 5m 51s ago: types with ready jobs and no live worker,
    # the workers tab red, every job in flight hung and nothing reaping them
    # (no engine in the console either)
    Scene("dead-workers", dead_workers=True, engine=False),
    Scene("dead-workers-hung", dead_workers=True, engine=False, keys=("2",)),
    Scene("dead-workers-list", dead_workers=True, engine=False, keys=("6",)),
    Scene("dead-workers-reap-confirm", dead_workers=True, engine=False, keys=("2", "H")),
    # several queues: the overview they open on, then the busy queue's panels (⏎)
    Scene("past-at", past="at"),
    Scene("past-at-failures", past="at", keys=("3",)),
    Scene("past-at-scrubbed", past="at", keys=("right_curly_bracket", "right_square_bracket")),
    Scene("past-at-write-refused", past="at", keys=("R",)),
    Scene("past-bundle", past="bundle"),
    Scene("past-bundle-audit", past="bundle", keys=("7",)),
    Scene("queues-overview", several=True),
    Scene("queues-shown", several=True, keys=("enter",)),
)

BY_NAME = {s.name: s for s in SCENES}

# the README's pictures: file name -> scene
SCREENSHOTS = {
    "main.svg": "main",
    "failure-drilldown.svg": "failure-drilldown",
    "factors.svg": "factors",
    "job-detail.svg": "job-detail",
    "schedules.svg": "schedules",
    "confirm.svg": "confirm",
    "edit.svg": "edit-job",
    "requeue.svg": "requeue-jobs-options",
    "cancel-running.svg": "cancel-running-confirm",
    "health.svg": "health",
    "read-only.svg": "read-only",
    "lost-connection.svg": "lost-connection",
    "queues-overview.svg": "queues-overview",
    "dead-workers.svg": "dead-workers",
    "hung.svg": "dead-workers-hung",
    "charts.svg": "charts-type-week",
    "breaker.svg": "failures-breaker-open",
    "waves.svg": "waves-in-progress",
}
