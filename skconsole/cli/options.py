"""What every command shares: the connection options, the bounds of the options and
their checks, and the option types more than one command takes (each defined once), with
the flags of an action command as one set (:func:`takes_flags`)."""

from __future__ import annotations

import inspect
import os
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from skconsole.core.actor import Actor, Origin
from skconsole.core.durations import parse_duration
from skconsole.core.errors import ConfigError, ReadOnlyError
from skconsole.core.text import is_valid_utf8, quoted

# -- bounds of the options (docs/reference/cli.md, its table of bounds) -----------------
#: enqueue --count: jobs posted by one command (they are built in memory first)
MAX_ENQUEUE_COUNT = 100_000_000
#: worker --concurrency, console --workers, demo --workers, bench --concurrency
MAX_CONCURRENCY = 10_000
#: worker --processes, bench --processes
MAX_PROCESSES = 64
#: worker --batch-size: jobs claimed per round trip
MAX_BATCH_SIZE = 10_000
#: worker --poll: between 10 ms and 1 hour
POLL_BOUNDS_S = (0.01, 3600.0)
#: worker --grace: at most 1 day
MAX_GRACE_S = 86_400.0
#: status --limit, audit --limit: rows listed
MAX_LIST_ROWS = 100_000
#: status metrics --sample: at most 1 hour between the two reads
MAX_SAMPLE_S = 3600.0
#: bench --jobs, --latency-jobs, --rate; demo --rate
MAX_BENCH_JOBS = 10_000_000
MAX_LATENCY_JOBS = 100_000
MAX_BENCH_RATE = 100_000.0
MAX_DEMO_RATE = 1_000.0


def cli_actor() -> Actor:
    """Who acts through a command, for its audit row: this process's actor, from the CLI."""
    return Actor.current(origin=Origin.CLI)


def _number(value: float) -> str:
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e15:
        value = int(value)
    return f"{value:,}" if isinstance(value, int) else f"{value:g}"


def check_range(option: str, value: float, low: float, high: float) -> None:
    """A ConfigError (exit 2) unless ``low <= value <= high`` (NaN never is)."""
    if not low <= value <= high:
        raise ConfigError(
            f"{option} must be between {_number(low)} and {_number(high)}, got {_number(value)}"
        )


def check_text(option: str, value: str | None) -> None:
    """A ConfigError (exit 2) when ``value`` is not UTF-8 text a query can carry."""
    if value is None:
        return
    if not is_valid_utf8(value):
        raise ConfigError(f"{option} is not valid UTF-8 text: {quoted(value)}")
    if "\x00" in value:
        raise ConfigError(f"{option} must not contain NUL characters")


def refresh_interval(text: str) -> float:
    """The console's --refresh, in seconds (0.5s to 60s)."""
    seconds = parse_duration(text, option="--refresh")
    if not 0.5 <= seconds <= 60:
        raise ConfigError(f"--refresh must be between 0.5s and 60s, got {quoted(text)}")
    return seconds


def read_timeout(text: str) -> float:
    """The --timeout of check and exporter, in seconds: how long one cycle of reads may
    take (:data:`~skconsole.check.bounds.READ_TIMEOUT_BOUNDS_S`)."""
    from skconsole.check.bounds import READ_TIMEOUT_BOUNDS_S

    low, high = READ_TIMEOUT_BOUNDS_S
    return parse_duration(text, option="--timeout", minimum=low, maximum=high)


# -- the connection options ---------------------------------------------------------------
if TYPE_CHECKING:  # imported where used: psycopg is not needed to print --help
    from skconsole.db.connect import Database
    from skconsole.db.mapping import TableMapping
    from skconsole.db.queues import QueueSpec


def named_queues(dsns: Sequence[str], queues_file: Path | None) -> tuple[QueueSpec, ...]:
    """The queues the options name: one per ``--dsn`` (else ``$SKCONSOLE_DSN``), or those
    of ``--queues FILE``; none when neither is given (the libpq environment or the
    embedded server)."""
    if queues_file is not None:
        if dsns:
            raise ConfigError(
                "--dsn and --queues both name queues: give the queues one way or the other"
            )
        from skconsole.db.queues import load_queues

        return load_queues(queues_file)
    if not dsns:
        env = os.environ.get("SKCONSOLE_DSN")
        dsns = [env] if env else []
    if len(dsns) == 1:
        from skconsole.db.queues import QueueSpec, name_from_dsn

        return (QueueSpec(name_from_dsn(dsns[0]), dsns[0]),)
    from skconsole.db.queues import queues_from_dsns

    return queues_from_dsns(dsns)


