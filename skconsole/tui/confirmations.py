"""The confirmation dialogs of operator actions, one per :class:`~skconsole.tui.model.Dialog`.

Every dialog asks the question the action's spec words (:mod:`skconsole.tui.sentences`)
and defaults to No; they differ in what they show besides: some of the jobs
(:attr:`Dialog.SAMPLE`), the one target as the preview read it, described by its kind
(:attr:`Dialog.TARGET`: a table's rows and vacuum, a session's user, state and query), or
the change itself (:attr:`Dialog.DIFF`: an edit). A purge asks for the count to be typed
(its spec's ``Confirm.TYPE_COUNT``), whatever it shows.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

from textual.screen import ModalScreen

from skconsole.core.durations import format_limit
from skconsole.ops import Confirm
from skconsole.ops.edit import EditParams, payload_diff
from skconsole.ops.limit import describe as describe_limits
from skconsole.ops.reap import idle_warning, no_live_worker
from skconsole.tui.formatting import fmt_bytes, format_age
from skconsole.tui.model import Dialog, PreviewInfo, TargetKind
from skconsole.tui.screens.confirm import ConfirmScreen
from skconsole.tui.screens.edit_confirm import EditConfirmScreen
from skconsole.tui.screens.purge_confirm import PurgeConfirmScreen
from skconsole.tui.sentences import question, verb

SERVER_HINT = (
    "Acts on exactly this target as shown: if by then it is gone or no longer qualifies (a"
    " session: another one with its pid, or blocking nothing) it is left alone."
    " y = yes · n, Esc or Enter = no"
)


#: the hint under the question of a type setting's change
SETTING_HINT = (
    "The type's setting is read again under its row lock when this runs; the old and the"
    " new value go to the audit log. y = yes · n, Esc or Enter = no"
)


def _n(value: object) -> str:
    return f"{value:,}" if isinstance(value, int) else "-"


def table_lines(d: dict[str, object]) -> list[str]:
    """A queue table as a vacuum's preview read it: its rows, size and last vacuum."""
    last = d.get("last_vacuumed")
    size = d.get("table_bytes")
    lines = [
        f"table {d['table']}: {_n(d.get('live_rows'))} live rows, {_n(d.get('dead_rows'))}"
        f" dead, {fmt_bytes(size) if isinstance(size, int) else '-'}",
        "last vacuumed "
        + (f"{last:%Y-%m-%d %H:%M:%S %Z}" if isinstance(last, datetime) else "never"),
    ]
    if d.get("vacuum_running"):
        lines.append("a vacuum runs on it now: this one waits for it")
    if d.get("may_vacuum") is False:
        lines.append("this role may not vacuum it (its owner, a superuser or pg_maintain may)")
    return lines


def session_lines(d: dict[str, object]) -> list[str]:
    """A session as a cancel's preview read it: user, application, state, transaction age,
    what it holds and its query."""
    age = d.get("xact_age_s")
    held = d.get("horizon_age")
    blocks = d.get("blocks") or []
    holds = []
    if isinstance(blocks, list) and blocks:
        holds.append("blocks pid " + ", ".join(str(p) for p in blocks))
    if d.get("holds_horizon"):
        holds.append("holds the xmin horizon")
    lines = [
        f"pid {d.get('pid')} · user {d.get('user') or '-'} · application"
        f" {d.get('application') or '-'} · client {d.get('client') or '-'}",
        f"state {d.get('state') or 'hidden'} · transaction open"
        f" {format_age(age) if isinstance(age, float) else '-'}"
        + (f" · {_n(held)} transactions back" if isinstance(held, int) else "")
        + (f" · {'; '.join(holds)}" if holds else ""),
        f"query: {d.get('query') or '-'}",
    ]
    if str(d.get("state") or "").startswith("idle"):
        lines.append(
            "it runs no statement now: PostgreSQL ignores a cancel until it runs one"
            " (end it from its application, or idle_in_transaction_session_timeout)"
        )
    return lines


#: how a setting's field reads in a confirmation (others: their name in words)
SETTING_LABELS = {"older_than_s": "keep finished results", "include_faulted": "Faulted ones too"}


