"""Every key and action of the console, in one registry.

The App's BINDINGS, the footer hints (via ``check_action``), the help screen
and the command palette are all generated from :data:`ACTIONS`, so a key is
documented the moment it exists and nothing has to be memorised. A write key
carries its :class:`~skconsole.tui.operation.Operation` (the ``ops`` spec, the
target's resolver, the dialogs): it runs through the App's one ``operate``
action, so an operator action needs no App method of its own.

Scopes name where an action applies: the focused panel of the main screen
(``depth``, ``inflight``, ``failures``, ``exec``, ``metrics``, ``workers``,
``audit``, ``schedules``, ``health``), the failure-group drill-down (``jobs``) or the job detail
(``job``). An action with no scopes applies everywhere. With several queues the
overview has a scope of its own (``queues``); an action that only means something
there (``needs_queues``) is hidden, in the footer, the help and the palette alike,
when the console watches one queue.
"""

from __future__ import annotations

from dataclasses import dataclass

from textual.binding import Binding

from skconsole import ops
from skconsole.read.why import Fix
from skconsole.tui import asks, targets
from skconsole.tui.action_spec import (
    MAIN,
    OPENS,
    SELECTED,
    TABLE_SCOPES,
    ActionSpec,
)
from skconsole.tui.model import Dialog
from skconsole.tui.operation import Asker, Operation
from skconsole.tui.panels import numbered


def _panel_actions() -> list[ActionSpec]:
    """Keys 1-9: one per panel of :data:`skconsole.tui.panels.PANELS`, in its order."""
    return [
        ActionSpec(
            f"panel('{panel.scope}')",
            str(n),
            panel.label(),
            f"Show and focus the {panel.label()} panel.",
            scopes=MAIN,
            footer=False,
        )
        for n, panel in numbered()
    ]


@dataclass(frozen=True)
class WriteKey(ActionSpec):
    """A write key: hidden in read-only mode, dimmed while disconnected, and destructive
    (its confirmation defaults to No) unless it says otherwise."""

    destructive: bool = True
    needs_write: bool = True


@dataclass(frozen=True)
class TypeKey(WriteKey):
    """A write key on the task type selected on the depth panel: it changes how the type
    is run and deletes nothing."""

    scopes: frozenset[str] = frozenset({"depth"})
    destructive: bool = False
    home: str | None = "depth"


def _type_setting(action: ops.OperatorAction, ask: Asker) -> Operation:
    """Set or clear a stored setting of the selected type: a dialog asks for the change,
    the confirmation names the type."""
    return Operation(
        action,
        targets.type_to_set,
        missing="Select a task type first.",
        ask=ask,
        dialog=Dialog.TARGET,
    )


