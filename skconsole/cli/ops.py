"""Operator actions as commands: requeue, bump, purge, reap, cancel, edit, pause, resume, limit,
audit.

Each runs the same ``skconsole.ops`` functions the console does: preview,
confirm (a terminal prompt that defaults to No; ``--yes`` for scripts, and
required when stdin is not a terminal), execute on the previewed ids, report.
``--dry-run`` only previews, and works in read-only mode too. The sample and
audit tables fit the terminal (``--wide``: every column at full width).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from string import hexdigits
from typing import Annotated, Any
from uuid import UUID

import typer
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from skconsole import ops, read
from skconsole.cli.app import app
from skconsole.cli.options import (
    MAX_LIST_ROWS,
    ActionFlags,
    DryRunOpt,
    GroupOpt,
    IdsOpt,
    JsonOpt,
    LimitOpt,
    OlderOpt,
    StatusOpt,
    TypeOpt,
    WhereOpt,
    WideOpt,
    YesOpt,
    check_range,
    check_text,
    options_of,
)
from skconsole.cli.output import err, out, print_json
from skconsole.cli.view_table import column, print_items
from skconsole.core.durations import parse_duration
from skconsole.core.errors import ConfigError
from skconsole.core.hung import HungPolicy
from skconsole.core.json_types import Json
from skconsole.core.payload_terms import parse_path, parse_terms
from skconsole.core.status import JobStatus
from skconsole.core.text import printable, quoted
from skconsole.ops.cancel import MAX_WAIT_S
from skconsole.ops.edit import payload_diff
from skconsole.ops.limit import describe as describe_limits
from skconsole.ops.model import (
    ActionResult,
    JobRow,
    Preview,
    ProgressCallback,
    Selection,
    count_in,
)
from skconsole.ops.requeue import MAX_SPREAD_S
from skconsole.ops.spec import P, S
from skconsole.views import Column

# -- the selection syntax, shared by every action -----------------------------------------
#: the fewest characters of a job id that ``--id`` takes as a prefix of one
MIN_ID_PREFIX = 8


def job_ids(ctx: typer.Context, ids: list[str] | None) -> tuple[UUID, ...]:
    """``--id`` values as job ids: a full id as given; at least 8 of its first characters
    (as the console and ``skconsole job`` show them) as the one job they name. Several
    jobs starting so: they are listed and nothing runs (exit 1)."""
    found: list[UUID] = []
    prefixes: list[str] = []
    for text in ids or ():
        try:
            found.append(UUID(text.strip()))
        except ValueError:
            digits = text.strip().replace("-", "")
            if len(digits) < MIN_ID_PREFIX or not all(c in hexdigits for c in digits):
                raise ConfigError(
                    f"invalid job id {quoted(text)}: expected a UUID, or at least"
                    f" {MIN_ID_PREFIX} of its first characters"
                ) from None
            prefixes.append(text)
    if prefixes:
        with options_of(ctx).open("skconsole-resolve").connect() as conn:
            found.extend(read.resolve_job(conn, text) for text in prefixes)
    return tuple(dict.fromkeys(found))


def selection_from(
    ctx: typer.Context,
    ids: list[str] | None,
    group: str | None,
    task_type: str | None,
    statuses: list[int] | None,
    older_than: str | None,
    where: list[str] | None = None,
) -> Selection:
    """The Selection the command-line options describe (it checks them: exit 2 if bad)."""
    return Selection(
        ids=job_ids(ctx, ids),
        group=group,
        task_type=task_type,
        statuses=tuple(sorted(set(statuses or ()))),
        older_than_seconds=(
            parse_duration(older_than, option="--older-than") if older_than is not None else None
        ),
        where=parse_terms(where),
    )


# -- output -----------------------------------------------------------------------------
SAMPLE_COLUMNS: tuple[Column[JobRow], ...] = (
    column("job", lambda r: str(r.task_id), ident=True),
    column("type", lambda r: r.task_type, 1),
    column("status", lambda r: JobStatus.label_of(r.status), 2),
    column("priority", lambda r: str(r.priority), 5, right=True),
    column("errors", lambda r: str(r.error_count), 4, right=True),
    column("last active", lambda r: r.at.strftime("%Y-%m-%d %H:%M:%S") if r.at else "-", 3),
    column("note", lambda r: (r.note or "")[:80], flex=True),
)


def _show_sample(preview: Preview, wide: bool) -> None:
    print_items(SAMPLE_COLUMNS, preview.sample, title=None, wide=wide, edge=False)


def _show_preview(preview: Preview, verb: str, noun: str, wide: bool, phrase: str = "") -> None:
    scope = escape(preview.selection.describe())
    words = escape(printable(phrase))
    out.print(f"would {verb} {preview.count:,} {noun} ({scope}){words}", highlight=False)
    if preview.sample:
        shown = len(preview.sample)
        more = f", first {shown} shown" if preview.count > shown else ""
        out.print(f"sample{more}:")
        _show_sample(preview, wide)


def _show_result(result: ActionResult, action: ops.JobAction[Any]) -> None:
    text = f"{action.wording.done} {result.changed:,} {action.wording.noun}"
    text += escape(printable(action.summary(result.details)))
    if result.skipped_changed_state:
        text += (
            f"; {result.skipped_changed_state:,} changed state meanwhile (or were busy) "
            "and were left alone"
        )
    if result.audit_id is not None:
        text += f" (audit #{result.audit_id})"
    out.print(text, highlight=False)


@contextmanager
def _progress(total: int, label: str, enabled: bool) -> Iterator[ProgressCallback]:
    """A progress bar on stderr (when it is a terminal); yields the ops callback."""
    with Progress(
        TextColumn(label),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=err,
        transient=True,
        disable=not (enabled and err.is_terminal),
    ) as bar:
        task = bar.add_task(label, total=total)

        def update(done: int, all_: int) -> None:
            bar.update(task, completed=done, total=max(all_, done))

        yield update


def confirm_or_exit(prompt: str, yes: bool, *, type_count: int | None = None) -> None:
    """Ask in a terminal (default No); refuse when nobody can answer."""
    if yes:
        return
    prompt = printable(prompt)
    if not sys.stdin.isatty():
        raise ConfigError(
            "refusing to act without confirmation: stdin is not a terminal (add --yes, "
            "or --dry-run to only look)"
        )
    if type_count is not None:
        answer = typer.prompt(f"{prompt}\nType the number of jobs ({type_count}) to confirm")
        if answer.replace(",", "").strip() != str(type_count):
            raise typer.Exit(1)
        return
    if not typer.confirm(prompt, default=False):
        err.print("nothing changed")
        raise typer.Exit(1)


def _print_outcome(result: ActionResult, selection: Selection) -> None:
    """An action's result as one JSON document, with the selection it was given."""
    print_json({**result.as_dict(), "selection": selection.as_dict()})


