"""``skconsole find`` and ``skconsole find-index``: find jobs by what their payload holds.

A ticket names a customer or an order; ``find --where payload.customer.id=42``
lists the jobs whose payload holds it (the comparison rule:
:mod:`skconsole.core.payload_terms`), with ``--type``, ``--status``, ``--since``
and ``--error``. A search is bounded (``--limit``, 50 unless told) and runs
under a statement timeout; ``--explain`` prints what it costs. ``find-index``
adds, lists and drops an expression index on one payload path (audited, like
every action), for a search made often on a big queue.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated

import typer
from rich.markup import escape

from skconsole import ops, read
from skconsole.cli.acting import confirm_or_exit, job_ids, show_dry_run
from skconsole.cli.app import app
from skconsole.cli.options import (
    ActionFlags,
    IdsOpt,
    JsonOpt,
    StatusOpt,
    TypeOpt,
    WhereOpt,
    WideOpt,
    cli_actor,
    options_of,
    takes_flags,
)
from skconsole.cli.output import out, print_json
from skconsole.cli.view_table import Listing, column, print_items
from skconsole.core.durations import parse_duration
from skconsole.core.find_query import DEFAULT_LIMIT, MAX_LIMIT, FindQuery
from skconsole.core.payload_terms import parse_path, parse_terms
from skconsole.core.text import printable
from skconsole.db.context import mapping_of
from skconsole.ops.find_index import FIND_INDEX_ADD, FIND_INDEX_DROP, RESULTS, FindIndexParams
from skconsole.views import Column as ViewColumn
from skconsole.views import find as find_view


@app.command()
def find(
    ctx: typer.Context,
    where: WhereOpt = None,
    task_type: TypeOpt = None,
    statuses: StatusOpt = None,
    since: Annotated[
        str | None,
        typer.Option("--since", help="Only jobs active within this long, e.g. 1h, 2d"),
    ] = None,
    error: Annotated[
        str | None,
        typer.Option("--error", help="Only jobs whose last error contains this (any case)"),
    ] = None,
    limit: Annotated[
        int, typer.Option("--limit", help=f"At most this many jobs (1 to {MAX_LIMIT:,})")
    ] = DEFAULT_LIMIT,
    explain: Annotated[
        bool, typer.Option("--explain", help="Print what the search costs (EXPLAIN ANALYZE)")
    ] = False,
    ids: IdsOpt = None,
    parent: Annotated[
        str | None,
        typer.Option("--parent", help="Only the jobs this job posted (an id or unique prefix)"),
    ] = None,
    group: Annotated[
        str | None,
        typer.Option("--group", help="Only the jobs of this failure group (its signature)"),
    ] = None,
    after: Annotated[
        str | None,
        typer.Option(
            "--after", help="Only the jobs still waiting for this job (an id or unique prefix)"
        ),
    ] = None,
    as_json: JsonOpt = False,
    wide: WideOpt = False,
) -> None:
    """Find jobs by payload field (--where payload.PATH=VALUE), type, status, age, error,
    id, the job that posted them, or failure group."""
    q = FindQuery(
        where=parse_terms(where),
        task_type=task_type,
        statuses=tuple(sorted(set(statuses or ()))),
        since_seconds=parse_duration(since, option="--since") if since is not None else None,
        error=error,
        limit=limit,
        ids=job_ids(ctx, ids),
        parent=job_ids(ctx, [parent])[0] if parent is not None else None,
        group=group,
        after=job_ids(ctx, [after])[0] if after is not None else None,
    )
    db = options_of(ctx).open("skconsole-find", replica_ok=True)
    with db.connect() as conn:
        if explain:
            for line in read.explain(conn, q):
                out.print(escape(printable(line)), highlight=False)
            return
        jobs = read.find(conn, q)
    if as_json:
        print_json({"jobs": [j.as_dict() for j in jobs], "limit": q.limit})
        return
    if not jobs:
        out.print("no job matches", highlight=False)
        return
    print_items(find_view.COLUMNS, jobs, title=None, wide=wide, edge=False)
    if len(jobs) == q.limit:
        out.print(f"(first {q.limit} shown: --limit N for more)", highlight=False)


find_index_app = typer.Typer(
    help="Search indexes: an expression index on one payload path, for a frequent search.",
    no_args_is_help=True,
)
app.add_typer(find_index_app, name="find-index")

PathArg = Annotated[
    str, typer.Argument(metavar="payload.PATH", help="The payload path, e.g. payload.customer.id")
]
IndexTypeOpt = Annotated[
    str | None, typer.Option("--type", help="Index only this task type's jobs (a partial index)")
]


def _change(
    ctx: typer.Context,
    action: ops.ServerAction[FindIndexParams],
    params: FindIndexParams,
    flags: ActionFlags,
) -> None:
    db = options_of(ctx).open(f"skconsole-{action.name}", write=not flags.dry_run)
    with db.connect() as conn:
        p = action.preview(conn, params=params)
        question = action.wording.question.format(phrase=params.phrase())
        if flags.dry_run or not p.count:
            nothing = action.wording.nothing.format(phrase=params.phrase())
            show_dry_run(p, flags.as_json, escape(f"would {question}" if p.count else nothing))
            if not p.count and not flags.dry_run:
                raise typer.Exit(1)
            return
        confirm_or_exit(f"{question} {action.warning}".strip(), flags.yes)
        result = action.execute(conn, params=params, actor=cli_actor())
    if flags.as_json:
        print_json(result.as_dict())
    elif result.changed:
        out.print(
            escape(f"{action.wording.done}{params.phrase()} ({params.index})")
            + f" (audit #{result.audit_id})",
            highlight=False,
        )
    else:
        assert action.wording.left_alone is not None
        out.print(escape(action.wording.left_alone.format(phrase=params.phrase())))
        raise typer.Exit(1)


def _index_command(
    action: ops.ServerAction[FindIndexParams], *, adding: bool
) -> Callable[..., None]:
    """The command that adds or drops the index on a payload path."""

    @takes_flags()
    def command(
        ctx: typer.Context, path: PathArg, task_type: IndexTypeOpt = None, *, flags: ActionFlags
    ) -> None:
        params = FindIndexParams(parse_path(path), task_type, adding=adding)
        _change(ctx, action, params, flags)

    return command


add = find_index_app.command(
    "add", help="Add an index on a payload path (CREATE INDEX CONCURRENTLY; audited)."
)(_index_command(FIND_INDEX_ADD, adding=True))
drop = find_index_app.command(
    "drop", help="Drop the index on a payload path (DROP INDEX CONCURRENTLY; audited)."
)(_index_command(FIND_INDEX_DROP, adding=False))


@find_index_app.command("list")
def list_indexes(ctx: typer.Context, as_json: JsonOpt = False, wide: WideOpt = False) -> None:
    """The search indexes: path, type, size, how often used, valid or not."""
    db = options_of(ctx).open("skconsole-find-index")
    with db.connect() as conn:
        indexes = read.find_indexes(conn, mapping_of(conn).regname(RESULTS))
    _INDEXES.print(indexes, as_json=as_json, wide=wide)


_INDEX_COLUMNS: tuple[ViewColumn[read.FindIndex], ...] = (
    column("index", lambda i: i.index, ident=True),
    column("path", lambda i: printable(i.path or "?"), flex=True),
    column("type", lambda i: printable(i.task_type or "(all)"), 1),
    column("bytes", lambda i: f"{i.index_bytes:,}", 2, right=True),
    column("scans", lambda i: f"{i.scans:,}", 3, right=True),
    column(
        "valid",
        lambda i: "NO (add again)" if not i.valid else "stale (add again)" if i.stale else "yes",
        4,
    ),
)

_INDEXES = Listing(
    "indexes",
    _INDEX_COLUMNS,
    read.FindIndex.as_dict,
    "no search index (skconsole find-index add payload.PATH [--type T])",
    edge=False,
)
