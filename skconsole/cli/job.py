"""``skconsole job ID``: one job by its id or a unique prefix of it, as the console's
job detail shows it, with its lineage and every attempt kept.

The id comes from a ticket or a log line: a prefix is enough when only one job
starts with it (several: the command names a few and fails; none: it says so and
fails). Text is printable however hostile the payload or an error is.

``--as-test --tasks MODULE`` prints the job as a pytest module instead
(:mod:`skconsole.views.reproduce`): the database does not know which module holds
the handler, so the option names it.
"""

from __future__ import annotations

from typing import Annotated

import typer

from skconsole.cli.app import app
from skconsole.cli.options import JsonOpt, check_text, options_of
from skconsole.cli.output import out, print_json
from skconsole.core.errors import ConfigError
from skconsole.read import JobDetail, JobNotFoundError, job, resolve_job, workers
from skconsole.views.job import job_text, owner_text
from skconsole.views.reproduce import check_tasks, job_as_test


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
    as_test: Annotated[
        bool,
        typer.Option(
            "--as-test",
            help="Print a pytest module instead: it runs the job's handler (from --tasks) on"
            " its payload in a scratch queue and asserts it succeeds, so it fails with"
            " today's error until the handler is fixed (> test_job_ID.py)",
        ),
    ] = False,
    tasks: Annotated[
        str | None,
        typer.Option(
            "--tasks",
            help="With --as-test: the module (or module:attr) `skconsole worker --tasks`"
            " runs, which holds the handler (the database does not record it)",
        ),
    ] = None,
) -> None:
    """One job in full: fields, payload, last error, lineage and every attempt kept
    (started, ended, worker host/pid/app version, outcome, error); with --as-test, a
    pytest module that runs it again."""
    check_text("ID", task_id)
    _check_as_test(as_test, as_json, tasks)
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
    if tasks is not None:  # --as-test: printable ASCII by construction
        typer.echo(job_as_test(detail, tasks), nl=False)
        return
    _print(detail, owner_text(detail, known))


def _check_as_test(as_test: bool, as_json: bool, tasks: str | None) -> None:
    """--as-test needs --tasks (checked before any connection); --tasks needs --as-test."""
    if as_test and as_json:
        raise ConfigError("--as-test prints a pytest module: it takes no --json")
    if as_test and tasks is None:
        raise ConfigError(
            "--as-test needs --tasks MODULE: the module `skconsole worker --tasks` runs,"
            " which holds the handler (the database does not record it)"
        )
    if tasks is not None:
        if not as_test:
            raise ConfigError("--tasks goes with --as-test (the module the test imports)")
        check_tasks(tasks)


def _print(detail: JobDetail, owner: str) -> None:
    """The console's copy text of the job (fields, payload, last error, attempts,
    children), each line through the printable console."""
    for line in job_text(detail, owner).splitlines():
        out.print(line, markup=False, highlight=False, soft_wrap=True)