def show_dry_run(preview: Preview, as_json: bool, *lines: str) -> None:
    """What --dry-run prints: the preview as one JSON document, else ``lines`` (their text
    already escaped)."""
    if as_json:
        print_json(preview.as_dict())
    else:
        for line in lines:
            out.print(line, highlight=False)


def _run(
    ctx: typer.Context,
    action: ops.JobAction[P],
    selection: Selection,
    params: P,
    flags: ActionFlags,
) -> None:
    """Preview, then (unless --dry-run) confirm, execute on the previewed ids and report."""
    verb, noun = action.wording.verb, action.wording.noun
    db = options_of(ctx).open(f"skconsole-{action.name}", write=not flags.dry_run)
    with db.connect() as conn:
        p = action.preview(conn, selection, params)
        if flags.dry_run:
            if flags.as_json:
                print_json(p.as_dict())
            else:
                _show_preview(p, verb, noun, flags.wide, params.phrase())
            return
        if p.count == 0:
            if flags.as_json:
                _print_outcome(ActionResult(action.name, 0, 0, 0), p.selection)
            else:
                out.print(f"nothing to {verb} ({escape(p.selection.describe())})", highlight=False)
            return
        if not flags.as_json:
            _show_preview(p, verb, noun, flags.wide, params.phrase())
        confirm_or_exit(
            f"{verb.capitalize()} {p.count:,} {noun}{params.phrase()}?",
            flags.yes,
            type_count=p.count if action.confirm is ops.Confirm.TYPE_COUNT else None,
        )
        with _progress(p.count, action.name, enabled=not flags.as_json) as on_progress:
            result = action.execute(
                conn,
                p.selection,
                params,
                actor=ops.Actor.current(),
                ids=p.ids,
                on_progress=on_progress,
            )
    if flags.as_json:
        _print_outcome(result, p.selection)
    else:
        _show_result(result, action)


