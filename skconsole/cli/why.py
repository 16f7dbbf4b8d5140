"""``skconsole why ID``: why one job waits, the causes most likely first, each with what fixes it.

The causes are :func:`skconsole.read.why`'s (the console's job detail shows the same,
key w). ``ID`` is a job id or a prefix only one job's id starts with. ``--json`` prints
``{"job": {...}, "causes": [{"code", "evidence", "fix"}], "facts": {code: {...}}}``.
"""

from __future__ import annotations

from typing import Annotated

import typer
from rich.markup import escape

from skconsole import read
from skconsole.cli.app import app
from skconsole.cli.options import JsonOpt, options_of
from skconsole.cli.output import out, print_json
from skconsole.core.durations import format_limit, parse_duration
from skconsole.core.errors import ConfigError
from skconsole.core.status import JobStatus
from skconsole.core.text import printable, quoted
from skconsole.read.health import HORIZON_WARN_S


@app.command()
def why(
    ctx: typer.Context,
    job_id: Annotated[
        str,
        typer.Argument(metavar="ID", help="A job id, or a prefix only one job's id starts with"),
    ],
    as_json: JsonOpt = False,
    horizon_after: Annotated[
        str,
        typer.Option(
            "--horizon-after",
            help="Count a transaction holding the xmin horizon once it is open this long",
        ),
    ] = format_limit(HORIZON_WARN_S),
) -> None:
    """Why a job waits: not due, paused, limit full, rate limited, no worker, jobs ahead,
    the xmin horizon, a row lock; most likely first, each with the command that fixes it."""
    horizon_s = parse_duration(horizon_after, option="--horizon-after")
    db = options_of(ctx).open("skconsole-why")
    with db.connect() as conn:
        task_id = read.resolve_job(conn, job_id)
        found = read.why(conn, task_id, horizon_s=horizon_s)
    if found is None:
        raise ConfigError(f"no job with id {quoted(job_id)}")
    if as_json:
        print_json(found.as_dict())
        return
    status = JobStatus.label_of(found.status)
    out.print(
        escape(printable(f"Job {found.task_id}  ·  {found.task_type}  ·  {status}")),
        highlight=False,
    )
    for n, cause in enumerate(found.causes, 1):
        out.print(f"{n}. [bold]{cause.code.value}[/]: {escape(cause.evidence)}", highlight=False)
        out.print(f"   fix: {escape(cause.fix)}", highlight=False)
