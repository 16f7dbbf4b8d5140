"""``skconsole incident export``: what the queue kept of a window of time, as one JSON
document (an incident bundle, :mod:`skconsole.read.incident`) to hand over, attach to a
postmortem, and open offline with ``skconsole --bundle FILE``.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Annotated

import typer

from skconsole.cli.app import app
from skconsole.cli.options import options_of
from skconsole.core.moments import parse_moment
from skconsole.ops import audit as ops_audit
from skconsole.ops.audit_line import what
from skconsole.read.incident import AuditLine, check_window, incident

incident_app = typer.Typer(
    help="Incident bundles: what the queue kept of a window of time, as one JSON document"
    " (skconsole --bundle FILE opens it offline).",
    no_args_is_help=True,
)
app.add_typer(incident_app, name="incident")

#: the most audit rows one bundle holds
AUDIT_KEPT = 10_000

_TIME_HELP = " 02:47 (UTC, the last one that came), 2h ago, or an ISO 8601 time with its zone"


@incident_app.command("export")
def export(
    ctx: typer.Context,
    since: Annotated[
        str,
        typer.Option("--since", help="The window's start:" + _TIME_HELP, metavar="<time>"),
    ],
    until: Annotated[
        str | None,
        typer.Option(
            "--until",
            help="The window's end (default: now):" + _TIME_HELP,
            show_default=False,
            metavar="<time>",
        ),
    ] = None,
) -> None:
    """Write the bundle of a window (at most 7 days) to stdout: the per-minute record per
    type and failure signature, the gauges (jobs waiting and running, workers alive), the
    failure groups with sample errors, the audited actions and the workers seen."""
    now = datetime.now(UTC)
    start = parse_moment(since, option="--since", now=now)
    end = now if until is None else parse_moment(until, option="--until", now=now)
    check_window(start, end)
    db = options_of(ctx).open("skconsole-incident", replica_ok=True)
    with db.connect() as conn:
        audited = ops_audit.entries_between(conn, since=start, until=end, limit=AUDIT_KEPT)
        lines = [AuditLine(a.audit_id, a.at, a.who, a.action, what(a), a.count) for a in audited]
        bundle = incident(conn, since=start, until=end, queue=db.description, audit=lines, now=now)
    typer.echo(json.dumps(bundle.as_dict(), indent=1))
