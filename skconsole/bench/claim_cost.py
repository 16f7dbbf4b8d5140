"""What a claim costs with limits: unlimited, type-wide limited, and limited per key
(a benchmark, not a test: run it by hand, on a machine of its own).

    python -m skconsole.bench.claim_cost --dsn postgresql://postgres@127.0.0.1:5432/postgres \
        [--jobs 100000] [--keys 10,1000] [--claims 200] [--rounds 3] [--database ...] [--json]

Creates a database of its own on the server the DSN points at (never the one the
DSN names) and queues ``--jobs`` jobs of each scenario's type: (a) an unlimited
type, (b) a type with a type-wide concurrency limit (sk_claim_room()), (c) a type
limited to 1 running per key, its jobs spread evenly over K keys, for each K of
``--keys``, and (d) the noisy case: one key holding all the jobs but one, the other
key one job at the tail. Each claim is the worker's statement (queries/claim.sql,
on a connection with the claim's settings) taking up to 10 jobs of one type, timed
by the client and rolled back, so every claim meets the same queue. The scenarios
take turns within each round. It prints the median and p95 milliseconds of each
(and --json the same as JSON).

The key index is made by the statement ``skconsole limit TYPE --per
payload.customer`` runs (ops/key_index.py; a bench may not import ops), under a
name of its own.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
import uuid
from dataclasses import asdict, dataclass
from typing import Any

import psycopg
from psycopg import sql

from skconsole.bench.seeded import fresh_database
from skconsole.db.schema import setup_schema
from skconsole.db.sqlfiles import query
from skconsole.worker.claimer import CLAIM_SETTINGS

Conn = psycopg.Connection[Any]
PLAIN, WIDE, NOISY = "bench.claim.plain", "bench.claim.wide", "bench.claim.noisy"
TAKE = 10


@dataclass(frozen=True)
class Scenario:
    """One type of the benchmark: its jobs' keys and how it is limited."""

    name: str
    task_type: str
    keys: int  # distinct keys of its payloads (0: no key at all)
    limit: str  # "none", "type", "key"


@dataclass(frozen=True)
class Cost:
    scenario: str
    claims: int
    taken: float  # jobs a claim took, on average
    median_ms: float
    p95_ms: float


def scenarios(key_counts: list[int]) -> list[Scenario]:
    out = [
        Scenario("unlimited", PLAIN, 0, "none"),
        Scenario("type-wide concurrency", WIDE, 0, "type"),
    ]
    out += [Scenario(f"1 per key, {k:,} keys", f"bench.claim.k{k}", k, "key") for k in key_counts]
    out.append(Scenario("1 per key, 1 noisy key + 1", NOISY, 2, "key"))
    return out


def _fill(conn: Conn, s: Scenario, jobs: int) -> None:
    """``jobs`` due jobs of the scenario's type; keys spread evenly (the noisy one: every
    job but the last of key 0)."""
    if s.task_type == NOISY:
        key = "CASE WHEN g = %(jobs)s THEN 'other' ELSE 'noisy' END"
    elif s.keys:
        key = "'c' || (g %% %(keys)s)"
    else:
        key = "'c'"
    conn.execute(
        "INSERT INTO sk_tasks_queue_t (task_id, task_type, task_source, task_payload,"
        " task_priority, task_posted_at_ts, task_locked_until_ts)"
        " SELECT gen_random_uuid(), %(type)s, 'bench',"
        f" json_build_object('customer', {key}, 'n', g)::text, 0, now(),"
        " now() - interval '1 hour' + make_interval(secs => g * 0.001)"
        " FROM generate_series(1, %(jobs)s) AS g",
        {"type": s.task_type, "jobs": jobs, "keys": max(s.keys, 1)},
    )


