"""``skconsole vacuum`` and ``skconsole cancel-session``: the two actions of ``status health``.

Both preview what they would act on, ask (default No; ``--yes`` for scripts),
act once and write an audit row, and are refused in read-only mode; ``--dry-run``
only previews. ``cancel-session`` acts only on a session that holds up the queue
(:mod:`skconsole.ops.cancel_session`); the preview says why one does or does not,
and a session of another database is refused in one line. Text from the database (application names, queries) is shown
escaped: a session's ``application_name`` is whatever its client chose.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any

import typer
from rich.markup import escape

from skconsole.cli.acting import confirm_or_exit, show_dry_run
from skconsole.cli.app import app
from skconsole.cli.options import ActionFlags, cli_actor, options_of, takes_flags
from skconsole.cli.output import err, out, print_json
from skconsole.core.durations import format_age, format_limit, parse_duration
from skconsole.core.text import printable
from skconsole.ops.cancel_session import (
    CANCEL_SESSION,
    CancelSessionParams,
    holds_up,
    other_database,
    reason,
)
from skconsole.ops.model import Selection, seconds_in
from skconsole.ops.vacuum import VACUUM, VacuumParams
from skconsole.read.health import HORIZON_WARN_S, HOT_TABLES


def _text(value: Any) -> str:
    return escape(printable(str(value))) if value is not None else "-"


def _say(lines: list[str]) -> None:
    for line in lines:
        out.print(line, highlight=False)


@app.command()
@takes_flags()
def vacuum(
    ctx: typer.Context,
    table: Annotated[
        str, typer.Option("--table", help=f"The table: one of {', '.join(HOT_TABLES)}")
    ],
    *,
    flags: ActionFlags,
) -> None:
    """VACUUM (ANALYZE) one queue table now (audited)."""
    params = VacuumParams(table)
    opts = options_of(ctx)
    db = opts.open("skconsole-vacuum", write=not flags.dry_run)
    params.default_name(db.mapping)  # one line before anything runs
    with db.connect() as conn:
        p = VACUUM.preview(conn, params=params)
        d = p.details
        if not p.count:
            out.print(f"{escape(table)} does not exist in this database", highlight=False)
            raise typer.Exit(1)
        lines = [
            f"would vacuum {table}: {d['dead_rows']:,} dead and {d['live_rows']:,} live rows"
            + ("; a vacuum runs on it now" if d["vacuum_running"] else "")
            + ("" if d["may_vacuum"] else "; this role may not vacuum it")
        ]
        if flags.dry_run:
            show_dry_run(p, flags.as_json, *lines)
            return
        if not flags.as_json:
            _say(lines)
        confirm_or_exit(f"Vacuum {table}? {VACUUM.warning}", flags.yes)
        result = VACUUM.execute(conn, params=params, actor=cli_actor())
    if flags.as_json:
        print_json(result.as_dict())
    else:
        out.print(f"vacuumed {table} (audit #{result.audit_id})", highlight=False)


@app.command("cancel-session")
@takes_flags()
def cancel_session(
    ctx: typer.Context,
    pid: Annotated[int, typer.Option("--pid", help="The process id of the blocking session")],
    horizon_warn: Annotated[
        str,
        typer.Option(
            "--horizon-warn",
            help="A session holding the xmin horizon holds up the queue once it has held it"
            " this long while dead queue rows wait on it",
        ),
    ] = format_limit(HORIZON_WARN_S),
    *,
    flags: ActionFlags,
) -> None:
    """Cancel the statement of a session that holds up the queue: it blocks a lock on a queue
    table, or has held the xmin horizon too long over dead queue rows (audited)."""
    horizon_s = parse_duration(horizon_warn, option="--horizon-warn")
    params = CancelSessionParams(pid, horizon_s=horizon_s)
    db = options_of(ctx).open("skconsole-cancel-session", write=not flags.dry_run)
    with db.connect() as conn:
        p = CANCEL_SESSION.preview(conn, params=params)
        d = p.details
        if "eligible" not in d:  # no row: no such session (the preview holds only --pid)
            out.print(f"no session with pid {pid}", highlight=False)
            raise typer.Exit(1)
        elsewhere = other_database(d)
        if elsewhere is not None:  # nothing of it is this queue's business: one line
            if flags.dry_run and flags.as_json:
                print_json(p.as_dict())
                return
            err.print(f"refused: {_text(elsewhere)}", highlight=False, soft_wrap=True)
            raise typer.Exit(1)
        listed = d.get("blocks")
        blocks = ", ".join(str(b) for b in (listed if isinstance(listed, list) else ())) or "nobody"
        lines = [
            f"pid {pid}: user {_text(d.get('user'))}, application {_text(d.get('application'))},"
            f" {_text(d.get('state'))}, transaction open {format_age(seconds_in(d, 'xact_age_s'))};"
            f" blocks {blocks} on the queue tables;"
            f" holds the xmin horizon: {'yes' if d.get('holds_horizon') else 'no'}",
            f"query: {_text(d.get('query'))}",
            f"holds up the queue: {_text(holds_up(d))}" if p.count else _text(reason(d)),
        ]
        if str(d.get("state") or "").startswith("idle"):
            lines.append(
                "it runs no statement now: PostgreSQL ignores a cancel until it runs one"
                " (end it from its application, or set idle_in_transaction_session_timeout)"
            )
        if flags.dry_run:
            show_dry_run(p, flags.as_json, *lines)
            return
        if not flags.as_json:
            _say(lines)
        refusal = (
            f"pid {pid} does not hold up the queue"
            if not p.count
            else f"pid {pid} belongs to another role and its start time is hidden"
            " (pg_read_all_stats): it cannot be told from a later session with its pid"
            if d.get("backend_start") is None
            else None
        )
        if refusal is not None:
            err.print(f"refused: {refusal}", highlight=False, soft_wrap=True)
            raise typer.Exit(1)
        confirm_or_exit(f"Cancel the statement of pid {pid}? {CANCEL_SESSION.warning}", flags.yes)
        started = d["backend_start"]
        assert isinstance(started, datetime)  # refused above when hidden (None)
        at_preview = CancelSessionParams(pid, started, horizon_s=horizon_s)
        result = CANCEL_SESSION.execute(conn, Selection(), at_preview, actor=cli_actor())
    if flags.as_json:
        print_json(result.as_dict())
    elif result.changed:
        out.print(
            f"cancelled the statement of pid {pid} (audit #{result.audit_id})", highlight=False
        )
    else:
        why = result.details.get("reason") or "it no longer holds up the queue"
        out.print(
            f"left alone: pid {pid}: {_text(why)} (audit #{result.audit_id})", highlight=False
        )
        raise typer.Exit(1)