@dataclass
class Options:
    """The root command's connection options, as every command reads them. ``queues``:
    every queue named (``--dsn`` repeated or ``--queues``); ``dsn`` is the one queue's
    when one is named."""

    dsn: str | None
    data_dir: Path | None
    setup: bool
    read_only: bool
    queues: tuple[QueueSpec, ...] = ()
    #: the DSN came from --dsn (not from $SKCONSOLE_DSN): `db` commands refuse it
    dsn_given: bool = False
    #: --read-dsn: a hot standby the views of replicated rows read from (writes: ``dsn``)
    read_dsn: str | None = None
    #: the names of the queue's objects (--mapping, --schema, a queues file's one
    #: queue); None: Stakhanovise.NET's default names
    mapping: TableMapping | None = None

    @property
    def several(self) -> bool:
        return len(self.queues) > 1

    @property
    def reads_dsn(self) -> str | None:
        """Where a read of replicated rows goes: the standby of --read-dsn, else ``dsn``."""
        return self.read_dsn or self.dsn

    def database(
        self, application_name: str, *, read_only: bool | None = None, reads: bool = False
    ) -> Database:
        """The database, resolved (the embedded server started when none is named) but not
        checked: ``reads`` the standby of --read-dsn when one is named; ``read_only``
        instead of --read-only."""
        from skconsole.db.target import resolve_database

        return resolve_database(
            self.reads_dsn if reads else self.dsn,
            self.data_dir,
            read_only=self.read_only if read_only is None else read_only,
            application_name=application_name,
            mapping=self.mapping,
        )

    def open(
        self,
        application_name: str = "skconsole-cli",
        *,
        write: bool = False,
        degraded_ok: bool = False,
        replica_ok: bool = False,
    ) -> Database:
        """The database, its schema checked (``degraded_ok``: a read-only view that also
        works on Stakhanovise.NET's tables alone). ``replica_ok``: a view of the queue's
        rows alone, which a hot standby serves as well (--read-dsn), within its lag; a
        view of the server's own state (its sessions, locks, table statistics, xmin
        horizon) reads the primary."""
        if write and self.read_only:
            raise ReadOnlyError("refused: read-only mode (--read-only or SKCONSOLE_READ_ONLY=1)")
        from skconsole.db.target import open_database

        if replica_ok and not write and self.read_dsn is not None:
            return open_database(
                self.read_dsn,
                setup=False,
                read_only=True,
                application_name=application_name,
                degraded_ok=degraded_ok,
                mapping=self.mapping,
            )
        return open_database(
            self.dsn,
            self.data_dir,
            setup=self.setup,
            read_only=self.read_only,
            application_name=application_name,
            degraded_ok=degraded_ok and not write,
            mapping=self.mapping,
        )


def options_of(ctx: typer.Context, *, several: bool = False) -> Options:
    """The connection options the root command stored for this invocation; unless the
    command takes ``several`` queues (the console, ``check``, ``exporter``), one queue
    at most may be named."""
    opts = ctx.find_root().obj
    assert isinstance(opts, Options)
    if opts.several and not several:
        names = ", ".join(quoted(q.name) for q in opts.queues[:3])
        more = f" and {len(opts.queues) - 3} more" if len(opts.queues) > 3 else ""
        command = ctx.command_path.removeprefix(ctx.find_root().command_path).strip()
        raise ConfigError(
            f"`skconsole {command}` works on one queue, and {len(opts.queues)} were named"
            f" ({names}{more}): give one --dsn (the console, check and exporter take several)"
        )
    return opts


# -- options more than one command takes ----------------------------------------------------
JsonOpt = Annotated[
    bool, typer.Option("--json", help="One JSON document (its shape: docs/reference/json.md)")
]
WideOpt = Annotated[
    bool,
    typer.Option(
        "--wide", help="Tables: every column at full width, whatever the terminal's width"
    ),
]
LimitOpt = Annotated[
    int, typer.Option("--limit", help=f"At most this many rows (1 to {MAX_LIST_ROWS:,})")
]
DryRunOpt = Annotated[
    bool, typer.Option("--dry-run", help="Show the count and a sample; change nothing")
]
YesOpt = Annotated[bool, typer.Option("--yes", "-y", help="Do not ask for confirmation")]
# purge and retention set
IncludeFaultedOpt = Annotated[
    bool,
    typer.Option("--include-faulted", help="Delete 5 Faulted results too (they wait for you)"),
]
# worker and bench
ConcurrencyOpt = Annotated[
    int,
    typer.Option("--concurrency", help=f"Jobs run at once per process (1 to {MAX_CONCURRENCY:,})"),
]
ProcessesOpt = Annotated[
    int, typer.Option("--processes", help=f"Worker processes (1 to {MAX_PROCESSES})")
]
# the console (the root command) and demo
RefreshOpt = Annotated[
    str,
    typer.Option(
        "--refresh", help="Console: refresh interval (0.5s to 60s; + and - change it live)."
    ),
]
EngineWorkersOpt = Annotated[
    int,
    typer.Option(
        "--workers",
        help=f"Console: jobs the embedded engine runs at once (1 to {MAX_CONCURRENCY:,}).",
    ),
]
# exporter and serve: where they listen
HostOpt = Annotated[
    str,
    typer.Option(
        "--host",
        help="Address to listen on (0.0.0.0: every interface; the traffic is plain HTTP)",
    ),
]
PortOpt = Annotated[
    int, typer.Option("--port", help="TCP port (0: any free port, printed at start)")
]