# -- the actions ----------------------------------------------------------------------------
@app.command()
def requeue(
    ctx: typer.Context,
    ids: IdsOpt = None,
    group: GroupOpt = None,
    task_type: TypeOpt = None,
    statuses: StatusOpt = None,
    older_than: OlderOpt = None,
    where: WhereOpt = None,
    reset_errors: Annotated[
        bool,
        typer.Option(
            "--reset-errors",
            help="Start the error count again from 0 (else each job keeps its count:"
            " its type's max attempts minus it are the tries it has left)",
        ),
    ] = False,
    spread: Annotated[
        str | None,
        typer.Option(
            "--spread",
            help="Make the jobs due evenly over this long from now (e.g. 10m; at most 7d),"
            " by priority then posting, instead of all at once",
        ),
    ] = None,
    dry_run: DryRunOpt = False,
    yes: YesOpt = False,
    as_json: JsonOpt = False,
    wide: WideOpt = False,
) -> None:
    """Post failed jobs again, ready now or spread over --spread (statuses 4, 5, 6 by
    default; 7 when selected)."""
    spread_s = (
        parse_duration(spread, option="--spread", maximum=MAX_SPREAD_S)
        if spread is not None
        else None
    )
    params = ops.RequeueParams(reset_errors=reset_errors, spread_s=spread_s)
    sel = selection_from(ctx, ids, group, task_type, statuses, older_than, where)
    flags = ActionFlags(dry_run=dry_run, yes=yes, as_json=as_json, wide=wide)
    _run(ctx, ops.REQUEUE, sel, params, flags)


@app.command()
def bump(
    ctx: typer.Context,
    ids: IdsOpt = None,
    group: GroupOpt = None,
    task_type: TypeOpt = None,
    statuses: StatusOpt = None,
    older_than: OlderOpt = None,
    where: WhereOpt = None,
    by: Annotated[
        int | None, typer.Option("--by", help="Lower the priority number by N (floor 0)")
    ] = None,
    to: Annotated[int | None, typer.Option("--to", help="Set the priority to N")] = None,
    now: Annotated[
        bool,
        typer.Option("--now", help="Make jobs not due yet (delay, back-off, snooze) due at once"),
    ] = False,
    dry_run: DryRunOpt = False,
    yes: YesOpt = False,
    as_json: JsonOpt = False,
    wide: WideOpt = False,
) -> None:
    """Run waiting jobs sooner: lower their priority number (--by N), set it (--to N), or
    make them due at once (--now)."""
    params = ops.BumpParams(by=by, to=to, now=now)
    sel = selection_from(ctx, ids, group, task_type, statuses, older_than, where)
    flags = ActionFlags(dry_run=dry_run, yes=yes, as_json=as_json, wide=wide)
    _run(ctx, ops.BUMP, sel, params, flags)


@app.command()
def purge(
    ctx: typer.Context,
    older_than: OlderOpt = None,
    ids: IdsOpt = None,
    group: GroupOpt = None,
    task_type: TypeOpt = None,
    statuses: StatusOpt = None,
    where: WhereOpt = None,
    include_faulted: Annotated[
        bool, typer.Option("--include-faulted", help="Delete 5 Faulted results too")
    ] = False,
    dry_run: DryRunOpt = False,
    yes: YesOpt = False,
    as_json: JsonOpt = False,
    wide: WideOpt = False,
) -> None:
    """Delete old final results (3, 6, 7; 5 with --include-faulted), in short batches."""
    sel = selection_from(ctx, ids, group, task_type, statuses, older_than, where)
    flags = ActionFlags(dry_run=dry_run, yes=yes, as_json=as_json, wide=wide)
    _run(ctx, ops.PURGE, sel, ops.PurgeParams(include_faulted=include_faulted), flags)


@app.command()
def reap(
    ctx: typer.Context,
    ids: IdsOpt = None,
    task_type: TypeOpt = None,
    older_than: OlderOpt = None,
    unowned_after: Annotated[
        str,
        typer.Option(
            "--unowned-after", help="Without owner data (Stakhanovise.NET), hung after this long"
        ),
    ] = "1h",
    dry_run: DryRunOpt = False,
    yes: YesOpt = False,
    as_json: JsonOpt = False,
    wide: WideOpt = False,
) -> None:
    """Re-post hung jobs now (as `status inflight` judges them: the worker's lease has
    lapsed, so it has stopped them or is dead), recording why."""
    policy = HungPolicy(parse_duration(unowned_after, option="--unowned-after", minimum=1.0))
    sel = selection_from(ctx, ids, None, task_type, None, older_than)
    flags = ActionFlags(dry_run=dry_run, yes=yes, as_json=as_json, wide=wide)
    _run(ctx, ops.REAP, sel, ops.ReapParams(policy=policy), flags)