def _setting_text(value: object) -> str:
    """A type's settings as a preview shows them: ``{"older_than_s": 3600.0}`` reads
    "older than 1h"; unset ones are left out."""
    if not isinstance(value, dict):
        return "-"
    if "per" in value:  # a per-key limit: "concurrency 1 per payload.customer"
        return describe_limits(value)
    parts = []
    for key, v in value.items():
        label = SETTING_LABELS.get(key, key.removesuffix("_s").replace("_", " "))
        if v is None or v is False:
            continue
        if v is True:
            parts.append(label)
        elif key.endswith("_s") and isinstance(v, int | float):
            parts.append(f"{label} {format_limit(float(v))}")
        else:
            parts.append(f"{label} {v}")
    return ", ".join(parts) or "none"


def setting_lines(d: dict[str, object]) -> list[str]:
    """A type setting's change as its preview read it: now, after, and what it makes
    eligible at once (retention)."""
    lines = [f"now:   {_setting_text(d.get('old'))}", f"after: {_setting_text(d.get('new'))}"]
    eligible = d.get("eligible")
    if isinstance(eligible, int):
        lines.append(f"{eligible:,} finished result(s) would be eligible for purging now")
    return lines


def type_lines(d: dict[str, object]) -> list[str]:
    """A task type as its preview read it: a setting's change (limit, retention), or what
    it holds when it is paused or resumed."""
    if "old" in d:
        return setting_lines(d)
    if "paused" not in d:
        return []
    state = "paused" if d.get("paused") else "not paused"
    return [f"now {state}: {_n(d.get('waiting'))} waiting, {_n(d.get('in_flight'))} running"]


#: How a confirmation describes a target of each kind that a :attr:`Dialog.TARGET` shows.
DESCRIBE: dict[TargetKind, Callable[[dict[str, object]], list[str]]] = {
    TargetKind.TABLE: table_lines,
    TargetKind.SESSION: session_lines,
    TargetKind.TYPE: type_lines,
}
#: the hint under a one-target question, by the target's kind
HINTS: dict[TargetKind, str] = {TargetKind.TYPE: SETTING_HINT}


def target_lines(kind: TargetKind, details: dict[str, object]) -> list[str]:
    """A one-target action's target as its preview read it (nothing for other kinds)."""
    describe = DESCRIBE.get(kind)
    return describe(details) if describe is not None else []


def _sample(preview: PreviewInfo) -> ModalScreen[bool]:
    words = verb(preview.request)
    return ConfirmScreen(
        f"Confirm {words}",
        question(preview),
        preview.sample[:5],
        f"Yes, {words} {preview.count:,}",
        f"For example ({min(len(preview.sample), 5)} of {preview.count:,}):",
        alarm=idle_warning(no_live_worker(preview.details)),
        forecast=preview.forecast,
    )


def _target(preview: PreviewInfo) -> ModalScreen[bool]:
    words = verb(preview.request)
    return ConfirmScreen(
        f"Confirm {words}",
        question(preview),
        target_lines(preview.request.target.kind, preview.details),
        f"Yes, {words}",
        hint=HINTS.get(preview.request.target.kind, SERVER_HINT),
        forecast=preview.forecast,
    )


def edit_confirmation(preview: PreviewInfo) -> EditConfirmScreen:
    """The edit's confirmation: the scope, the payload diff, the priority change."""
    params = preview.request.params
    assert isinstance(params, EditParams)  # a DIFF dialog is an edit's
    old, new = preview.details.get("old"), preview.details.get("new")
    old_payload = old.get("payload") if isinstance(old, dict) else None
    notes = []
    if isinstance(old, dict) and isinstance(new, dict) and old["priority"] != new["priority"]:
        notes.append(f"Priority: {old['priority']} -> {new['priority']}")
    if params.requeue:
        notes.append("Then posted again as Unprocessed, ready now.")
    return EditConfirmScreen(
        question(preview),
        payload_diff(old_payload, params.payload),
        notes,
        "Yes, save" + (" and run again" if params.requeue else ""),
    )


DIALOGS: dict[Dialog, Callable[[PreviewInfo], ModalScreen[bool]]] = {
    Dialog.SAMPLE: _sample,
    Dialog.TARGET: _target,
    Dialog.DIFF: edit_confirmation,
}


def confirmation(preview: PreviewInfo) -> ModalScreen[bool] | None:
    """The dialog that confirms ``preview``'s action; None: a reversible one asks nothing."""
    request = preview.request
    confirm = request.action.confirm
    if confirm is Confirm.NONE:
        return None
    if confirm is Confirm.TYPE_COUNT:
        return PurgeConfirmScreen(question(preview), preview.count)
    return DIALOGS[request.dialog](preview)
