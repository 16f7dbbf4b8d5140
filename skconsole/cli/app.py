"""The Typer application: the root command (connection options; without a command,
the console), the ``db`` group, and :func:`main`, the entry point.

Every command accepts the connection options, before or after its name;
errors that a person can act on are printed as one line with a non-zero exit
code, never as a traceback (set SKCONSOLE_DEBUG=1 to see one). The commands
live in the modules beside this one and add themselves to :data:`app` when
``skconsole.cli`` is imported.
"""

from __future__ import annotations

import os
import sys
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated

import typer

from skconsole.cli.commands import load
from skconsole.cli.options import (
    MAX_CONCURRENCY,
    EngineWorkersOpt,
    Options,
    RefreshOpt,
    check_range,
    named_queues,
    refresh_interval,
)
from skconsole.core.errors import ConfigError, SkconsoleError
from skconsole.core.extras import require_extra
from skconsole.db.embedded import default_data_dir

app = typer.Typer(
    name="skconsole",
    help="A PostgreSQL job queue with a terminal operations console (Stakhanovise.NET layout)."
    " The connection options (--dsn, --read-dsn, --queues, --data-dir, --setup, --read-only,"
    " --mapping, --schema) go before or after the command.",
    no_args_is_help=False,
    pretty_exceptions_enable=False,
    add_completion=True,
)
db_app = typer.Typer(
    help="Run the embedded PostgreSQL server in the background.", no_args_is_help=True
)
app.add_typer(db_app, name="db")


def _print_version(asked: bool) -> None:
    """``--version``: the package's version and the schema version it speaks, then exit."""
    if not asked:
        return
    from skconsole.core.version import SCHEMA_VERSION, __version__

    print(f"skconsole {__version__} (schema version {SCHEMA_VERSION})")
    raise typer.Exit()


