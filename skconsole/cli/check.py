"""``skconsole check``: one verdict for cron, Kubernetes probes and monitoring agents.

It prints the Nagios plugin output of :mod:`skconsole.check.verdict` (a summary line with
perfdata, then one line per finding) and exits with its code: 0 OK, 1 WARNING,
2 CRITICAL, 3 UNKNOWN. UNKNOWN is also what any failure to check becomes (the
server cannot be reached, the schema is missing or newer, a query fails, an
option's value is out of bounds): one line, never a traceback, and no other exit
code, because a monitoring agent reads anything but 0-3 as a broken plugin
(only Click's own usage errors, an unknown option, still exit 2).

A probe must not change what it watches: check never creates or upgrades the
schema (as if ``--no-setup`` were given) and only reads, so it runs on a
read-only session, a standby or with a read-only role.

A probe must also answer on time: ``--timeout`` (10s unless told) bounds the
whole conversation with the server, connecting included, even when the network
path goes silent without a reset (:func:`skconsole.check.verdict.within`); past it the
answer is UNKNOWN, saying what it was waiting for. (Starting the embedded server,
when no server is named, is not counted: that is not monitoring a queue.)

With several queues (``--dsn`` repeated, ``--queues``) each is checked on a thread of
its own, all within the one ``--timeout``, so an unreachable queue holds up no other:
one verdict per queue, prefixed with its name, and the worst as the exit code
(:class:`skconsole.check.verdict.QueueReports`); ``--json`` is a list of the queues'
reports, each with its ``queue``.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from typing import Annotated

import psycopg
import typer

from skconsole.check import verdict as checks
from skconsole.cli.app import app
from skconsole.cli.options import JsonOpt, check_range, options_of, read_timeout
from skconsole.cli.output import print_json
from skconsole.core.durations import format_limit, parse_duration
from skconsole.core.errors import SkconsoleError
from skconsole.db.connect import Database, database_error_message
from skconsole.db.mapping import TableMapping
from skconsole.db.queues import QueueSpec
from skconsole.db.schema import check_schema
from skconsole.read import health

#: --warn-hung: at most this many (a count of jobs)
MAX_WARN_HUNG = 1_000_000
#: --timeout unless told
DEFAULT_TIMEOUT_S = checks.READ_TIMEOUT_S


def _emit(report: checks.Report | checks.QueueReports, as_json: bool) -> None:
    if as_json:
        print_json(report.as_dict() if isinstance(report, checks.Report) else report.as_list())
    else:
        for line in report.lines():  # already printable (skconsole.check.verdict), never wrapped
            print(line)
    raise typer.Exit(report.exit_code)


def _unknown(exc: BaseException) -> str:
    """Why nothing could be checked, in one line."""
    if isinstance(exc, psycopg.Error):
        return database_error_message(exc)[0]
    if isinstance(exc, SkconsoleError):
        return str(exc)
    first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
    return f"error: {first}"


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
    timeout: Annotated[
        str,
        typer.Option(
            "--timeout",
            help="UNKNOWN when the server has not answered everything within this long,"
            " connecting included, even through a silent network partition"
            f" ({format_limit(checks.READ_TIMEOUT_BOUNDS_S[0])}"
            f" to {format_limit(checks.READ_TIMEOUT_BOUNDS_S[1])})",
        ),
    ] = format_limit(DEFAULT_TIMEOUT_S),
) -> None:
    """SLOs, hung jobs, dead workers and table health as one verdict (exit 0 OK, 1 WARNING,
    2 CRITICAL, 3 UNKNOWN), the Nagios plugin way; reads only, and never sets up the schema."""
    opts = options_of(ctx, several=True)
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
        timeout_s = read_timeout(timeout)
        if opts.several:
            result: checks.Report | checks.QueueReports = _check_queues(
                opts.queues, opts.read_only, timeout_s, limits, table_limits, left_out
            )
        else:
            # outside the bound: it may start the embedded server (no server named)
            db = opts.database("skconsole-check", reads=True)
            result = _check(db, None, timeout_s, limits, table_limits, left_out)
    except (SkconsoleError, psycopg.Error) as exc:
        # a bad option too: the plugin convention has no other code for "could not check"
        error = checks.Report(error=_unknown(exc))
        result = (
            checks.QueueReports(tuple((q.name, error) for q in opts.queues))
            if opts.several
            else error
        )
    _emit(result, as_json)


def _check(
    db: Database,
    layout: TableMapping | None,
    timeout_s: float,
    limits: checks.Thresholds,
    table_limits: health.Thresholds,
    left_out: frozenset[str],
) -> checks.Report:
    """One queue's verdict within ``timeout_s``; raises what made it impossible."""

    def read(watch: checks.Watch) -> checks.Report:
        # never sets up the schema (as if --no-setup): a probe changes nothing
        queue = replace(db, mapping=layout) if layout is not None else db
        with watch.track(queue.connect(**checks.bounded_session(timeout_s))) as conn:
            watch.at("checking the schema")
            check_schema(conn, allow_degraded=True)
            return checks.run(conn, limits, table_limits, left_out, watch)

    return checks.within(timeout_s, read, name="skconsole-check")


def _check_queues(
    queues: tuple[QueueSpec, ...],
    read_only: bool,
    timeout_s: float,
    limits: checks.Thresholds,
    table_limits: health.Thresholds,
    left_out: frozenset[str],
) -> checks.QueueReports:
    """Every queue checked at once, each on a thread of its own within the one bound: a
    queue that cannot be reached is UNKNOWN and holds up no other."""

    def one(queue: QueueSpec) -> checks.Report:
        try:
            db = Database(queue.dsn, read_only=read_only, application_name="skconsole-check")
            return _check(db, queue.mapping, timeout_s, limits, table_limits, left_out)
        except (SkconsoleError, psycopg.Error) as exc:
            return checks.Report(error=_unknown(exc))

    with ThreadPoolExecutor(len(queues), thread_name_prefix="skconsole-check") as pool:
        reports = list(pool.map(one, queues))
    return checks.QueueReports(tuple((q.name, r) for q, r in zip(queues, reports, strict=True)))