ACTIONS: tuple[ActionSpec, ...] = (
    ActionSpec("help", "question_mark", "Help", "Show every key and action.", key_display="?"),
    # second: the footer shows keys in this order, and q must stay in view at 80 columns
    ActionSpec("quit", "q", "Quit", "Quit the console (the embedded engine finishes its jobs)."),
    ActionSpec(
        "open",
        "enter",
        "Open",
        "Open what the selected row stands for: a type's waiting jobs, a running job, a failure"
        " group's jobs, a worker's jobs, an audited action's jobs, a job's full detail, a"
        " factor's search.",
        scopes=OPENS,
        priority=True,
        home="failures",
        key_display="⏎",
    ),
    ActionSpec(
        "queues",
        "o",
        "Queues",
        "The overview of every queue: its verdict, jobs per status, oldest ready job,"
        " failures; ⏎ on a queue shows its panels (and every key acts on it), o or esc comes"
        " back.",
        needs_queues=True,
    ),
    ActionSpec(
        "filter",
        "slash",
        "Filter",
        "Filter the focused table by text; esc clears it.",
        scopes=TABLE_SCOPES,
        key_display="/",
    ),
    ActionSpec(
        "mark",
        "space",
        "Mark",
        "Mark the selected job, or unmark it: R, B, N and X then act on every marked job"
        " (the panel's title counts them; esc clears the marks).",
        scopes=targets.MARKS_JOBS,
        footer=False,
        key_display="space",
    ),
    ActionSpec(
        "leave",
        "escape",
        "Back",
        "Clear the filter, then the marks, or go back from a drill-down.",
        key_display="esc",
    ),
    WriteKey(
        "requeue",
        "R",
        "Requeue",
        "Requeue the selected group (all its jobs, from panel 3 or its drill-down), the job"
        " shown or the type's failed jobs (reset attempts or not, spread or not).",
        scopes=SELECTED,
        home="failures",
        op=Operation(ops.REQUEUE, targets.failed_jobs, ask=asks.requeue),
    ),
    WriteKey(
        "requeue_job",
        "O",
        "Requeue job",
        "Requeue one job: the one selected in a group's or a search's list.",
        scopes=frozenset({"jobs"}),
        op=Operation(ops.REQUEUE, targets.one_job, missing="Select a job first.", ask=asks.requeue),
    ),
    WriteKey(
        "requeue_shown",
        "A",
        "Requeue shown",
        "Requeue the jobs the (filtered) list of a failure group or a search shows; the"
        " confirmation says how many it leaves out.",
        scopes=frozenset({"jobs"}),
        op=Operation(ops.REQUEUE, targets.shown_jobs, missing="No jobs shown.", ask=asks.requeue),
    ),
    WriteKey(
        "bump",
        "B",
        "Bump",
        "Move waiting jobs to the front: priority 0 (the selected job, group or type).",
        scopes=SELECTED,
        home="depth",
        op=Operation(ops.BUMP, targets.jobs("waiting"), params=ops.BumpParams(to=0)),
    ),
    WriteKey(
        "bump_now",
        "N",
        "Run now",
        "Make waiting jobs that are not due yet (a delay, a retry's back-off, a snooze) due at once"
        " (the selected job, group or type).",
        scopes=SELECTED,
        footer=False,
        home="depth",
        op=Operation(ops.BUMP, targets.jobs("waiting"), params=ops.BumpParams(now=True)),
    ),
    WriteKey(
        "cancel",
        "X",
        "Cancel",
        "Cancel the selected job (a running one is stopped by its worker), group, or waiting jobs of a type.",
        scopes=SELECTED | {"inflight"},
        home="failures",
        op=Operation(ops.CANCEL, targets.jobs("waiting")),
    ),
    WriteKey(
        "edit",
        asks.EDIT_KEY,
        "Edit",
        "Edit the job's payload and priority (a waiting or failed job), then optionally run it again.",
        scopes=frozenset({"job"}),
        op=Operation(
            ops.EDIT, targets.job_to_edit, missing=None, ask=asks.edit, dialog=Dialog.DIFF
        ),
    ),
    WriteKey(
        "reap",
        "H",
        "Reap hung",
        "Send hung jobs (their worker's lease has lapsed: dead, cut off or stopped) back to the queue.",
        scopes=frozenset({"inflight"}),
        home="inflight",
        op=Operation(ops.REAP, targets.hung_jobs),
    ),
    WriteKey(
        "breaker",
        "Z",
        "Breaker",
        "Open (or close) a circuit breaker on the selected failure group's signature: only the"
        " type's jobs that would hit it are held back, canaries after a cool-down.",
        scopes=frozenset({"failures", "jobs"}),
        home="failures",
        destructive=False,
        footer=False,
        op=Operation(
            ops.BREAKER,
            targets.group_to_break,
            missing="Select a failure group first.",
            ask=asks.breaker,
            dialog=Dialog.TARGET,
        ),
    ),
    TypeKey(
        "pause_type",
        "P",
        "Pause/resume type",
        "Pause or resume the selected task type: paused types are not claimed.",
        op=Operation(ops.PAUSE, targets.type_to_pause, missing=None, dialog=Dialog.TARGET),
    ),
    TypeKey(
        "limit_type",
        "L",
        "Limit type",
        "Set or clear the selected type's limits across all workers: jobs running at once, claims per interval.",
        op=_type_setting(ops.LIMIT, asks.limit),
    ),
    TypeKey(
        "retention_type",
        "T",
        "Retention",
        "Set or clear how long the selected type's finished results are kept before the workers purge them.",
        footer=False,
        op=_type_setting(ops.RETENTION, asks.retention),
    ),
    WriteKey(
        "purge",
        "D",
        "Purge",
        "Delete finished results older than an age you give; you type the count to confirm.",
        scopes=MAIN,
        op=Operation(ops.PURGE, targets.old_results, ask=asks.purge_age),
    ),
    WriteKey(
        "vacuum",
        "V",
        "Vacuum",
        "VACUUM (ANALYZE) the selected queue table now; it cannot remove the dead rows an open transaction still sees.",
        scopes=frozenset({"health"}),
        home="health",
        op=Operation(ops.VACUUM, targets.table, dialog=Dialog.TARGET),
    ),
    WriteKey(
        "cancel_session",
        "K",
        "Cancel session",
        "Cancel the statement of the selected session that blocks the queue or holds its xmin horizon (pg_cancel_backend).",
        scopes=frozenset({"health"}),
        home="health",
        op=Operation(
            ops.CANCEL_SESSION,
            targets.session,
            missing="Select a session (or a lock wait) first.",
            dialog=Dialog.TARGET,
        ),
    ),
    ActionSpec(
        "search",
        "s",
        "Search",
        "Find jobs by payload field, type, status, age or error: payload.customer.id=42 type=T.",
        footer=False,
        navigates=True,
    ),
    ActionSpec(
        "factor_search",
        "F",
        "Factors",
        "What a failure group's jobs share: its factors with their counts and shares, and ⏎ on"
        " one opens its search.",
        scopes=frozenset({"jobs"}),
        footer=False,
        navigates=True,
    ),
    ActionSpec(
        "charts",
        "h",
        "Charts",
        "Charts of the last 15 min, hour, day or week from the per-minute record (kept through"
        " purges): throughput, failed attempts, wait and run time (p50, p95; a type's wait SLO"
        " drawn across), for the whole queue or the type selected on the depth panel.",
        scopes=MAIN,
        navigates=True,
    ),
    ActionSpec(
        "chart_type",
        "t",
        "Type",
        "Charts: the next task type (the whole queue first, then each type).",
        scopes=frozenset({"charts"}),
        navigates=True,
    ),
    ActionSpec(
        "chart_narrower",
        "left",
        "Shorter",
        "Charts: the next shorter window (1-4 choose one: 15 min, 1 h, 24 h, 7 d).",
        scopes=frozenset({"charts"}),
        navigates=True,
        key_display="←",
    ),
    ActionSpec(
        "chart_wider",
        "right",
        "Longer",
        "Charts: the next longer window (1-4 choose one: 15 min, 1 h, 24 h, 7 d).",
        scopes=frozenset({"charts"}),
        navigates=True,
        key_display="→",
    ),
    ActionSpec(
        "more",
        "m",
        "More",
        "Load more of a list that stopped at its limit (a group's jobs, a search's); its"
        " header says how many are not shown.",
        scopes=frozenset({"jobs"}),
        footer=False,  # the header says it where a list stopped
        navigates=True,
    ),
    ActionSpec(
        "copy",
        "c",
        "Copy",
        "Copy the job (fields, payload and full error) to the clipboard and to a file the toast names.",
        scopes=frozenset({"job"}),
    ),
    ActionSpec(
        "as_test",
        "a",
        "As test",
        "Write the job as a pytest module (test_job_ID.py, in the current directory): its"
        " handler (from --tasks) run on its payload in a scratch queue, failing with today's"
        " error until it is fixed; without --tasks, the command that writes it.",
        scopes=frozenset({"job"}),
        footer=False,
    ),
    ActionSpec(
        "link",
        "l",
        "Link",
        "The browser console's URL of the job, failure group or search shown (skconsole serve):"
        " shown to select, and copied.",
        scopes=frozenset({"job", "jobs"}),
        footer=False,
    ),
    ActionSpec(
        "why",
        "w",
        "Why",
        "Why the job (or a list's selected job) waits: paused, limit, rate, no worker, jobs ahead, not due, locks; each with its fix.",
        scopes=frozenset({"job", "jobs"}),
        footer=False,
        navigates=True,
    ),
    ActionSpec(
        "jump_to_job",
        "J",
        "Job",
        "Open a job by its id or a unique prefix of it (from a ticket or a log line).",
        footer=False,
        navigates=True,
    ),
    ActionSpec(
        "parent",
        "u",
        "Parent",
        "Open the job that posted this one: a pipeline's previous stage, or the job whose ctx.post posted it.",
        scopes=frozenset({"job"}),
        navigates=True,
    ),
    ActionSpec(
        "children",
        "d",
        "Posted",
        "Open the jobs this one posted: a pipeline's next stage, its ctx.post jobs (one: its detail).",
        scopes=frozenset({"job"}),
        navigates=True,
    ),
    ActionSpec(
        "connection",
        "C",
        "DSN",
        "Show the connection string (password masked) and copy it: the CLI reaches the same queue with --dsn.",
        footer=False,
    ),
    ActionSpec(
        "engine",
        "e",
        "Engine",
        "Start or stop the embedded worker engine.",
        needs_write=True,
        needs_engine=True,
    ),
    ActionSpec(
        "past_back",
        "left_square_bracket",
        "-1 min",
        "The past (--at, --bundle): show the minute before.",
        key_display="[",
        needs_past=True,
    ),
    ActionSpec(
        "past_forward",
        "right_square_bracket",
        "+1 min",
        "The past (--at, --bundle): show the minute after.",
        key_display="]",
        needs_past=True,
    ),
    ActionSpec(
        "past_back_10",
        "left_curly_bracket",
        "-10 min",
        "The past (--at, --bundle): show ten minutes before.",
        key_display="{",
        needs_past=True,
        footer=False,
    ),
    ActionSpec(
        "past_forward_10",
        "right_curly_bracket",
        "+10 min",
        "The past (--at, --bundle): show ten minutes after.",
        key_display="}",
        needs_past=True,
        footer=False,
    ),
    ActionSpec("pause_refresh", "p", "Pause", "Pause or resume the live refresh."),
    ActionSpec("refresh_now", "r", "Refresh", "Refresh now.", footer=False),
    ActionSpec("faster", "plus", "Faster", "Refresh more often.", footer=False, key_display="+"),
    ActionSpec("slower", "minus", "Slower", "Refresh less often.", footer=False, key_display="-"),
    *_panel_actions(),
)

