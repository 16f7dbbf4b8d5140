"""How an operator action runs as a command, once for every command that runs one.

Preview, confirm (a terminal prompt that defaults to No; ``--yes`` for scripts, and
required when stdin is not a terminal), execute on the previewed ids, report;
``--dry-run`` only previews, and works in read-only mode too. Here: the selection
syntax (``--id``, ``--group``, ``--type``, ``--status``, ``--older-than``,
``--where``) and :func:`job_command`, which makes a job action's command from its
spec and a function of its own options; the confirmation; the preview, progress and
result as text or one JSON document; and the flows of a job action and of a type's
settings (limit, slo). The commands are :mod:`skconsole.cli.ops` and its siblings.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from string import hexdigits
from typing import Any
from uuid import UUID

import typer
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from skconsole import ops, read
from skconsole.cli.options import (
    CONTEXT,
    ActionFlags,
    GroupOpt,
    IdsOpt,
    OlderOpt,
    StatusOpt,
    TypeOpt,
    WhereOpt,
    cli_actor,
    option,
    options_of,
    parameters_of,
    takes_flags,
    typer_command,
)
from skconsole.cli.output import err, out, print_json
from skconsole.cli.view_table import column, print_items
from skconsole.core.durations import parse_duration
from skconsole.core.errors import ConfigError
from skconsole.core.json_types import Json
from skconsole.core.payload_terms import parse_terms
from skconsole.core.status import JobStatus
from skconsole.core.text import printable, quoted
from skconsole.ops.model import ActionResult, JobRow, Preview, ProgressCallback, Selection
from skconsole.ops.spec import P
from skconsole.ops.type_actions import S
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
    ids: list[str] | None = None,
    group: str | None = None,
    task_type: str | None = None,
    statuses: list[int] | None = None,
    older_than: str | None = None,
    where: list[str] | None = None,
) -> Selection:
    """The Selection the command-line options describe (it checks them: exit 2 if bad); an
    option a command does not take is None."""
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


#: the selection options, in the order most job commands list them
SELECTION = ("ids", "group", "task_type", "statuses", "older_than", "where")
_SELECTION_OPTIONS = {
    name: option(name, annotation)
    for name, annotation in zip(
        SELECTION, (IdsOpt, GroupOpt, TypeOpt, StatusOpt, OlderOpt, WhereOpt), strict=True
    )
}


#: what a command does once its action ran (a waves requeue: carry the plan on)
After = Callable[[typer.Context, ActionResult, ActionFlags], None]


def job_command(
    action: ops.JobAction[P], *, selection: tuple[str, ...] = SELECTION, after: After | None = None
) -> Callable[[Callable[..., P]], Callable[..., None]]:
    """A job action's command, from a function of its own options that returns its
    parameters: Typer sees the ``selection`` options (in that order), then the
    function's, then --dry-run, --yes, --json and --wide; the command makes the
    parameters (checking them first), then the selection, then runs the action (and
    then ``after``, with its result)."""

    def decorate(params_of: Callable[..., P]) -> Callable[..., None]:
        own = parameters_of(params_of)

        def run(*, ctx: typer.Context, flags: ActionFlags, **given: Any) -> None:
            params = params_of(**{p.name: given.pop(p.name) for p in own})
            result = run_job_action(ctx, action, selection_from(ctx, **given), params, flags)
            if after is not None and result is not None:
                after(ctx, result, flags)

        chosen = [_SELECTION_OPTIONS[name] for name in selection]
        flagged = typer_command(
            run, [CONTEXT, *chosen, *own, option("flags", ActionFlags)], like=params_of
        )
        return takes_flags(wide=True)(flagged)

    return decorate


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


def forecast_line(preview: Preview) -> str | None:
    """The preview's forecast as a line of text (escaped), or None without one."""
    if preview.forecast is None:
        return None
    return "forecast: " + escape(printable(preview.forecast.text))


def show_forecast(preview: Preview) -> None:
    """Print the preview's forecast, when it has one (before a confirmation, in a dry run)."""
    line = forecast_line(preview)
    if line is not None:
        out.print(line, highlight=False)


def _show_preview(preview: Preview, verb: str, noun: str, wide: bool, phrase: str = "") -> None:
    scope = escape(preview.selection.describe())
    words = escape(printable(phrase))
    out.print(f"would {verb} {preview.count:,} {noun} ({scope}){words}", highlight=False)
    show_forecast(preview)
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


def print_outcome(result: ActionResult, selection: Selection) -> None:
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
        show_forecast(preview)


def run_job_action(
    ctx: typer.Context,
    action: ops.JobAction[P],
    selection: Selection,
    params: P,
    flags: ActionFlags,
) -> ActionResult | None:
    """Preview, then (unless --dry-run) confirm, execute on the previewed ids and report;
    the result (None: nothing ran)."""
    verb, noun = action.wording.verb, action.wording.noun
    db = options_of(ctx).open(f"skconsole-{action.name}", write=not flags.dry_run)
    with db.connect() as conn:
        p = action.preview(conn, selection, params)
        if flags.dry_run:
            if flags.as_json:
                print_json(p.as_dict())
            else:
                _show_preview(p, verb, noun, flags.wide, params.phrase())
            return None
        if p.count == 0:
            if flags.as_json:
                print_outcome(ActionResult(action.name, 0, 0, 0), p.selection)
            else:
                out.print(f"nothing to {verb} ({escape(p.selection.describe())})", highlight=False)
            return None
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
                actor=cli_actor(),
                ids=p.ids,
                on_progress=on_progress,
            )
    if flags.as_json:
        print_outcome(result, p.selection)
    else:
        _show_result(result, action)
    return result


def details_side(value: object) -> Mapping[str, Json]:
    """One side ("old" or "new") of an edit's or a type setting's details: a JSON object."""
    assert isinstance(value, Mapping), value
    return value


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
            escape(describe(details_side(p.details["old"]))),
            escape(describe(details_side(p.details["new"]))),
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
                print_outcome(ActionResult(action.name, 0, 0, 0, p.json_details()), sel)
            else:
                out.print(f"{escape(name)} already has {new}: nothing changed", highlight=False)
            return
        if not flags.as_json:
            show_forecast(p)
        confirm_or_exit(f"{question}: {old} -> {new}?", flags.yes)
        result = action.execute(conn, sel, params, actor=cli_actor())
    if flags.as_json:
        print_outcome(result, sel)
        return
    now = escape(describe(details_side(result.details.get("new", p.details["new"]))))
    audit_note = f" (audit #{result.audit_id})" if result.audit_id is not None else ""
    out.print(f"{escape(name)}: {now}{audit_note}", highlight=False)
    note = result.details.get("key_index_note")
    if isinstance(note, str):
        err.print(f"warning: key index {escape(printable(note))}", highlight=False)
