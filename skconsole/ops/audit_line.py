"""An audit row in one line: what was done, to what, with its options, in the words of
the action's spec (its ``Wording`` and its parameters' ``phrase()``, the parameters read
back from the row's details). ``skconsole audit`` and the console's audit panel show it:

- "bump 1 job d49b4fd8 to run now (due at once)", "bump 1 job d49b4fd8 to priority 0 (the
  front of the queue)"
- "requeue 12 jobs in group `KeyError: …`, error counts reset to 0, due over the next 5m"
- "pause type thumbnails.render", "limit type emails.send to concurrency 2",
  "purge 1,204,331 results older than 30d"
- "retention purged 310 results (emails.send: finished results older than 7d)"
- "requeue 90 jobs of type t, error counts kept, in waves 1%,10%,50%,100% gated at 95%, wave 2
  of 4 of waves requeue #3", "waves requeue #3 stopped-gate-failed: wave 2: 81% succeeded ..."
"""

from __future__ import annotations

from collections.abc import Mapping

from skconsole import ops
from skconsole.core.durations import format_age
from skconsole.core.status import JobStatus
from skconsole.db.waves import WAVES_ACTION
from skconsole.ops.audit import AuditEntry
from skconsole.ops.job_action import JobAction
from skconsole.ops.limit import describe as describe_limits
from skconsole.ops.requeue import wave_of

#: how many characters of a job id name it in a line (as the console shows ids)
SHORT_ID = 8


def _counted(n: int, noun: str) -> str:
    """ "1 job", "12 jobs", "3 hung jobs" from a spec's noun ("job(s)")."""
    return f"{n:,} {noun.replace('(s)', '' if n == 1 else 's')}"


def selection_words(sel: Mapping[str, object]) -> str:
    """What an audit row's selection names, in words: "in group `X` with status Faulted",
    "of type t", "older than 30d"; a single job by its short id; "" for ids alone."""
    parts = []
    ids = sel.get("ids")
    id_list = ids if isinstance(ids, list) else []
    if len(id_list) == 1 and sel.get("ids_count", 1) == 1:
        parts.append(str(id_list[0])[:SHORT_ID])
    if sel.get("group"):
        parts.append(f"in group `{sel['group']}`")
    if sel.get("task_type"):
        parts.append(f"of type {sel['task_type']}")
    statuses = sel.get("statuses")
    if isinstance(statuses, list) and statuses:
        parts.append("with status " + ", ".join(JobStatus.label_of(int(s)) for s in statuses))
    where = sel.get("where")
    if isinstance(where, list) and where:
        terms = [f"{t['path']}={t['value']}" for t in where if isinstance(t, dict)]
        parts.append("where " + " and ".join(terms))
    older = sel.get("older_than_seconds")
    if isinstance(older, int | float):
        parts.append(f"older than {format_age(float(older))}")
    return " ".join(parts)


def _spec(name: str) -> ops.OperatorAction | None:
    return next((a for a in ops.ACTIONS if a.name == name), None)


def what(entry: AuditEntry) -> str:
    """The row's action in one line, with its options (see the module's examples)."""
    details = entry.details or {}
    sel = entry.selection
    if details.get("by") == "retention":  # a worker's retention round
        policy = details.get("policy")
        return f"retention purged {_counted(entry.count, 'result(s)')}" + (
            f" ({policy})" if isinstance(policy, str) else ""
        )
    if entry.action == WAVES_ACTION:  # a waves requeue stopped or cancelled
        return _waves_line(details)
    spec = _spec(entry.action)
    if spec is None:  # an action this version does not know
        words = selection_words(sel)
        return f"{entry.action} {entry.count:,}" + (f" {words}" if words else "")
    params = spec.params_type.from_details(details)
    phrase = params.phrase() if params is not None else ""
    new = details.get("new")
    if spec is ops.LIMIT and isinstance(new, dict):  # the limits it left, as limit says them
        phrase = f" to {describe_limits(new) or 'none'}"
    verb = spec.wording.verb.replace("-", " ")
    plan, wave, of = details.get("plan"), details.get("wave"), details.get("of")
    if isinstance(plan, int) and isinstance(wave, int) and isinstance(of, int):
        phrase += f", {wave_of(plan, wave, of)}"
    if isinstance(spec, JobAction):
        words = selection_words(sel)
        counted = _counted(entry.count, spec.wording.noun)
        return f"{verb} {counted}" + (f" {words}" if words else "") + phrase
    task_type = sel.get("task_type")
    if isinstance(task_type, str):
        return f"{verb} type {task_type}{phrase}"
    return f"{verb}{phrase}"


def _waves_line(details: Mapping[str, object]) -> str:
    """ "waves requeue #3 stopped-gate-failed: wave 2: 81% succeeded (gate 95%): ...",
    "waves requeue #3 cancelled at wave 2"."""
    plan, state = details.get("plan"), details.get("state")
    head = f"waves requeue #{plan} {state}"
    reason = details.get("reason")
    if isinstance(reason, str):
        return f"{head}: {reason}"
    wave = details.get("wave")
    return f"{head} at wave {wave}" if isinstance(wave, int) else head