@app.callback(invoke_without_command=True)
def main_options(
    ctx: typer.Context,
    version: Annotated[
        bool,
        typer.Option(
            "--version",
            callback=_print_version,
            is_eager=True,
            help="Print the version (and the schema version it speaks) and exit.",
        ),
    ] = False,
    dsn: Annotated[
        list[str] | None,
        typer.Option(
            "--dsn",
            help="PostgreSQL DSN; default: $SKCONSOLE_DSN, else the libpq environment, else the"
            " embedded server. Repeat it to watch several queues (the console, check, exporter).",
            show_default=False,
            metavar="<dsn>",
        ),
    ] = None,
    read_dsn: Annotated[
        str | None,
        typer.Option(
            "--read-dsn",
            envvar="SKCONSOLE_READ_DSN",
            help="A hot standby of the queue's server to read from (the console, check,"
            " exporter, status, job, find, audit), sparing the primary; writes and the"
            " views of the server's own state still go to --dsn.",
            show_default=False,
            metavar="<dsn>",
        ),
    ] = None,
    queues: Annotated[
        Path | None,
        typer.Option(
            "--queues",
            envvar="SKCONSOLE_QUEUES",
            help="TOML file naming several queues (a queue table each: name, dsn, mapping,"
            " schema), for the console, check and exporter (docs/howto/several-queues.md).",
        ),
    ] = None,
    data_dir: Annotated[
        Path | None,
        typer.Option(
            "--data-dir",
            envvar="SKCONSOLE_DATA_DIR",
            help=f"Embedded server data directory (default: {default_data_dir()})",
        ),
    ] = None,
    setup: Annotated[
        bool,
        typer.Option(
            "--setup",
            help="Create the queue's missing objects first (only `skconsole setup` and this"
            " create anything; every other command says the queue is not set up).",
        ),
    ] = False,
    no_setup: Annotated[
        bool, typer.Option("--no-setup", hidden=True, help="The default now: kept for scripts.")
    ] = False,
    read_only: Annotated[
        bool,
        typer.Option(
            "--read-only",
            envvar="SKCONSOLE_READ_ONLY",
            help="Refuse every write; sessions are read-only too.",
        ),
    ] = False,
    mapping: Annotated[
        Path | None,
        typer.Option(
            "--mapping",
            envvar="SKCONSOLE_MAPPING",
            help="JSON file naming the queue's tables, channel and dequeue function"
            " (Stakhanovise.NET's QueuedTaskMapping); default: its default names.",
        ),
    ] = None,
    schema: Annotated[
        str | None,
        typer.Option(
            "--schema",
            envvar="SKCONSOLE_SCHEMA",
            help="The schema the queue's tables live in (every session's search_path).",
        ),
    ] = None,
    refresh: RefreshOpt = "2s",
    tasks: Annotated[
        str | None,
        typer.Option(
            "--tasks",
            help="Console: run these task handlers (module or module:attr) in an embedded engine.",
        ),
    ] = None,
    workers: EngineWorkersOpt = 4,
    open_at: Annotated[
        str | None,
        typer.Option(
            "--open",
            help="Console: open this place once the data is in: job:<id>, group:<12-hex group"
            " id> or search:<search line> (what `skconsole serve`'s /job/, /group/ and /search"
            " addresses start).",
            show_default=False,
            metavar="<place>",
        ),
    ] = None,
    past_at: Annotated[
        str | None,
        typer.Option(
            "--at",
            help="Console: the queue as it stood at a past minute, from its record, read-only:"
            " 02:47 (UTC, the last one that came), 2h ago, or an ISO 8601 time with its zone;"
            " [ and ] move a minute, { and } ten.",
            show_default=False,
            metavar="<time>",
        ),
    ] = None,
    bundle: Annotated[
        Path | None,
        typer.Option(
            "--bundle",
            help="Console: open an incident bundle (`skconsole incident export`) offline: no"
            " database, read-only, scrubbable like --at.",
            show_default=False,
            metavar="<file>",
        ),
    ] = None,
) -> None:
    """Without a command: the operations console (`skconsole demo` shows it on a live demo queue)."""
    from skconsole.db.mapping import TableMapping

    layout = TableMapping.from_file(mapping) if mapping is not None else TableMapping()
    layout = replace(layout, schema=schema) if schema is not None else layout
    named = named_queues(dsn or [], queues)
    if read_dsn is not None and len(named) > 1:
        raise ConfigError(
            "--read-dsn names the standby of one queue's server: with several queues,"
            " name each queue's standby as its --dsn"
        )
    one = named[0] if len(named) == 1 else None
    if one is not None and one.mapping is not None:  # a queues file's one queue: its layout
        layout = one.mapping
    ctx.obj = Options(
        dsn=one.dsn if one is not None else None,
        data_dir=data_dir,
        setup=setup and not no_setup,
        read_only=read_only,
        queues=named,
        dsn_given=bool(dsn),
        read_dsn=read_dsn,
        mapping=layout,
    )
    if open_at is not None and ctx.invoked_subcommand is not None:
        raise ConfigError("--open is the console's: give it without a command")
    for given, name in ((past_at, "--at"), (bundle, "--bundle")):
        if given is not None and ctx.invoked_subcommand is not None:
            raise ConfigError(f"{name} is the console's: give it without a command")
    if past_at is not None and bundle is not None:
        raise ConfigError("--at shows a database's past, --bundle a bundle's: give one")
    if open_at is not None and (past_at is not None or bundle is not None):
        raise ConfigError("--open opens a place of the queue now: the past keeps no jobs")
    if tasks is not None and (past_at is not None or bundle is not None):
        raise ConfigError("--tasks runs an engine on the queue now: the past runs none")
    if ctx.invoked_subcommand is None:
        require_extra("console", "the console")
        from skconsole.core.moments import parse_moment
        from skconsole.core.places import parse_place
        from skconsole.tui.launch import ConsoleOptions, run_console

        check_range("--workers", workers, 1, MAX_CONCURRENCY)
        when = (
            None if past_at is None else parse_moment(past_at, option="--at", now=datetime.now(UTC))
        )
        at = None if open_at is None else parse_place(open_at)
        if at is not None and len(named) > 1:
            raise ConfigError("--open opens a place of one queue: with several queues, give one")
        code = run_console(
            ConsoleOptions(
                dsn=one.dsn if one is not None else None,
                read_dsn=read_dsn,
                queues=named if len(named) > 1 else (),
                data_dir=data_dir,
                setup=setup and not no_setup,
                read_only=read_only,
                refresh=refresh_interval(refresh),
                tasks=tasks,
                workers=workers,
                mapping=layout,
                open_at=at,
                past_at=when,
                bundle=bundle,
            )
        )
        raise typer.Exit(code)


_VALUE_OPTIONS = ("--dsn", "--read-dsn", "--queues", "--data-dir", "--mapping", "--schema")
_FLAG_OPTIONS = ("--setup", "--no-setup", "--read-only")