@app.command()
def cancel(
    ctx: typer.Context,
    ids: IdsOpt = None,
    group: GroupOpt = None,
    task_type: TypeOpt = None,
    statuses: StatusOpt = None,
    older_than: OlderOpt = None,
    where: WhereOpt = None,
    wait: Annotated[
        str,
        typer.Option(
            "--wait", help="How long to wait for workers to stop running jobs (0: do not wait)"
        ),
    ] = "5s",
    dry_run: DryRunOpt = False,
    yes: YesOpt = False,
    as_json: JsonOpt = False,
    wide: WideOpt = False,
) -> None:
    """Cancel jobs: waiting ones leave the queue; running ones (--id, or --status 2) are
    stopped by their worker, or at once if their worker is gone. All end 7 Cancelled."""
    params = ops.CancelParams(wait_s=parse_duration(wait, option="--wait", maximum=MAX_WAIT_S))
    sel = selection_from(ctx, ids, group, task_type, statuses, older_than, where)
    flags = ActionFlags(dry_run=dry_run, yes=yes, as_json=as_json, wide=wide)
    _run(ctx, ops.CANCEL, sel, params, flags)


def _side(value: object) -> Mapping[str, Json]:
    """One side ("old" or "new") of an edit's or a type setting's details: a JSON object."""
    assert isinstance(value, Mapping), value
    return value


def _payload(value: Json) -> str | None:
    """A payload as an edit's details hold it: the stored text (None: none)."""
    return value if isinstance(value, str) else None


def _show_diff(preview: Preview) -> None:
    """The edit's diff: pretty-printed payloads, removed lines red, added ones green."""
    old, new = _side(preview.details["old"]), _side(preview.details["new"])
    for line in payload_diff(_payload(old["payload"]), _payload(new["payload"]) or "")[2:]:
        style = {"+": "green", "-": "red", "@": "cyan"}.get(line[:1], "")
        text = escape(printable(line))
        out.print(f"[{style}]{text}[/]" if style else text, highlight=False)
    if old["priority"] != new["priority"]:
        out.print(f"priority: {old['priority']} -> {new['priority']}", highlight=False)


@app.command()
def edit(
    ctx: typer.Context,
    task_id: Annotated[str, typer.Option("--id", help="The job to edit", show_default=False)],
    payload: Annotated[
        str, typer.Option("--payload", metavar="JSON", help="Its new payload", show_default=False)
    ],
    priority: Annotated[
        int | None, typer.Option("--priority", help="Its new priority (0 runs first)")
    ] = None,
    requeue: Annotated[
        bool, typer.Option("--requeue", help="Post a failed job (4-7) again, ready now")
    ] = False,
    reset_errors: Annotated[
        bool, typer.Option("--reset-errors", help="With --requeue: error count from 0")
    ] = False,
    dry_run: DryRunOpt = False,
    yes: YesOpt = False,
    as_json: JsonOpt = False,
) -> None:
    """Change a waiting or failed job's payload (and priority); --requeue runs it again."""
    params = ops.EditParams(
        payload=payload, priority=priority, requeue=requeue, reset_errors=reset_errors
    )
    sel = selection_from(ctx, [task_id], None, None, None, None)
    job = sel.ids[0]
    db = options_of(ctx).open("skconsole-edit", write=not dry_run)
    with db.connect() as conn:
        p = ops.EDIT.preview(conn, sel, params)
        if dry_run:
            if as_json:
                print_json(p.as_dict())
            else:
                out.print(f"would edit job {job}{params.phrase()}:", highlight=False)
                _show_diff(p)
            return
        if p.details["no_change"]:
            if as_json:
                details = {**p.json_details(), "unchanged": 1}
                _print_outcome(ActionResult("edit", 0, 0, 0, details), sel)
            else:
                out.print(f"job {job} already has that payload and priority: nothing changed")
            return
        if not as_json:
            _show_diff(p)
        confirm_or_exit(f"Edit job {job}{params.phrase()}?", yes)
        result = ops.EDIT.execute(conn, sel, params, actor=ops.Actor.current(), ids=p.ids)
    if as_json:
        _print_outcome(result, sel)
    elif result.changed:
        again = " and posted it again, ready now" if result.details.get("requeued") else ""
        out.print(f"edited job {job}{again} (audit #{result.audit_id})", highlight=False)
    else:
        out.print(
            f"job {job} changed state meanwhile (claimed by a worker?) and was left alone "
            f"(audit #{result.audit_id})",
            highlight=False,
        )


