"""What the console says of an operator action: its question, its outcome, its "nothing to do".

The words are the action's spec's (``ops.Wording``: templates); this module only fills
them in for any action the same way: the target's label, its scope as its kind counts
it (a named job as is, a group's jobs as "12 jobs in group `X`", a type's as "12 waiting
jobs of type `t`"), the parameters' phrase and the result's counts. With several
queues open, each sentence begins with the queue it acts on ("Queue `billing`: ...");
with one, none does.
"""

from __future__ import annotations

from typing import Any

from skconsole.core.text import printable
from skconsole.tui.model import ActionRequest, OutcomeInfo, PreviewInfo, Target, TargetKind


def _counted(n: int, label: str) -> str:
    """``n`` and the label's noun: "3 hung jobs", "1 hung job"."""
    if n == 1:
        label = label.replace("jobs", "job", 1)
    return f"{n:,} {label}"


def scope(target: Target, n: int) -> str:
    """The target as a confirmation states it, ``n`` being what the preview counted."""
    if target.kind.named:
        return target.label
    if target.kind is TargetKind.GROUP:
        return f"{n:,} {'job' if n == 1 else 'jobs'} in {target.label}"
    return _counted(n, target.label)


def on_queue(request: ActionRequest, text: str) -> str:
    """``text`` as said of ``request``: led by its queue's name when the console watches
    several queues ("Queue `billing`: Pause task type `x`?"), as is with one."""
    if request.queue is None:
        return text
    return f"Queue `{printable(request.queue)}`: {text}"


def _fields(request: ActionRequest, **more: Any) -> dict[str, Any]:
    wording = request.action.wording
    verb = wording.verb.replace("-", " ")
    label = request.target.label
    return {
        "verb": verb,
        "Verb": verb.capitalize(),
        "Done": wording.done.capitalize(),
        "target": label,
        "Target": label[:1].upper() + label[1:],
        "phrase": request.params.phrase(),
        "done_phrase": request.params.done_phrase(),
        **more,
    }


def verb(request: ActionRequest) -> str:
    """The action's name as words: "requeue", "cancel session"."""
    return str(_fields(request)["verb"])


def question(preview: PreviewInfo) -> str:
    """The confirmation question, with the exact scope, worded by the action's spec."""
    request = preview.request
    action = request.action
    text = action.wording.question.format_map(
        _fields(request, scope=scope(request.target, preview.count))
    )
    return on_queue(request, f"{text} {action.warning}" if action.warning else text)


def nothing_text(request: ActionRequest) -> str:
    """The notice when the preview found nothing the action would change."""
    return on_queue(request, request.action.wording.nothing.format_map(_fields(request)))


def _tally(outcome: OutcomeInfo) -> str:
    if outcome.skipped:
        return f"; {outcome.skipped:,} had changed state meanwhile and were left alone"
    if outcome.changed < outcome.requested:
        return f" of {outcome.requested:,}"
    return ""


def outcome_text(outcome: OutcomeInfo) -> str:
    """The outcome toast: what changed, worded by the action's spec."""
    request = outcome.request
    wording = request.action.wording
    template = wording.outcome
    if not outcome.changed and wording.left_alone is not None:
        template = wording.left_alone
    summary = printable(request.action.result_summary(dict(outcome.details)))
    return on_queue(
        request,
        template.format_map(
            _fields(request, changed=f"{outcome.changed:,}", summary=summary, tally=_tally(outcome))
        ),
    )