def hoist_connection_options(argv: list[str]) -> list[str]:
    """Move the connection options to the front, where Click reads a group's options.

    People type ``skconsole worker --tasks m --dsn ...``; without this Click
    rejects ``--dsn`` there. Order is kept: when an option is given twice the
    later one still wins, but repeated ``--dsn`` name their queues in order (which
    a command of one queue refuses rather than guess which was meant).
    Nothing after ``--`` is touched.
    """
    hoisted: list[str] = []
    rest: list[str] = []
    i = 0
    while i < len(argv):
        arg = argv[i]
        if arg == "--":
            rest.extend(argv[i:])
            break
        if arg in _FLAG_OPTIONS or (arg.partition("=")[0] in _VALUE_OPTIONS and "=" in arg):
            hoisted.append(arg)
        elif arg in _VALUE_OPTIONS and i + 1 < len(argv):
            hoisted += [arg, argv[i + 1]]
            i += 1
        else:
            rest.append(arg)
        i += 1
    return hoisted + rest


#: the root command's options that take a value (the connection options among them)
_ROOT_VALUE_OPTIONS = (*_VALUE_OPTIONS, "--refresh", "--tasks", "--workers")


def command_name(argv: list[str]) -> str | None:
    """The command an argument list runs (None: the console), past the root's options."""
    i = 0
    while i < len(argv):
        arg = argv[i]
        if arg == "--":
            return None
        if not arg.startswith("-"):
            return arg
        i += 2 if arg in _ROOT_VALUE_OPTIONS else 1
    return None


def _database_error(exc: BaseException) -> bool:
    """A psycopg error (psycopg is imported only by the commands that connect)."""
    psycopg = sys.modules.get("psycopg")
    return psycopg is not None and isinstance(exc, psycopg.Error)


def _usage_errors() -> tuple[type[Exception], ...]:
    """What the command line raises for a usage error or an abort: Typer's own exception
    (recent Typers carry a Click of their own), or Click's (earlier Typers)."""
    errors: list[type[Exception]] = []
    own = getattr(typer, "TyperException", None)
    if isinstance(own, type) and issubclass(own, Exception):
        errors.append(own)
    try:
        import click
    except ImportError:
        pass
    else:
        errors += [click.ClickException, click.Abort]
    return tuple(errors)


def run_check(argv: list[str]) -> None:
    """``skconsole check`` keeps the monitoring contract even for its own mistakes: a
    usage error (an unknown option, a bad value) or a configuration error (a bad
    --queues file) is one ``SKCONSOLE UNKNOWN - ...`` line and exit 3, never the
    exit 2 a Nagios or Icinga would read as CRITICAL."""
    from skconsole.check.verdict import SERVICE
    from skconsole.core.text import printable

    def unknown(text: str) -> None:
        print(f"{SERVICE} UNKNOWN - {printable(text)}")
        sys.exit(3)

    try:
        code = app(args=argv, prog_name="skconsole", standalone_mode=False)
    except _usage_errors() as exc:  # a usage error, an abort
        format_message = getattr(exc, "format_message", None)
        unknown(format_message() if callable(format_message) else type(exc).__name__)
    except Exception as exc:
        if not (isinstance(exc, SkconsoleError) or _database_error(exc)):
            raise
        unknown(str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__)
    sys.exit(code if isinstance(code, int) else 0)


def print_error(message: str) -> None:
    """The one-line error (the CLI's console, rich, is imported only when a line is due:
    a worker starts without it)."""
    from skconsole.cli.output import print_error as printed

    printed(message)


def main() -> None:
    """Entry point: run the app, turning expected failures into one clear line."""
    debug = bool(os.environ.get("SKCONSOLE_DEBUG"))
    argv = hoist_connection_options(sys.argv[1:])
    command = command_name(argv)
    load(command, argv)
    try:
        if command == "check" and "--help" not in argv and not debug:
            run_check(argv)
        app(args=argv, prog_name="skconsole")
    except SkconsoleError as exc:
        if debug:
            raise
        print_error(str(exc))
        sys.exit(exc.exit_code)
    except Exception as exc:
        if debug or not _database_error(exc):
            raise
        from skconsole.db.connect import database_error_message

        message, code = database_error_message(exc)  # type: ignore[arg-type]
        print_error(message)
        sys.exit(code)
    except KeyboardInterrupt:
        sys.exit(130)
