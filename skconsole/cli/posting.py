"""The commands that put things in the database: ``setup`` (the schema) and ``enqueue``
(jobs, from the command line or a file)."""

from __future__ import annotations

import itertools
import json
import sys
import uuid
from collections.abc import Iterator
from typing import Annotated

import typer
from rich.markup import escape

from skconsole.cli.app import app
from skconsole.cli.options import (
    MAX_ENQUEUE_COUNT,
    JsonOpt,
    check_range,
    check_text,
    options_of,
)
from skconsole.cli.output import err, out, progress_bar
from skconsole.core.durations import parse_duration, parse_time
from skconsole.core.errors import ConfigError, ReadOnlyError
from skconsole.db.schema import setup_schema
from skconsole.producer import (
    STREAM_CHUNK,
    Job,
    PostCounts,
    Producer,
    dotnet_payload,
    dotnet_type_name,
    validate_payload_json,
)
from skconsole.read.job_lookup import resolve_job


# -- setup -------------------------------------------------------------------------
@app.command()
def setup(ctx: typer.Context) -> None:
    """Create the Stakhanovise tables and skconsole's additions (idempotent)."""
    o = options_of(ctx)
    if o.read_only:
        raise ReadOnlyError("refused: setup writes to the database and read-only mode is on")
    db = o.database("skconsole-setup")
    with db.connect() as conn:
        changed = setup_schema(conn)
    out.print(
        f"schema {'created/updated' if changed else 'already up to date'} on {db.description}"
    )


# -- enqueue -------------------------------------------------------------------------
def _dotnet_payload_json(task_type: str, text: str, type_name: str) -> str:
    """``text`` (a JSON object) with ``"$type": type_name`` first, for a .NET consumer."""
    check_text("--dotnet-type", type_name)
    full_name = dotnet_type_name(type_name)
    if task_type != full_name:
        raise ConfigError(
            f"a Stakhanovise.NET consumer runs a {full_name} payload as task type {full_name},"
            f" not {task_type}: post it as TYPE {full_name}"
        )
    fields = json.loads(text)
    if not isinstance(fields, dict):
        raise ConfigError("--dotnet-type needs a JSON object as --payload (the type's properties)")
    return json.dumps(dotnet_payload(fields, type_name), ensure_ascii=False)


