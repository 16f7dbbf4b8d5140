"""Operator actions as commands: requeue, bump, purge, reap, cancel, pause, resume, audit.

Each runs the same ``skconsole.ops`` functions the console does: preview,
confirm (a terminal prompt that defaults to No; ``--yes`` for scripts, and
required when stdin is not a terminal), execute on the previewed ids, report.
``--dry-run`` only previews, and works in read-only mode too.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Annotated, Any
from uuid import UUID

import typer
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from skconsole import ops
from skconsole.cli import MAX_LIST_ROWS, _opts, app, check_range, check_text, err, out
from skconsole.durations import parse_duration
from skconsole.errors import ConfigError
from skconsole.ops.model import STATUS_LABELS, ActionResult, Preview, ProgressCallback, Selection
from skconsole.stats import HungPolicy
from skconsole.text import printable, quoted

# -- the selection syntax, shared by every action -----------------------------------------
IdsOpt = Annotated[
    list[str] | None, typer.Option("--id", help="A job id (repeat for several)", show_default=False)
]
GroupOpt = Annotated[
    str | None,
    typer.Option("--group", help="A failure group: its signature or short id (status failures)"),
]
TypeOpt = Annotated[str | None, typer.Option("--type", help="Only jobs of this task type")]
StatusOpt = Annotated[
    list[int] | None,
    typer.Option("--status", help="Only jobs in this status code (repeat for several)"),
]
OlderOpt = Annotated[
    str | None,
    typer.Option("--older-than", help="Only jobs with no activity for this long, e.g. 30d, 2h"),
]
DryRunOpt = Annotated[
    bool, typer.Option("--dry-run", help="Show the count and a sample; change nothing")
]
YesOpt = Annotated[bool, typer.Option("--yes", "-y", help="Do not ask for confirmation")]
JsonOpt = Annotated[bool, typer.Option("--json", help="One JSON document (shape in the README)")]


def _uuid(text: str) -> UUID:
    try:
        return UUID(text.strip())
    except ValueError:
        raise ConfigError(f"invalid job id {quoted(text)}: expected a UUID") from None


def selection_from(
    ids: list[str] | None,
    group: str | None,
    task_type: str | None,
    statuses: list[int] | None,
    older_than: str | None,
) -> Selection:
    """The Selection the command-line options describe (it checks them: exit 2 if bad)."""
    return Selection(
        ids=tuple(dict.fromkeys(_uuid(i) for i in ids or ())),
        group=group,
        task_type=task_type,
        statuses=tuple(sorted(set(statuses or ()))),
        older_than_seconds=(
            parse_duration(older_than, option="--older-than") if older_than is not None else None
        ),
    )


# -- output -----------------------------------------------------------------------------
def _print_json(doc: dict[str, Any]) -> None:
    # ensure_ascii (json's default) writes every control character as a \u escape
    print(json.dumps(doc, default=str, ensure_ascii=True))


def _sample_table(preview: Preview) -> Table:
    t = Table(show_edge=False, pad_edge=False)
    for col in ("job", "type", "status", "priority", "errors", "last active", "note"):
        t.add_column(col, justify="right" if col in ("priority", "errors") else "left")
    for r in preview.sample:
        t.add_row(
            str(r.task_id),
            escape(r.task_type),
            STATUS_LABELS.get(r.status, str(r.status)),
            str(r.priority),
            str(r.error_count),
            r.at.strftime("%Y-%m-%d %H:%M:%S") if r.at else "-",
            escape((r.note or "")[:80]),
        )
    return t


def _show_preview(preview: Preview, verb: str, noun: str) -> None:
    scope = escape(preview.selection.describe())
    out.print(f"would {verb} {preview.count:,} {noun} ({scope})", highlight=False)
    if preview.sample:
        shown = len(preview.sample)
        more = f", first {shown} shown" if preview.count > shown else ""
        out.print(f"sample{more}:")
        out.print(_sample_table(preview))


def _show_result(result: ActionResult, done: str, noun: str) -> None:
    text = f"{done} {result.changed:,} {noun}"
    if result.skipped_changed_state:
        text += (
            f"; {result.skipped_changed_state:,} changed state meanwhile (or were busy) "
            "and were left alone"
        )
    unchanged = int(result.details.get("unchanged", 0) or 0)
    if unchanged:
        text += f"; {unchanged:,} already had that priority"
    parked = int(result.details.get("parked_faulted", 0) or 0)
    if parked:
        text += f" ({parked:,} past max attempts, parked as Faulted)"
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


def _confirm(prompt: str, yes: bool, *, type_count: int | None = None) -> None:
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


def _run(
    ctx: typer.Context,
    *,
    name: str,
    verb: str,
    done: str,
    noun: str,
    selection: Selection,
    preview: Callable[[Any, Selection], Preview],
    execute: Callable[[Any, Preview, ProgressCallback], ActionResult],
    dry_run: bool,
    yes: bool,
    as_json: bool,
    type_count: bool = False,
) -> None:
    """Preview, then (unless --dry-run) confirm, execute on the previewed ids and report."""
    db = _opts(ctx).open(f"skconsole-{name}", write=not dry_run)
    with db.connect() as conn:
        p = preview(conn, selection)
        if dry_run:
            if as_json:
                _print_json(p.as_dict())
            else:
                _show_preview(p, verb, noun)
            return
        if p.count == 0:
            if as_json:
                _print_json(
                    {**ActionResult(name, 0, 0, 0).as_dict(), "selection": p.selection.as_dict()}
                )
            else:
                out.print(f"nothing to {verb} ({escape(p.selection.describe())})", highlight=False)
            return
        if not as_json:
            _show_preview(p, verb, noun)
        _confirm(
            f"{verb.capitalize()} {p.count:,} {noun}?",
            yes,
            type_count=p.count if type_count else None,
        )
        with _progress(p.count, f"{name}", enabled=not as_json) as on_progress:
            result = execute(conn, p, on_progress)
    if as_json:
        _print_json({**result.as_dict(), "selection": p.selection.as_dict()})
    else:
        _show_result(result, done, noun)


# -- the actions ----------------------------------------------------------------------------
@app.command()
def requeue(
    ctx: typer.Context,
    ids: IdsOpt = None,
    group: GroupOpt = None,
    task_type: TypeOpt = None,
    statuses: StatusOpt = None,
    older_than: OlderOpt = None,
    reset_errors: Annotated[
        bool, typer.Option("--reset-errors", help="Start the error count again from 0")
    ] = False,
    dry_run: DryRunOpt = False,
    yes: YesOpt = False,
    as_json: JsonOpt = False,
) -> None:
    """Post failed jobs again, ready now (statuses 4, 5, 6 by default; 7 when selected)."""
    sel = selection_from(ids, group, task_type, statuses, older_than)
    _run(
        ctx,
        name="requeue",
        verb="requeue",
        done="requeued",
        noun="job(s)",
        selection=sel,
        preview=lambda conn, s: ops.requeue.preview(conn, s),
        execute=lambda conn, p, cb: ops.requeue.execute(
            conn,
            p.selection,
            actor=ops.Actor.current(),
            ids=p.ids,
            reset_errors=reset_errors,
            on_progress=cb,
        ),
        dry_run=dry_run,
        yes=yes,
        as_json=as_json,
    )


@app.command()
def bump(
    ctx: typer.Context,
    ids: IdsOpt = None,
    group: GroupOpt = None,
    task_type: TypeOpt = None,
    statuses: StatusOpt = None,
    older_than: OlderOpt = None,
    by: Annotated[
        int | None, typer.Option("--by", help="Lower the priority number by N (floor 0)")
    ] = None,
    to: Annotated[int | None, typer.Option("--to", help="Set the priority to N")] = None,
    dry_run: DryRunOpt = False,
    yes: YesOpt = False,
    as_json: JsonOpt = False,
) -> None:
    """Run waiting jobs sooner: lower their priority number (--by N) or set it (--to N)."""
    ops.bump.check_change(by, to)
    sel = selection_from(ids, group, task_type, statuses, older_than)
    _run(
        ctx,
        name="bump",
        verb="bump",
        done="bumped",
        noun="waiting job(s)",
        selection=sel,
        preview=lambda conn, s: ops.bump.preview(conn, s, by=by, to=to),
        execute=lambda conn, p, cb: ops.bump.execute(
            conn, p.selection, actor=ops.Actor.current(), ids=p.ids, by=by, to=to, on_progress=cb
        ),
        dry_run=dry_run,
        yes=yes,
        as_json=as_json,
    )


@app.command()
def purge(
    ctx: typer.Context,
    older_than: OlderOpt = None,
    ids: IdsOpt = None,
    group: GroupOpt = None,
    task_type: TypeOpt = None,
    statuses: StatusOpt = None,
    include_faulted: Annotated[
        bool, typer.Option("--include-faulted", help="Delete 5 Faulted results too")
    ] = False,
    dry_run: DryRunOpt = False,
    yes: YesOpt = False,
    as_json: JsonOpt = False,
) -> None:
    """Delete old final results (3, 6, 7; 5 with --include-faulted), in short batches."""
    sel = selection_from(ids, group, task_type, statuses, older_than)
    _run(
        ctx,
        name="purge",
        verb="purge",
        done="purged",
        noun="result(s)",
        selection=sel,
        preview=lambda conn, s: ops.purge.preview(conn, s, include_faulted=include_faulted),
        execute=lambda conn, p, cb: ops.purge.execute(
            conn,
            p.selection,
            actor=ops.Actor.current(),
            ids=p.ids,
            include_faulted=include_faulted,
            on_progress=cb,
        ),
        dry_run=dry_run,
        yes=yes,
        as_json=as_json,
        type_count=True,
    )


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
) -> None:
    """Re-post hung jobs now (as `status inflight` judges them: the worker's lease has
    lapsed, so it has stopped them or is dead), recording why."""
    policy = HungPolicy(parse_duration(unowned_after, option="--unowned-after", minimum=1.0))
    sel = selection_from(ids, None, task_type, None, older_than)
    _run(
        ctx,
        name="reap",
        verb="reap",
        done="reaped",
        noun="hung job(s)",
        selection=sel,
        preview=lambda conn, s: ops.reap.preview(conn, s, policy=policy),
        execute=lambda conn, p, cb: ops.reap.execute(
            conn, p.selection, actor=ops.Actor.current(), ids=p.ids, policy=policy, on_progress=cb
        ),
        dry_run=dry_run,
        yes=yes,
        as_json=as_json,
    )


@app.command()
def cancel(
    ctx: typer.Context,
    ids: IdsOpt = None,
    group: GroupOpt = None,
    task_type: TypeOpt = None,
    statuses: StatusOpt = None,
    older_than: OlderOpt = None,
    dry_run: DryRunOpt = False,
    yes: YesOpt = False,
    as_json: JsonOpt = False,
) -> None:
    """Take waiting jobs out of the queue: 7 Cancelled."""
    sel = selection_from(ids, group, task_type, statuses, older_than)
    _run(
        ctx,
        name="cancel",
        verb="cancel",
        done="cancelled",
        noun="waiting job(s)",
        selection=sel,
        preview=lambda conn, s: ops.cancel.preview(conn, s),
        execute=lambda conn, p, cb: ops.cancel.execute(
            conn, p.selection, actor=ops.Actor.current(), ids=p.ids, on_progress=cb
        ),
        dry_run=dry_run,
        yes=yes,
        as_json=as_json,
    )


def _switch(
    ctx: typer.Context, name: str, task_type: str | None, dry_run: bool, yes: bool, as_json: bool
) -> None:
    if not task_type:
        raise ConfigError(f"{name} needs a task type: skconsole {name} TYPE")
    module = ops.pause if name == "pause" else ops.resume
    sel = Selection(task_type=task_type)
    db = _opts(ctx).open(f"skconsole-{name}", write=not dry_run)
    with db.connect() as conn:
        p = module.preview(conn, sel)
        state = "paused" if p.details["paused"] else "running"
        if dry_run:
            if as_json:
                _print_json(p.as_dict())
            else:
                out.print(
                    f"{escape(task_type)} is {state} ({p.details['waiting']:,} waiting, "
                    f"{p.details['in_flight']:,} in flight); {name} would "
                    f"{'change it' if p.count else 'change nothing'}",
                    highlight=False,
                )
            return
        if p.count:
            _confirm(f"{name.capitalize()} task type {task_type}?", yes)
        result = module.execute(conn, sel, actor=ops.Actor.current())
    if as_json:
        _print_json({**result.as_dict(), "selection": sel.as_dict()})
    elif result.changed:
        out.print(
            f"{escape(task_type)} {'paused' if name == 'pause' else 'resumed'} "
            f"(audit #{result.audit_id})",
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
    _switch(ctx, "pause", task_type_arg or task_type, dry_run, yes, as_json)


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
    _switch(ctx, "resume", task_type_arg or task_type, dry_run, yes, as_json)


@app.command()
def audit(
    ctx: typer.Context,
    limit: Annotated[
        int, typer.Option("--limit", help=f"How many, newest first (1 to {MAX_LIST_ROWS:,})")
    ] = 50,
    action: Annotated[str | None, typer.Option("--action", help="Only this action")] = None,
    as_json: JsonOpt = False,
) -> None:
    """The operator actions executed on this queue: who, when, what, how many."""
    check_range("--limit", limit, 1, MAX_LIST_ROWS)
    check_text("--action", action)
    db = _opts(ctx).open("skconsole-audit")
    with db.connect() as conn:
        rows = ops.audit.entries(conn, limit=limit, action=action)
    if as_json:
        _print_json({"entries": [r.as_dict() for r in rows]})
        return
    t = Table(title="Audit", title_justify="left")
    for col in ("#", "when", "who", "action", "selection", "changed", "left alone"):
        t.add_column(col, justify="right" if col in ("#", "changed", "left alone") else "left")
    for r in rows:
        details = r.details or {}
        t.add_row(
            str(r.audit_id),
            r.at.strftime("%Y-%m-%d %H:%M:%S"),
            escape(f"{r.user}@{r.host}"),
            r.action,
            escape(json.dumps(r.selection, default=str)[:60]),
            f"{r.count:,}",
            f"{int(details.get('skipped_changed_state', 0) or 0):,}",
        )
    out.print(t)
    if not rows:
        out.print("no operator action recorded yet")
