"""``skconsole job ID``: one job by its id or a unique prefix of it, as the console's
job detail shows it, with its lineage and every attempt kept.

The id comes from a ticket or a log line: a prefix is enough when only one job
starts with it (several: the command names a few and fails; none: it says so and
fails). Text is printable however hostile the payload or an error is.
"""

from __future__ import annotations

from typing import Annotated

import typer

from skconsole.cli.app import app
from skconsole.cli.options import JsonOpt, check_text, options_of
from skconsole.cli.output import out, print_json
from skconsole.read import JobDetail, JobNotFoundError, job, resolve_job, workers
from skconsole.views.job import job_text, owner_text


@app.command("job")
def job_command(
    ctx: typer.Context,
    task_id: Annotated[
        str,
        typer.Argument(
            metavar="ID", help="The job's id, or enough of its start to name one job (e.g. 3f2a9c)"
        ),
    ],
    as_json: JsonOpt = False,
) -> None:
    """One job in full: fields, payload, last error, lineage and every attempt kept
    (started, ended, worker host/pid/app version, outcome, error)."""
    check_text("ID", task_id)
    db = options_of(ctx).open("skconsole-job", degraded_ok=True, replica_ok=True)
    with db.connect() as conn:
        found = resolve_job(conn, task_id)
        detail = job(conn, found)
        known = workers(conn)
    if detail is None:  # purged between the two reads
        raise JobNotFoundError(f"job {found} no longer exists (purged?)")
    if as_json:
        print_json(detail.as_dict())
        return
    _print(detail, owner_text(detail, known))


def _print(detail: JobDetail, owner: str) -> None:
    """The console's copy text of the job (fields, payload, last error, attempts,
    children), each line through the printable console."""
    for line in job_text(detail, owner).splitlines():
        out.print(line, markup=False, highlight=False, soft_wrap=True)
