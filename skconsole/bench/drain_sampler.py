"""What the server was doing in each second of a long drain, to explain its dips.

``bench.sustained`` reports how far the per-second rate falls below its median;
this says why. Once a second, on a connection of its own, it records the
server's clock (the drain's seconds are bucketed by the server's finalize
times, so both sides use one clock), which tables a vacuum is working on and
in which phase, what the client backends are waiting for, the WAL written so
far, the checkpoints so far, and the CPU the autovacuum workers used since the
last sample (from /proc: only when the server runs on this machine). Joined to
the per-second completions, it splits the seconds into those with a vacuum
running and those without, and lists the slowest seconds with what happened in
them. One query a second is all it adds to the server.
"""

from __future__ import annotations

import os
import statistics
import threading
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime

import psycopg

SAMPLE = """
SELECT date_trunc('second', clock_timestamp()) AS at,
    coalesce((SELECT array_agg(c.relname || ':' || p.phase ORDER BY c.relname)
        FROM pg_stat_progress_vacuum p JOIN pg_class c ON c.oid = p.relid), '{}') AS vacuums,
    coalesce((SELECT array_agg(pid) FROM pg_stat_activity
        WHERE backend_type = 'autovacuum worker'), '{}') AS vacuum_pids,
    coalesce((SELECT array_agg(coalesce(wait_event_type || ':' || wait_event, 'cpu'))
        FROM pg_stat_activity WHERE backend_type = 'client backend' AND state = 'active'
            AND pid <> pg_backend_pid()), '{}') AS waits,
    (SELECT wal_bytes FROM pg_stat_wal)::bigint AS wal_bytes,
    (SELECT checkpoints_timed + checkpoints_req FROM pg_stat_bgwriter)::bigint AS checkpoints
"""

#: clock ticks per second of /proc/PID/stat's utime and stime
TICKS = os.sysconf("SC_CLK_TCK")


def _cpu_ticks(pid: int) -> int | None:
    """User plus system ticks of a local process, or None (gone, or not on this machine)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return int(fields[11]) + int(fields[12])
    except (OSError, IndexError, ValueError):
        return None


@dataclass(frozen=True)
class Sample:
    at: datetime
    vacuums: tuple[str, ...]
    waits: tuple[str, ...]
    wal_bytes: int
    checkpoints: int
    vacuum_cpu: float  # cores used by autovacuum workers since the previous sample


@dataclass
class DrainSampler:
    """Samples in a thread of its own until stopped."""

    dsn: str
    samples: list[Sample] = field(default_factory=list)
    _stop: threading.Event = field(default_factory=threading.Event)
    _thread: threading.Thread | None = None

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name="drain-sampler", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()

    def _run(self) -> None:
        ticks: dict[int, int] = {}
        with psycopg.connect(self.dsn, autocommit=True) as conn:
            while not self._stop.wait(1.0):
                row = conn.execute(SAMPLE).fetchone()
                if row is None:
                    continue
                at, vacuums, pids, waits, wal, checkpoints = row
                used = 0
                for pid in pids:
                    now = _cpu_ticks(pid)
                    if now is not None:
                        used += now - ticks.get(pid, now)
                        ticks[pid] = now
                self.samples.append(
                    Sample(at, tuple(vacuums), tuple(waits), wal, checkpoints, used / TICKS)
                )


def explain(samples: list[Sample], per_second: dict[datetime, int], slowest: int = 10) -> str:
    """The drain's seconds with and without a vacuum running, and the slowest seconds."""
    by_second = {s.at: s for s in samples}
    with_vacuum = [n for at, n in per_second.items() if at in by_second and by_second[at].vacuums]
    without = [n for at, n in per_second.items() if at in by_second and not by_second[at].vacuums]
    median = statistics.median(per_second.values())
    lines = [f"seconds sampled: {len(with_vacuum) + len(without)} of {len(per_second)}"]
    for name, part in (("a vacuum running", with_vacuum), ("no vacuum", without)):
        if part:
            lines.append(
                f"  {name}: {len(part)} s, median {statistics.median(part):,.0f},"
                f" min {min(part):,} (min / overall median {min(part) / median:.2f})"
            )
    dips = [at for at, n in per_second.items() if n < 0.7 * median and at in by_second]
    if dips:
        share = sum(1 for at in dips if by_second[at].vacuums) / len(dips)
        waits: Counter[str] = Counter()
        for at in dips:
            waits.update(by_second[at].waits)
        lines.append(
            f"  seconds below 0.7 x median: {len(dips)}, {share:.0%} of them with a vacuum running;"
            f" backends' waits then: {waits.most_common(5)}"
        )
    previous: Sample | None = None
    wal_rate: dict[datetime, float] = {}
    for s in samples:
        if previous is not None:
            wal_rate[s.at] = (s.wal_bytes - previous.wal_bytes) / 1e6
        previous = s
    lines.append("slowest seconds: rate, vacuums, autovacuum CPU (cores), WAL MB, waits")
    for at, n in sorted(per_second.items(), key=lambda kv: kv[1])[:slowest]:
        sample = by_second.get(at)
        if sample is None:
            continue
        lines.append(
            f"  {at:%H:%M:%S} {n:>7,} {','.join(sample.vacuums) or '-'} {sample.vacuum_cpu:.2f}"
            f" {wal_rate.get(at, 0.0):.1f} {Counter(sample.waits).most_common(3)}"
        )
    return "\n".join(lines)