@app.command()
def enqueue(
    ctx: typer.Context,
    task_type: Annotated[str, typer.Argument(metavar="TYPE", help="Task type, e.g. emails.send")],
    payload: Annotated[str, typer.Option("--payload", help="JSON payload")] = "null",
    priority: Annotated[int, typer.Option("--priority", help="Lower runs first; >= 0")] = 0,
    delay: Annotated[
        str, typer.Option("--delay", help="Run no sooner than this from now, e.g. 10s, 5m")
    ] = "0s",
    run_at: Annotated[
        str | None,
        typer.Option(
            "--run-at",
            help="Run no sooner than this time, ISO 8601 with a zone, e.g. 2027-01-01T06:00:00Z",
        ),
    ] = None,
    key: Annotated[
        str | None,
        typer.Option("--key", help="Job key: a waiting job with the same key is not posted twice"),
    ] = None,
    count: Annotated[
        int,
        typer.Option(
            "--count",
            help=(
                f"Post this many copies (at most {MAX_ENQUEUE_COUNT:,}); up to"
                f" {STREAM_CHUNK:,} all or none, above that in committed chunks of"
                f" {STREAM_CHUNK:,}"
            ),
        ),
    ] = 1,
    source: Annotated[
        str | None, typer.Option("--source", help="Who posts (default: skconsole@host:pid)")
    ] = None,
    dotnet_type: Annotated[
        str | None,
        typer.Option(
            "--dotnet-type",
            help="For a Stakhanovise.NET consumer: the payload's .NET type,"
            " 'Namespace.Type, Assembly' (written as its \"$type\"; TYPE must be Namespace.Type)",
        ),
    ] = None,
    after: Annotated[
        list[str] | None,
        typer.Option(
            "--after",
            metavar="ID",
            help="Run only once this job has succeeded (repeatable; an id or a unique prefix,"
            " as skconsole job takes); cancelled if it ends Fatal or Cancelled",
        ),
    ] = None,
    after_failure: Annotated[
        str,
        typer.Option(
            "--after-failure",
            help="With --after: 'cancel' (default) or 'run' when one of them ends Fatal or Cancelled",
        ),
    ] = "cancel",
    as_json: JsonOpt = False,
) -> None:
    """Post jobs; prints their ids (one a line, or --json), as each chunk commits."""
    check_text("TYPE", task_type)
    check_text("--payload", payload)
    check_text("--key", key)
    check_text("--source", source)
    check_range("--count", count, 1, MAX_ENQUEUE_COUNT)
    if key is not None and count > 1:
        raise ConfigError("--key posts one job; it cannot be combined with --count > 1")
    text = validate_payload_json(payload)
    if dotnet_type is not None:
        text = _dotnet_payload_json(task_type, text, dotnet_type)
    seconds = parse_duration(delay, option="--delay")
    for prefix in after or ():
        check_text("--after", prefix)
    db = options_of(ctx).open("skconsole-enqueue", write=True)
    parents: list[uuid.UUID] = []
    if after:
        with db.connect() as conn:
            parents = [resolve_job(conn, prefix) for prefix in after]
    job = Job(
        task_type,
        priority=priority,
        delay=seconds,
        key=key,
        source=source,
        payload_json=text,
        run_at=None if run_at is None else parse_time(run_at, option="--run-at"),
        after=parents,
        after_failure=after_failure,
    )
    shown = _PostedIds(task_type, as_json)
    with Producer(db) as producer:
        if count == 1:
            result = producer.post_many([job])
            state = (
                "posted"
                if result.posted
                else ("re-run requested" if result.rerun_requested else "already waiting (key)")
            )
            if as_json:
                shown.start()
                shown.add([result.ids[0]], state)
                shown.end()
            else:
                out.print(f"{result.ids[0]} {state}")
            return
        pending: list[uuid.UUID] = []  # the ids of the chunk being posted

        def tracked() -> Iterator[Job]:
            for one in itertools.chain([job], (job.another() for _ in range(count - 1))):
                pending.append(one.task_id)
                yield one

        posted = 0  # committed so far: told after every chunk, the last one included

        def advance(done: PostCounts) -> None:
            nonlocal posted
            posted = done.posted
            shown.add(pending, "posted")  # copies have no key: every one of them posted
            pending.clear()
            bar(posted)

        shown.start()
        try:
            with progress_bar(count, f"posting {escape(task_type)}") as bar:
                producer.post_stream(tracked(), progress=advance)
        except KeyboardInterrupt:
            shown.end()
            err.print(f"interrupted: {posted:,} job(s) posted, the rest not", highlight=False)
            raise typer.Exit(130) from None
    shown.end()
    err.print(f"posted {posted:,} job(s) of type {escape(task_type)}", highlight=False)


class _PostedIds:
    """The posted jobs' ids on stdout as each chunk commits: one a line, or (``--json``)
    one JSON list of ``{id, type, outcome}`` (closed even when interrupted: it then
    holds the jobs committed)."""

    def __init__(self, task_type: str, as_json: bool) -> None:
        self.task_type = task_type
        self.as_json = as_json
        self.first = True

    def start(self) -> None:
        if self.as_json:
            sys.stdout.write("[")

    def add(self, ids: list[uuid.UUID], outcome: str) -> None:
        if not self.as_json:
            sys.stdout.write("".join(f"{i}\n" for i in ids))
            return
        for i in ids:
            item = {"id": str(i), "type": self.task_type, "outcome": outcome}
            sys.stdout.write(("" if self.first else ",") + "\n  " + json.dumps(item))
            self.first = False

    def end(self) -> None:
        if self.as_json:
            sys.stdout.write("\n]\n")
        sys.stdout.flush()