def _switch(
    ctx: typer.Context, action: ops.TypeAction, task_type: str | None, flags: ActionFlags
) -> None:
    name = action.name
    if not task_type:
        raise ConfigError(f"{name} needs a task type: skconsole {name} TYPE")
    sel = Selection(task_type=task_type)
    db = options_of(ctx).open(f"skconsole-{name}", write=not flags.dry_run)
    with db.connect() as conn:
        p = action.preview(conn, sel)
        state = "paused" if p.details["paused"] else "running"
        if flags.dry_run:
            show_dry_run(
                p,
                flags.as_json,
                f"{escape(task_type)} is {state} ({p.details['waiting']:,} waiting, "
                f"{p.details['in_flight']:,} in flight); {name} would "
                f"{'change it' if p.count else 'change nothing'}",
            )
            return
        if p.count:
            confirm_or_exit(f"{name.capitalize()} task type {task_type}?", flags.yes)
        result = action.execute(conn, sel, actor=ops.Actor.current())
    if flags.as_json:
        _print_outcome(result, sel)
    elif result.changed:
        out.print(
            f"{escape(task_type)} {action.wording.done} (audit #{result.audit_id})",
            highlight=False,
        )
    else:
        out.print(f"{escape(task_type)} was already {state}: nothing changed", highlight=False)


TypeArg = Annotated[str | None, typer.Argument(metavar="TYPE", help="The task type")]


@app.command()
def pause(
    ctx: typer.Context,
    task_type_arg: TypeArg = None,
    task_type: TypeOpt = None,
    dry_run: DryRunOpt = False,
    yes: YesOpt = False,
    as_json: JsonOpt = False,
) -> None:
    """Stop workers claiming a task type (running jobs finish)."""
    flags = ActionFlags(dry_run=dry_run, yes=yes, as_json=as_json)
    _switch(ctx, ops.PAUSE, task_type_arg or task_type, flags)


@app.command()
def resume(
    ctx: typer.Context,
    task_type_arg: TypeArg = None,
    task_type: TypeOpt = None,
    dry_run: DryRunOpt = False,
    yes: YesOpt = False,
    as_json: JsonOpt = False,
) -> None:
    """Let workers claim a paused task type again."""
    flags = ActionFlags(dry_run=dry_run, yes=yes, as_json=as_json)
    _switch(ctx, ops.RESUME, task_type_arg or task_type, flags)


def _show_limits(ctx: typer.Context, as_json: bool, wide: bool) -> None:
    db = options_of(ctx).open("skconsole-limit")
    with db.connect() as conn:
        rows = read.limits(conn)
    if as_json:
        print_json({"limits": [r.as_dict() for r in rows]})
        return
    print_items(_LIMIT_COLUMNS, rows, wide=wide, title="Limits")
    if not rows:
        out.print("no task type is limited")


_LIMIT_COLUMNS: tuple[Column[read.TypeLimit], ...] = (
    column("type", lambda r: r.task_type, ident=True),
    column("running", lambda r: f"{r.running:,}", 1, right=True),
    column("concurrency", lambda r: str(r.concurrency or "-"), 2, right=True),
    column("rate", lambda r: r.rate or "-", 3, right=True),
    column("per key", lambda r: r.per_key or "-", 2),
    column("keys at limit", lambda r: r.keys_note or "-", 3),
)


@app.command()
def limit(
    ctx: typer.Context,
    task_type_arg: TypeArg = None,
    task_type: TypeOpt = None,
    concurrency: Annotated[
        int | None,
        typer.Option(
            "--concurrency", help="At most N jobs of the type running at once, over all workers"
        ),
    ] = None,
    rate: Annotated[
        str | None,
        typer.Option(
            "--rate", metavar="N/s|N/min", help="At most N claims of the type per interval"
        ),
    ] = None,
    clear: Annotated[
        bool, typer.Option("--clear", help="Remove the type's limits (both, unless one is set)")
    ] = False,
    per: Annotated[
        str | None,
        typer.Option(
            "--per",
            metavar="payload.PATH",
            help="The limits apply to each value of this payload path on its own (a key:"
            " one customer, say); with --clear, remove the per-key limits",
        ),
    ] = None,
    dry_run: DryRunOpt = False,
    yes: YesOpt = False,
    as_json: JsonOpt = False,
    wide: WideOpt = False,
) -> None:
    """Limit a task type across every worker (running jobs, claims per interval), for the
    whole type or per value of a payload path (--per); alone: show the limits. Workers
    follow at their next claim."""
    name = task_type_arg or task_type
    if not name:
        if concurrency is not None or rate is not None or clear or per is not None:
            raise ConfigError("limit needs a task type: skconsole limit TYPE --concurrency N")
        _show_limits(ctx, as_json, wide)
        return
    check_text("TYPE", name)
    params = ops.LimitParams(
        concurrency=concurrency,
        rate=ops.Rate.parse(rate) if rate is not None else None,
        clear_concurrency=clear and concurrency is None,
        clear_rate=clear and rate is None,
        per=parse_path(per) if per is not None else None,
    )
    run_type_setting(
        ctx,
        ops.LIMIT,
        name,
        params,
        describe=describe_limits,
        context=lambda d: f"{d['running']:,} running, {d['waiting']:,} waiting",
        question=f"Limit task type {name}",
        flags=ActionFlags(dry_run=dry_run, yes=yes, as_json=as_json),
    )