def _limit(conn: Conn, s: Scenario) -> None:
    if s.limit == "type":
        conn.execute(
            "INSERT INTO sk_task_types_t (task_type, tt_max_running) VALUES (%s, 1000000)",
            (s.task_type,),
        )
    elif s.limit == "key":
        conn.execute(
            "INSERT INTO sk_task_types_t (task_type, tt_key_path, tt_key_max_running)"
            " VALUES (%s, '{customer}', 1)",
            (s.task_type,),
        )
        conn.execute(
            sql.SQL(
                "CREATE INDEX CONCURRENTLY {} ON sk_tasks_queue_t"
                " ((sk_try_jsonb(task_payload) #>> '{{customer}}'::text[]),"
                " task_priority, task_locked_until_ts, task_lock_handle_id)"
                " WHERE task_type = {}"
            ).format(
                sql.Identifier(f"sk_key_bench_{s.task_type.rsplit('.', 1)[-1]}"),
                sql.Literal(s.task_type),
            )
        )


def prepare(server_dsn: str, database: str, all_: list[Scenario], jobs: int) -> str:
    """A fresh database of the benchmark's own, its queues filled and limited."""
    dsn = fresh_database(server_dsn, database)
    with psycopg.connect(dsn, autocommit=True) as conn:
        setup_schema(conn)
        conn.execute("SET statement_timeout = 0")
        for s in all_:
            _fill(conn, s, jobs)
            _limit(conn, s)
        conn.execute("VACUUM ANALYZE sk_tasks_queue_t")
    return dsn


def claim_ms(conn: Conn, task_type: str) -> tuple[float, int]:
    """One claim of up to TAKE jobs, rolled back: its milliseconds and the jobs it took."""
    params = {"types": [task_type], "limit": TAKE, "worker_id": uuid.uuid4(), "hold_s": 12.0}
    with conn.transaction(force_rollback=True):
        started = time.perf_counter()
        rows = conn.execute(query("claim"), params).fetchall()
        return (time.perf_counter() - started) * 1000, len(rows)


def measure(dsn: str, all_: list[Scenario], claims: int, rounds: int) -> list[Cost]:
    times: dict[str, list[float]] = {s.name: [] for s in all_}
    taken: dict[str, list[int]] = {s.name: [] for s in all_}
    with psycopg.connect(dsn, autocommit=True) as conn:
        for name, value in CLAIM_SETTINGS.items():
            conn.execute("SELECT set_config(%s, %s, false)", (name, value))
        for s in all_:  # warm-up: plans and caches
            claim_ms(conn, s.task_type)
        for _ in range(rounds):
            for s in all_:
                for _ in range(max(claims // rounds, 1)):
                    ms, n = claim_ms(conn, s.task_type)
                    times[s.name].append(ms)
                    taken[s.name].append(n)
    return [
        Cost(
            s.name,
            len(times[s.name]),
            statistics.fmean(taken[s.name]),
            statistics.median(times[s.name]),
            _p95(times[s.name]),
        )
        for s in all_
    ]


def _p95(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * 0.95))]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dsn", required=True, help="any database on the server to use")
    parser.add_argument("--database", default="skconsole_bench_claim_cost")
    parser.add_argument("--jobs", type=int, default=100_000, help="jobs queued per scenario")
    parser.add_argument("--keys", default="10,1000", help="key counts of the per-key scenarios")
    parser.add_argument("--claims", type=int, default=200, help="claims timed per scenario")
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")
    args = parser.parse_args(argv)

    all_ = scenarios([int(k) for k in args.keys.split(",") if k.strip()])
    started = time.perf_counter()
    dsn = prepare(args.dsn, args.database, all_, args.jobs)
    if not args.json:
        print(f"queued {args.jobs:,} jobs per scenario in {time.perf_counter() - started:.0f}s")
    costs = measure(dsn, all_, args.claims, args.rounds)
    if args.json:
        print(json.dumps({"jobs": args.jobs, "take": TAKE, "costs": [asdict(c) for c in costs]}))
        return
    print(f"{'scenario':32s} {'claims':>7s} {'taken':>6s} {'median':>9s} {'p95':>9s}")
    for c in costs:
        print(
            f"{c.scenario:32s} {c.claims:7d} {c.taken:6.1f} {c.median_ms:7.2f}ms {c.p95_ms:7.2f}ms"
        )


if __name__ == "__main__":
    main()
