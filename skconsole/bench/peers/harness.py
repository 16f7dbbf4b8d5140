"""The peers benchmark's one harness (the method is in the package docstring)."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import importlib.metadata
import importlib.util
import json
import math
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from types import FrameType
from typing import Any
from urllib.parse import quote, urlencode

import psycopg
from psycopg import conninfo, sql

import skconsole
from skconsole.bench import peers
from skconsole.bench.peers.common import PICKUP_ENV, Peer
from skconsole.bench.throughput import _percentile
from skconsole.core.json_types import JsonObject
from skconsole.db.connect import connect_error_message
from skconsole.worker.engine import WorkerConfig

LIBRARIES = ("skconsole", "pgqueuer", "procrastinate", "oban")
#: the modules a library needs here, beyond skconsole's own
NEEDS: dict[str, tuple[str, ...]] = {
    "skconsole": (),
    "pgqueuer": ("pgqueuer", "asyncpg"),
    "procrastinate": ("procrastinate",),
    "oban": ("oban",),
}
#: the Python a library needs when skconsole's own (3.11) is not enough
NEEDS_PYTHON: dict[str, tuple[int, int]] = {"oban": (3, 12)}
#: how a library's workers run, in the header (skconsole's: its --concurrency)
WORKER_SETTINGS = {"oban": "oban start --queues default:10 (the CLI has no default queue)"}
INSTALL_HINT = "pip install 'skconsole[bench]'"
CHUNK = 1_000
POLL_S = 0.05
PICKUP_GAP_S = 0.025
WARM_PROBES = 3
PROBE_TIMEOUT_S = 60.0
DRAIN_TIMEOUT_S = 1_800.0
STOP_GRACE_S = 10.0
COLUMNS = (
    "library",
    "bulk post jobs/s (chunks of 1,000)",
    "single post/s",
    "drain 1 process jobs/s",
    "drain 2 processes jobs/s",
    "pickup p50 / p95 / p99 ms",
)
#: the same metrics as skconsole's figure over each library's (the package docstring)
RATIO_COLUMNS = (
    "skconsole / library",
    "bulk post",
    "single post",
    "drain 1 process",
    "drain 2 processes",
    "pickup p50 / p95 / p99",
)
RATIO_NOTE = (
    "skconsole's figure over the library's: above 1, skconsole posts or drains faster;"
    " for pickup, below 1 is skconsole sooner"
)
#: every worker started and not stopped yet, so any way out of the run stops it
_LIVE: set[subprocess.Popen[bytes]] = set()


def say(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


# -- pure parts ------------------------------------------------------------------------
def missing_message(
    name: str,
    find: Callable[[str], object] = importlib.util.find_spec,
    python: tuple[int, int] = (sys.version_info.major, sys.version_info.minor),
) -> str | None:
    """Why ``name`` cannot run here, in one line; None when it can."""
    needs = NEEDS_PYTHON.get(name)
    if needs is not None and python < needs:
        have, want = ".".join(map(str, python)), ".".join(map(str, needs))
        return f"{name} needs Python >= {want} (this is {have}): {INSTALL_HINT} in a {want} venv"
    absent = [module for module in NEEDS[name] if find(module) is None]
    if not absent:
        return None
    if name in absent:
        return f"{name} not installed: {INSTALL_HINT}"
    return f"{', '.join(absent)} not installed ({name} needs it): {INSTALL_HINT}"


def database_dsn(dsn: str, dbname: str) -> str:
    """``dsn`` pointed at ``dbname``, as a URI: asyncpg takes no key=value strings."""
    params = {k: str(v) for k, v in conninfo.conninfo_to_dict(dsn).items() if v is not None}
    params.pop("dbname", None)
    user, password = params.pop("user", ""), params.pop("password", "")
    host, port = params.pop("host", ""), params.pop("port", "")
    if host.startswith("/") or "," in host:  # a socket directory or several hosts
        params["host"], host = host, ""
    if port and not host:
        params["port"] = port
    auth = f"{quote(user, safe='')}{':' + quote(password, safe='') if password else ''}@"
    netloc = f"{auth if user else ''}{host}{':' + port if port and host else ''}"
    query = f"?{urlencode(params)}" if params else ""
    return f"postgresql://{netloc}/{quote(dbname, safe='')}{query}"


def drain_rate(backlog: int, polls: Sequence[tuple[float, int]]) -> tuple[float, float]:
    """Jobs/s and start-up seconds from ``(seconds since start, unfinished)`` polls.

    The rate runs from the first poll showing progress to the first showing an
    empty queue: the jobs still unfinished at the first, over that time.
    """
    first = next(((t, left) for t, left in polls if left < backlog), None)
    last = next((t for t, left in polls if left == 0), None)
    if first is None:
        return math.nan, math.nan
    started, unfinished = first
    if last is None or unfinished == 0 or last <= started:
        return math.nan, started
    return unfinished / (last - started), started


def pickup_summary(samples: Sequence[float]) -> tuple[float, float, float]:
    values = list(samples)
    p50, p95, p99 = (_percentile(values, q) for q in (0.50, 0.95, 0.99))
    return p50, p95, p99


@dataclass
class Row:
    library: str
    bulk: float
    single: float
    drain1: float
    drain2: float
    pickup: tuple[float, float, float]


def _rate(value: float) -> str:
    return "n/a" if math.isnan(value) else f"{value:,.0f}"


def _ms(value: float) -> str:
    return "n/a" if math.isnan(value) else f"{value:.1f}"


def format_table(rows: Sequence[Row]) -> str:
    """A Markdown table, aligned for the terminal too: it pastes into a README as is."""
    return _formatted(rows, COLUMNS, _rate, _ms)


def _ratio(value: float) -> str:
    return "n/a" if math.isnan(value) else f"{value:.2f}"


def format_ratios(rows: Sequence[Row]) -> str:
    """The ratios' table (``Row`` holding skconsole / library), as ``format_table``'s."""
    return _formatted(rows, RATIO_COLUMNS, _ratio, _ratio)


def _formatted(
    rows: Sequence[Row],
    header: Sequence[str],
    rate: Callable[[float], str],
    pickup: Callable[[float], str],
) -> str:
    """``rows`` under ``header``: each rate by ``rate``, the pickup percentiles by ``pickup``."""
    cells = [list(header)]
    for r in rows:
        rates = [rate(v) for v in (r.bulk, r.single, r.drain1, r.drain2)]
        cells.append([r.library, *rates, " / ".join(pickup(v) for v in r.pickup)])
    return _aligned(cells)


def _aligned(cells: list[list[str]]) -> str:
    widths = [max(len(row[i]) for row in cells) for i in range(len(cells[0]))]

    def line(row: Sequence[str]) -> str:
        parts = [row[0].ljust(widths[0])] + [
            c.rjust(w) for c, w in zip(row[1:], widths[1:], strict=True)
        ]
        return "| " + " | ".join(parts) + " |"

    rule = "|" + "|".join(["-" * (widths[0] + 2)] + ["-" * (w + 1) + ":" for w in widths[1:]]) + "|"
    return "\n".join([line(cells[0]), rule, *(line(r) for r in cells[1:])])


# -- one library's round ---------------------------------------------------------------
@dataclass
class Drain:
    processes: int
    jobs: int
    jobs_per_s: float
    startup_s: float


@dataclass
class Round:
    number: int = 0  # which round of the run, to pair a library's with skconsole's
    bulk_per_s: float = math.nan
    single_per_s: float = math.nan
    drains: list[Drain] = field(default_factory=list)
    pickup_ms: list[float] = field(default_factory=list)

    def rate(self, processes: int) -> float:
        return next((d.jobs_per_s for d in self.drains if d.processes == processes), math.nan)


@dataclass
class Settings:
    dsn: str
    prefix: str
    jobs: int
    single: int
    pickup: int
    rounds: int
    libraries: list[str]
    concurrency: int | None
    json: bool


def _signal_group(proc: subprocess.Popen[bytes], sig: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, sig)


def stop_workers(procs: Sequence[subprocess.Popen[bytes]]) -> None:
    """SIGTERM each worker's process group, then SIGKILL whatever is left of it
    (a leader that would not stop, or children that outlived it)."""
    for proc in procs:
        _signal_group(proc, signal.SIGTERM)
    deadline = time.monotonic() + STOP_GRACE_S
    for proc in procs:
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(max(0.0, deadline - time.monotonic()))
    for proc in procs:
        _signal_group(proc, signal.SIGKILL)
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(5)
        _LIVE.discard(proc)


@dataclass
class Workers:
    procs: list[subprocess.Popen[bytes]]
    logs: list[Path]

    def check(self) -> None:
        """Fail the step at once when a worker has died, with its last words."""
        for proc, log in zip(self.procs, self.logs, strict=True):
            if proc.poll() is not None:
                lines = log.read_text(errors="replace").strip().splitlines()
                last = lines[-1] if lines else "no output"
                raise RuntimeError(f"a worker exited with code {proc.returncode}: {last}")


@contextlib.contextmanager
def workers(peer: Peer, dsn: str, count: int, env: dict[str, str], logs: Path) -> Iterator[Workers]:
    cmd, extra = peer.worker(dsn)
    started = Workers([], [])
    try:
        for _ in range(count):
            fd, name = tempfile.mkstemp(prefix=f"{peer.name}-worker-", suffix=".log", dir=logs)
            log = Path(name)
            with open(fd, "wb") as out:
                proc = subprocess.Popen(
                    cmd,
                    env={**os.environ, **extra, **env},
                    stdin=subprocess.DEVNULL,
                    stdout=out,
                    stderr=subprocess.STDOUT,
                    start_new_session=True,  # a process group of its own, to stop as one
                )
            _LIVE.add(proc)
            started.procs.append(proc)
            started.logs.append(log)
        yield started
    finally:
        stop_workers(started.procs)


async def bulk_post(peer: Peer, jobs: int) -> float:
    started = time.perf_counter()
    for done in range(0, jobs, CHUNK):
        await peer.post_many(min(CHUNK, jobs - done))
    return jobs / (time.perf_counter() - started)


async def single_post(peer: Peer, posts: int) -> float:
    started = time.perf_counter()
    for _ in range(posts):
        await peer.post(None)
    return posts / (time.perf_counter() - started)


async def drain(
    peer: Peer, dsn: str, conn: psycopg.AsyncConnection[Any], processes: int, tmp: Path
) -> Drain:
    await conn.execute("VACUUM ANALYZE")
    backlog = await peer.remaining(conn)
    polls: list[tuple[float, int]] = []
    with workers(peer, dsn, processes, {}, tmp) as running:
        started = time.perf_counter()
        while not polls or polls[-1][1] > 0:
            polls.append((time.perf_counter() - started, await peer.remaining(conn)))
            running.check()
            if polls[-1][0] > DRAIN_TIMEOUT_S:
                raise TimeoutError(f"{polls[-1][1]:,} jobs left after {DRAIN_TIMEOUT_S:.0f}s")
            await asyncio.sleep(POLL_S)
    rate, startup = drain_rate(backlog, polls)
    return Drain(processes, backlog, rate, startup)


def _recorded(path: Path) -> list[str]:
    return path.read_text(encoding="ascii").split("\n")[:-1]  # whole lines only


async def probe(peer: Peer, path: Path, running: Workers) -> float:
    seen = len(_recorded(path))
    await peer.post(time.time())
    deadline = time.monotonic() + PROBE_TIMEOUT_S
    while len(lines := _recorded(path)) <= seen:
        running.check()
        if time.monotonic() > deadline:
            raise TimeoutError(f"a probe job was not picked up within {PROBE_TIMEOUT_S:.0f}s")
        await asyncio.sleep(0.001)
    return float(lines[seen])


async def pickup(peer: Peer, dsn: str, samples: int, tmp: Path) -> list[float]:
    path = tmp / f"{peer.name}.pickup"
    path.write_text("", encoding="ascii")
    with workers(peer, dsn, 1, {PICKUP_ENV: str(path)}, tmp) as running:
        for _ in range(WARM_PROBES):
            await probe(peer, path, running)
        latencies = []
        for _ in range(samples):
            await asyncio.sleep(PICKUP_GAP_S)
            latencies.append(await probe(peer, path, running))
    return latencies


def recreate_database(server_dsn: str, name: str, *, create: bool = True) -> None:
    with psycopg.connect(server_dsn, autocommit=True) as c:
        c.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name)))
        if create:
            c.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))


async def run_round(peer: Peer, s: Settings, tmp: Path) -> Round:
    name = f"{s.prefix}_{peer.name}"
    await asyncio.to_thread(recreate_database, s.dsn, name)
    dsn = database_dsn(s.dsn, name)
    await peer.install(dsn)
    result = Round()
    conn = await psycopg.AsyncConnection.connect(dsn, autocommit=True)
    try:
        await peer.open(dsn)
        await peer.post(None)  # the producer's connection, outside every timing
        say(f"  bulk post {s.jobs:,}")
        result.bulk_per_s = await bulk_post(peer, s.jobs)
        say("  drain, 1 process")
        result.drains.append(await drain(peer, dsn, conn, 1, tmp))
        await bulk_post(peer, s.jobs)
        say("  drain, 2 processes")
        result.drains.append(await drain(peer, dsn, conn, 2, tmp))
        say(f"  pickup latency, {s.pickup} probes")
        result.pickup_ms = await pickup(peer, dsn, s.pickup, tmp)
        say(f"  single post {s.single:,}")
        result.single_per_s = await single_post(peer, s.single)
    finally:
        await peer.close()
        await conn.close()
    return result


# -- the whole run ---------------------------------------------------------------------
def load(name: str, concurrency: int | None) -> Peer:
    if name == "pgqueuer":
        from skconsole.bench.peers.pgqueuer_peer import PgQueuerPeer

        return PgQueuerPeer()
    if name == "procrastinate":
        from skconsole.bench.peers.procrastinate_peer import ProcrastinatePeer

        return ProcrastinatePeer()
    if name == "oban":
        from skconsole.bench.peers.oban_peer import ObanPeer

        return ObanPeer()
    from skconsole.bench.peers.skconsole_peer import SkconsolePeer

    return SkconsolePeer(concurrency)


def version_of(name: str) -> str:
    if name == "skconsole":
        return skconsole.__version__
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return "?"


def summarize(name: str, rounds: Sequence[Round]) -> Row:
    def median(values: list[float]) -> float:
        values = [v for v in values if not math.isnan(v)]
        return statistics.median(values) if values else math.nan

    return Row(
        f"{name} {version_of(name)}",
        median([r.bulk_per_s for r in rounds]),
        median([r.single_per_s for r in rounds]),
        median([r.rate(1) for r in rounds]),
        median([r.rate(2) for r in rounds]),
        pickup_summary([ms for r in rounds for ms in r.pickup_ms]),
    )


def divide(a: float, b: float) -> float:
    return a / b if b and not math.isnan(a) and not math.isnan(b) else math.nan


def versus(base: Sequence[Round], name: str, rounds: Sequence[Round]) -> Row:
    """skconsole's figures (``base``) over ``name``'s: each rate as the median of the
    ratios of the rounds both completed (the rounds interleave, so a round's pair
    met the same machine), pickup as the ratio of the percentiles over all samples."""
    mine = {r.number: r for r in rounds}
    pairs = [(b, mine[b.number]) for b in base if b.number in mine]

    def median(rate: Callable[[Round], float]) -> float:
        values = [divide(rate(b), rate(r)) for b, r in pairs]
        values = [v for v in values if not math.isnan(v)]
        return statistics.median(values) if values else math.nan

    ours = pickup_summary([ms for r in base for ms in r.pickup_ms])
    theirs = pickup_summary([ms for r in rounds for ms in r.pickup_ms])
    p50, p95, p99 = (divide(a, b) for a, b in zip(ours, theirs, strict=True))
    return Row(
        f"{name} {version_of(name)}",
        median(lambda r: r.bulk_per_s),
        median(lambda r: r.single_per_s),
        median(lambda r: r.rate(1)),
        median(lambda r: r.rate(2)),
        (p50, p95, p99),
    )


def ratio_rows(results: dict[str, list[Round]]) -> dict[str, Row]:
    """skconsole / library for every library but skconsole; none without skconsole."""
    base = results.get("skconsole")
    if not base:
        return {}
    return {n: versus(base, n, r) for n, r in results.items() if n != "skconsole" and r}


def _num(value: float) -> float | None:
    return None if math.isnan(value) else round(value, 2)


def as_json(
    s: Settings,
    server: str,
    results: dict[str, list[Round]],
    skipped: dict[str, str],
    failed: list[Failure],
) -> JsonObject:
    def pickup_json(samples: Sequence[float]) -> JsonObject:
        p50, p95, p99 = pickup_summary(samples)
        return {"p50": _num(p50), "p95": _num(p95), "p99": _num(p99), "n": len(samples)}

    ratios = ratio_rows(results)
    libraries: JsonObject = {}
    for name, rounds in results.items():
        row = summarize(name, rounds)
        entry: JsonObject = {
            "version": version_of(name),
            "summary": {
                "bulk_post_jobs_per_s": _num(row.bulk),
                "single_post_per_s": _num(row.single),
                "drain_1_process_jobs_per_s": _num(row.drain1),
                "drain_2_processes_jobs_per_s": _num(row.drain2),
                "pickup_ms": pickup_json([ms for r in rounds for ms in r.pickup_ms]),
            },
            "rounds": [
                {
                    "round": r.number,
                    "bulk_post_jobs_per_s": _num(r.bulk_per_s),
                    "single_post_per_s": _num(r.single_per_s),
                    "drains": [
                        {
                            "processes": d.processes,
                            "jobs": d.jobs,
                            "jobs_per_s": _num(d.jobs_per_s),
                            "startup_s": _num(d.startup_s),
                        }
                        for d in r.drains
                    ],
                    "pickup_ms": pickup_json(r.pickup_ms),
                }
                for r in rounds
            ],
        }
        if (ratio := ratios.get(name)) is not None:
            entry["skconsole_over_library"] = {
                "bulk_post": _num(ratio.bulk),
                "single_post": _num(ratio.single),
                "drain_1_process": _num(ratio.drain1),
                "drain_2_processes": _num(ratio.drain2),
                "pickup_p50": _num(ratio.pickup[0]),
                "pickup_p95": _num(ratio.pickup[1]),
                "pickup_p99": _num(ratio.pickup[2]),
            }
        libraries[name] = entry
    return {
        "server_version": server,
        "settings": {
            "jobs": s.jobs,
            "single": s.single,
            "pickup": s.pickup,
            "rounds": s.rounds,
            "chunk": CHUNK,
            "skconsole_concurrency": s.concurrency or WorkerConfig().concurrency,
            "workers": {n: WORKER_SETTINGS.get(n, "defaults") for n in results if n != "skconsole"},
            "python": ".".join(map(str, sys.version_info[:3])),
        },
        "skipped": skipped,
        "failed": [asdict(f) for f in failed],
        "libraries": libraries,
    }


@dataclass(frozen=True)
class Failure:
    """A round of one library that failed (the others' numbers are kept)."""

    library: str
    round: int
    error: str


async def run_all(
    s: Settings, peer_list: list[Peer], tmp: Path
) -> tuple[dict[str, list[Round]], list[Failure]]:
    results: dict[str, list[Round]] = {p.name: [] for p in peer_list}
    failed: list[Failure] = []
    for n in range(1, s.rounds + 1):
        for peer in peer_list:
            say(f"round {n}/{s.rounds}: {peer.name}")
            try:
                done = await run_round(peer, s, tmp)
                done.number = n
                results[peer.name].append(done)
            except Exception as exc:  # one library failing must not lose the others' numbers
                error = f"{type(exc).__name__}: {(str(exc).strip().splitlines() or [''])[0]}"
                say(f"{peer.name}: round {n} failed: {error}")
                failed.append(Failure(peer.name, n, error))
    return results, failed


def parse_args(argv: Sequence[str] | None = None) -> Settings:
    doc = peers.__doc__ or ""
    parser = argparse.ArgumentParser(
        prog="python -m skconsole.bench.peers",
        description=doc.split("\n\n")[0],
        epilog="\n\n".join(doc.split("\n\n")[2:]),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )

    def positive(text: str) -> int:
        value = int(text)
        if value < 1:
            raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
        return value

    default_c = WorkerConfig().concurrency
    parser.add_argument(
        "--dsn",
        default="postgresql://postgres@127.0.0.1:5432/postgres",
        help="the server: any database on it, as a role that may create databases"
        " (default: %(default)s)",
    )
    parser.add_argument(
        "--prefix",
        default="peers",
        help="databases <prefix>_<library> are DROPPED and created (default: %(default)s)",
    )
    parser.add_argument(
        "--jobs",
        type=positive,
        default=20_000,
        help="jobs per bulk post and per drain (default: %(default)s)",
    )
    parser.add_argument(
        "--single", type=positive, default=2_000, help="single posts (default: %(default)s)"
    )
    parser.add_argument(
        "--pickup", type=positive, default=300, help="pickup-latency samples (default: %(default)s)"
    )
    parser.add_argument(
        "--rounds",
        type=positive,
        default=1,
        help="rounds, libraries interleaved (default: %(default)s)",
    )
    parser.add_argument(
        "--only",
        default=",".join(LIBRARIES),
        help="comma-separated libraries (default: %(default)s)",
    )
    parser.add_argument(
        "--concurrency",
        type=positive,
        default=None,
        help=f"skconsole worker --concurrency (default: the engine's, {default_c})",
    )
    parser.add_argument("--json", action="store_true", help="print JSON, every round included")
    a = parser.parse_args(argv)
    only = [n.strip() for n in a.only.split(",") if n.strip()]
    unknown = sorted(set(only) - set(LIBRARIES))
    if unknown or not only:
        parser.error(f"--only takes {', '.join(LIBRARIES)}; got {a.only!r}")
    if len(a.prefix) > 40:
        parser.error("--prefix: at most 40 characters (database names stop at 63)")
    given = {name: value for name, value in vars(a).items() if name != "only"}
    return Settings(**given, libraries=list(dict.fromkeys(only)))


def _terminate(signum: int, _frame: FrameType | None) -> None:
    say(f"stopped by signal {signum}: stopping the workers, dropping the databases")
    raise SystemExit(128 + signum)


def main(argv: Sequence[str] | None = None) -> int:
    s = parse_args(argv)
    skipped = {n: m for n in s.libraries if (m := missing_message(n)) is not None}
    for message in skipped.values():
        say(message)
    names = [n for n in s.libraries if n not in skipped]
    peer_list: list[Peer] = []
    for n in names:
        try:
            peer_list.append(load(n, s.concurrency))
        except ImportError as exc:  # installed, but not the version these adapters speak
            skipped[n] = f"{n} cannot be loaded ({exc}): {INSTALL_HINT}"
            say(skipped[n])
    if not peer_list:
        say("nothing to run")
        return 1
    try:
        with psycopg.connect(s.dsn, connect_timeout=10) as c:
            row = c.execute("SHOW server_version").fetchone()
    except psycopg.Error as exc:
        say(connect_error_message(s.dsn, exc))
        return 1
    server = str(row[0]) if row else "?"
    signal.signal(signal.SIGTERM, _terminate)
    signal.signal(signal.SIGHUP, _terminate)
    try:
        with tempfile.TemporaryDirectory(prefix="skconsole-peers-") as tmp:
            results, failed = asyncio.run(run_all(s, peer_list, Path(tmp)))
    except KeyboardInterrupt:
        say("interrupted")
        return 130
    finally:
        stop_workers(list(_LIVE))
        for peer in peer_list:
            with contextlib.suppress(psycopg.Error):
                recreate_database(s.dsn, f"{s.prefix}_{peer.name}", create=False)
    if s.json:
        print(json.dumps(as_json(s, server, results, skipped, failed), indent=2))
        return 0
    concurrency = s.concurrency or WorkerConfig().concurrency
    settings = [
        f"skconsole --concurrency {concurrency}"
        if n == "skconsole"
        else WORKER_SETTINGS.get(n, f"{n} defaults")
        for n in results
    ]
    print(
        f"PostgreSQL {server}; {s.jobs:,} jobs per bulk post and drain, {s.single:,} single posts,"
        f" {s.pickup} pickup probes, {s.rounds} round(s)\nworkers: {'; '.join(settings)}\n"
    )
    print(format_table([summarize(n, r) for n, r in results.items() if r]))
    if ratios := ratio_rows(results):
        print(f"\n{format_ratios(list(ratios.values()))}\n{RATIO_NOTE}")
    for f in failed:
        print(f"{f.library}: round {f.round} failed: {f.error}")
    return 0