def run_type_setting(
    ctx: typer.Context,
    action: ops.TypeSetting[S, Any],
    name: str,
    params: S,
    *,
    describe: Callable[[Mapping[str, Json]], str],
    context: Callable[[Mapping[str, object]], str],
    question: str,
    flags: ActionFlags,
) -> None:
    """Preview, confirm and store one type's settings (limit, slo): old -> new, audited.
    ``describe`` words the settings, ``context`` what the type holds now."""
    sel = Selection(task_type=name)
    db = options_of(ctx).open(f"skconsole-{action.name}", write=not flags.dry_run)
    with db.connect() as conn:
        p = action.preview(conn, sel, params)
        # escaped: a per-key limit's path is text an operator typed
        old, new = (
            escape(describe(_side(p.details["old"]))),
            escape(describe(_side(p.details["new"]))),
        )
        if flags.dry_run:
            show_dry_run(
                p,
                flags.as_json,
                f"{escape(name)}: {old} ({escape(context(p.details))}); {action.name} would "
                + (f"set {new}" if p.count else "change nothing"),
            )
            return
        if not p.count:
            if flags.as_json:
                _print_outcome(ActionResult(action.name, 0, 0, 0, p.json_details()), sel)
            else:
                out.print(f"{escape(name)} already has {new}: nothing changed", highlight=False)
            return
        confirm_or_exit(f"{question}: {old} -> {new}?", flags.yes)
        result = action.execute(conn, sel, params, actor=ops.Actor.current())
    if flags.as_json:
        _print_outcome(result, sel)
        return
    now = escape(describe(_side(result.details.get("new", p.details["new"]))))
    audit_note = f" (audit #{result.audit_id})" if result.audit_id is not None else ""
    out.print(f"{escape(name)}: {now}{audit_note}", highlight=False)
    note = result.details.get("key_index_note")
    if isinstance(note, str):
        err.print(f"warning: key index {escape(printable(note))}", highlight=False)


@app.command()
def audit(
    ctx: typer.Context,
    limit: LimitOpt = 50,
    action: Annotated[str | None, typer.Option("--action", help="Only this action")] = None,
    as_json: JsonOpt = False,
    wide: WideOpt = False,
) -> None:
    """The operator actions executed on this queue: who, when, what, how many (newest first)."""
    check_range("--limit", limit, 1, MAX_LIST_ROWS)
    check_text("--action", action)
    db = options_of(ctx).open("skconsole-audit")
    with db.connect() as conn:
        rows = ops.audit.entries(conn, limit=limit, action=action)
    if as_json:
        print_json({"entries": [r.as_dict() for r in rows]})
        return
    print_items(_AUDIT_COLUMNS, rows, wide=wide, title="Audit")
    if not rows:
        out.print("no operator action recorded yet")


_AUDIT_COLUMNS: tuple[Column[ops.audit.AuditEntry], ...] = (
    column("#", lambda r: str(r.audit_id), right=True, ident=True),
    column("when", lambda r: r.at.strftime("%Y-%m-%d %H:%M:%S"), 2),
    column("who", lambda r: f"{r.user}@{r.host}", 3),
    column("action", lambda r: r.action),
    column("selection", lambda r: json.dumps(r.selection, default=str)[:60], flex=True),
    column("changed", lambda r: f"{r.count:,}", 1, right=True),
    column(
        "left alone",
        lambda r: f"{count_in(r.details or {}, 'skipped_changed_state'):,}",
        4,
        right=True,
    ),
)
