"""``skconsole check``: one verdict for cron, Kubernetes probes and monitoring agents.

It prints the Nagios plugin output of :mod:`skconsole.check` (a summary line with
perfdata, then one line per finding) and exits with its code: 0 OK, 1 WARNING,
2 CRITICAL, 3 UNKNOWN. UNKNOWN is also what any failure to check becomes (the
server cannot be reached, the schema is missing or newer, a query fails, an
option's value is out of bounds): one line, never a traceback, and no other exit
code, because a monitoring agent reads anything but 0-3 as a broken plugin
(only Click's own usage errors, an unknown option, still exit 2).

A probe must not change what it watches: check never creates or upgrades the
schema (as if ``--no-setup`` were given) and only reads, so it runs on a
read-only session, a standby or with a read-only role.
"""

from __future__ import annotations

import dataclasses
from typing import Annotated

import psycopg
import typer

from skconsole import check as checks
from skconsole import health
from skconsole.cli.app import app
from skconsole.cli.options import JsonOpt, check_range, options_of
from skconsole.cli.output import print_json
from skconsole.db.connect import connect_error_message
from skconsole.durations import format_limit, parse_duration
from skconsole.errors import SkconsoleError

#: --warn-hung: at most this many (a count of jobs)
MAX_WARN_HUNG = 1_000_000


def _emit(report: checks.Report, as_json: bool) -> None:
    if as_json:
        print_json(report.as_dict())
    else:
        for line in report.lines():  # already printable (skconsole.check), never wrapped
            print(line)
    raise typer.Exit(report.exit_code)


def _unknown(exc: BaseException) -> str:
    """Why nothing could be checked, in one line."""
    if isinstance(exc, psycopg.OperationalError):
        return connect_error_message("", exc)
    if isinstance(exc, SkconsoleError):
        return str(exc)
    first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
    return f"database error: {first}"


@app.command()
def check(
    ctx: typer.Context,
    as_json: JsonOpt = False,
    warn_hung: Annotated[
        int, typer.Option("--warn-hung", help="WARNING from this many hung jobs (1 and up)")
    ] = checks.Thresholds.hung_warn,
    critical_hung_after: Annotated[
        str,
        typer.Option(
            "--critical-hung-after",
            help="CRITICAL when a hung job's worker has been silent this long (nothing reaps it)",
        ),
    ] = format_limit(checks.Thresholds.hung_critical_s),
    horizon_warn: Annotated[
        str,
        typer.Option(
            "--horizon-warn", help="WARNING when a transaction holds the xmin horizon this long"
        ),
    ] = format_limit(health.HORIZON_WARN_S),
    lock_wait_warn: Annotated[
        str,
        typer.Option(
            "--lock-wait-warn", help="WARNING when a session waits this long for a queue table"
        ),
    ] = format_limit(health.LOCK_WAIT_WARN_S),
    dead_share_warn: Annotated[
        float,
        typer.Option(
            "--dead-share-warn",
            help="WARNING when this share of a queue table's rows is dead (0 to 1)",
        ),
    ] = health.DEAD_SHARE_WARN,
    skip: Annotated[
        list[str] | None,
        typer.Option(
            "--skip",
            help="Leave a check out (repeatable): " + ", ".join(checks.CHECKS),
            show_default=False,
        ),
    ] = None,
) -> None:
    """SLOs, hung jobs, dead workers and table health as one verdict (exit 0 OK, 1 WARNING,
    2 CRITICAL, 3 UNKNOWN), the Nagios plugin way; reads only, and never sets up the schema."""
    try:
        check_range("--warn-hung", warn_hung, 1, MAX_WARN_HUNG)
        check_range("--dead-share-warn", dead_share_warn, 0.0, 1.0)
        left_out = checks.skipped(skip or [])
        limits = checks.Thresholds(
            hung_warn=warn_hung,
            hung_critical_s=parse_duration(critical_hung_after, option="--critical-hung-after"),
        )
        table_limits = health.Thresholds(
            horizon_s=parse_duration(horizon_warn, option="--horizon-warn"),
            dead_share=dead_share_warn,
            lock_wait_s=parse_duration(lock_wait_warn, option="--lock-wait-warn"),
        )
        db = dataclasses.replace(options_of(ctx), setup=False).open(
            "skconsole-check", degraded_ok=True
        )
        with db.connect() as conn:
            report = checks.run(conn, limits, table_limits, left_out)
    except (SkconsoleError, psycopg.Error) as exc:
        # a bad option too: the plugin convention has no other code for "could not check"
        report = checks.Report(error=_unknown(exc))
    _emit(report, as_json)