BY_ID: dict[str, ActionSpec] = {a.id: a for a in ACTIONS}


def spec_for(action_name: str, parameters: tuple[object, ...] = ()) -> ActionSpec | None:
    """The spec of an action as Textual passes it to ``check_action`` (name, parameters)."""
    if action_name == "panel" and parameters:
        return BY_ID.get(f"panel({parameters[0]!r})")
    if action_name in ("operate", "navigate") and parameters:
        return BY_ID.get(str(parameters[0]))
    return BY_ID.get(action_name)


def bindings() -> list[Binding]:
    """The App's BINDINGS, generated from the registry."""
    return [
        Binding(
            a.key,
            a.action,
            a.description,
            show=a.footer,
            priority=a.priority,
            key_display=a.key_display,
        )
        for a in ACTIONS
    ]


#: a fix whose action has more than one key: the one that does what its arguments say
_FIX_KEYS: dict[tuple[str, str | None], str] = {
    ("bump", "--now"): "bump_now",
    ("resume", None): "pause_type",  # P pauses and resumes
}


def fix_key(fix: Fix) -> ActionSpec | None:
    """The key that runs ``fix``'s action on what the console shows (None: no key does)."""
    for (action, arg), spec_id in _FIX_KEYS.items():
        if fix.action == action and (arg is None or arg in fix.args):
            return next(s for s in ACTIONS if s.id == spec_id)
    return next((s for s in ACTIONS if s.op is not None and s.op.action.name == fix.action), None)


def offer_with_key(fix: Fix) -> str:
    """A fix as the console offers it: its command, and the key that runs it here."""
    spec = fix_key(fix)
    if spec is None:
        return fix.command()
    where = f" ({spec.home} panel)" if spec.home else ""
    return f"{fix.command()} / key {spec.shown_key}{where}"