# the selection syntax, shared by every action (and --group by `status failures`)
IdsOpt = Annotated[
    list[str] | None, typer.Option("--id", help="A job id (repeat for several)", show_default=False)
]
GroupOpt = Annotated[
    str | None,
    typer.Option("--group", help="A failure group: its signature or short id (status failures)"),
]
TypeOpt = Annotated[str | None, typer.Option("--type", help="Only jobs of this task type")]
StatusOpt = Annotated[
    list[int] | None,
    typer.Option("--status", help="Only jobs in this status code (repeat for several)"),
]
OlderOpt = Annotated[
    str | None,
    typer.Option("--older-than", help="Only jobs with no activity for this long, e.g. 30d, 2h"),
]
WhereOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--where",
        metavar="payload.PATH=VALUE",
        help="Only jobs whose payload field has this value, e.g. payload.customer.id=42"
        ' (compared as text: 42 matches 42 and "42"; repeat: all must match)',
        show_default=False,
    ),
]


# -- what an action command's options make of its run -------------------------------------
@dataclass(frozen=True, kw_only=True)
class ActionFlags:
    """How an action command runs and reports, from its --dry-run, --yes, --json and
    --wide (``wide`` stays False for a command without that option)."""

    dry_run: bool
    yes: bool
    as_json: bool
    wide: bool = False


# -- options as Typer sees them, taken as a set -------------------------------------------
def option(name: str, annotation: object, default: object = None) -> inspect.Parameter:
    """A command's parameter as Typer reads it (an ``Annotated`` option and its default)."""
    return inspect.Parameter(
        name, inspect.Parameter.KEYWORD_ONLY, default=default, annotation=annotation
    )


#: the parameter Typer gives the click context
CONTEXT = inspect.Parameter("ctx", inspect.Parameter.KEYWORD_ONLY, annotation=typer.Context)


def parameters_of(function: Callable[..., object]) -> list[inspect.Parameter]:
    """A function's parameters, their annotations evaluated (Typer needs the objects)."""
    return list(inspect.signature(function, eval_str=True).parameters.values())


def typer_command(
    run: Callable[..., None], parameters: Iterable[inspect.Parameter], like: Callable[..., object]
) -> Callable[..., None]:
    """``run`` (called with keywords only, as Typer calls a command) as Typer reads a
    function with these ``parameters``, in this order (the order ``--help`` lists them),
    and with ``like``'s name (the command's) and docstring (its help)."""
    params = [p.replace(kind=inspect.Parameter.KEYWORD_ONLY) for p in parameters]
    run.__name__, run.__qualname__ = like.__name__, like.__qualname__
    run.__doc__, run.__module__ = like.__doc__, like.__module__
    run.__signature__ = inspect.Signature(params, return_annotation=None)  # type: ignore[attr-defined]
    run.__annotations__ = {p.name: p.annotation for p in params}
    return run


_FLAGS = (
    option("dry_run", DryRunOpt, False),
    option("yes", YesOpt, False),
    option("as_json", JsonOpt, False),
    option("wide", WideOpt, False),
)


def takes_flags(*, wide: bool = False) -> Callable[[Callable[..., None]], Callable[..., None]]:
    """For a command whose parameter ``flags: ActionFlags`` (keyword-only, last) says how
    it runs: Typer sees --dry-run, --yes and --json (and --wide with ``wide``) in its
    place, and the command gets them as one :class:`ActionFlags`."""
    flags = _FLAGS if wide else _FLAGS[:3]

    def decorate(command: Callable[..., None]) -> Callable[..., None]:
        own = [p for p in parameters_of(command) if p.name != "flags"]

        def run(**given: Any) -> None:
            taken = ActionFlags(**{f.name: given.pop(f.name) for f in flags})
            command(**given, flags=taken)

        return typer_command(run, [*own, *flags], like=command)

    return decorate
