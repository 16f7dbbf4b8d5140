"""Limits per key: at most N running (or N claims per interval) per value of a payload path.

The claim applies them (sk_claim_keyed(), sql/schema/128_skconsole_key_limits.sql)
through an index on the key that the limit action builds; these tests count
what each claim takes.
"""

from __future__ import annotations

import json
import subprocess
import uuid
from collections import Counter
from collections.abc import Callable, Iterator
from typing import Any

import psycopg
import pytest

from skconsole import ops, read
from skconsole.core.errors import ConfigError
from skconsole.db.sqlfiles import query
from skconsole.ops import Actor, LimitParams, Rate, Selection
from skconsole.ops.key_index import index_name, key_indexes
from skconsole.worker.engine import CLAIM_SETTINGS
from tests.support.rows import one_row

Conn = psycopg.Connection[Any]
CLI = Callable[..., subprocess.CompletedProcess[str]]
ACTOR = Actor(user="tester", host="test-host")
KEYED, OTHER = "keys.send", "keys.other"
PER = ("customer",)


@pytest.fixture(autouse=True)
def _no_key_indexes_left(conn: Conn) -> Iterator[None]:
    """Each test's key indexes dropped after it (the schema outlives a test)."""
    yield
    for name in conn.execute(
        "SELECT relname FROM pg_class WHERE relkind = 'i' AND relname LIKE 'sk\\_key\\_%%'"
    ).fetchall():
        conn.execute(f'DROP INDEX IF EXISTS "{name[0]}"')


def post(conn: Conn, key: object, n: int = 1, task_type: str = KEYED, priority: int = 0) -> None:
    """``n`` jobs of ``task_type`` whose payload's customer is ``key`` (a raw payload
    when ``key`` is a str starting with "raw:"), ready now."""
    if isinstance(key, str) and key.startswith("raw:"):
        payload = key[4:]
    else:
        payload = json.dumps({"customer": key, "n": 1})
    conn.execute(
        "INSERT INTO sk_tasks_queue_t (task_id, task_type, task_source, task_payload,"
        " task_priority, task_posted_at_ts, task_locked_until_ts)"
        " SELECT gen_random_uuid(), %s, 'test', %s, %s, now(),"
        " now() - interval '1 s' + make_interval(secs => g * 0.000001)"
        " FROM generate_series(1, %s) AS g",
        (task_type, payload, priority, n),
    )


def claim(conn: Conn, limit: int = 50, types: tuple[str, ...] = (KEYED, OTHER)) -> list[Any]:
    """One claim as a worker makes it; the claimed jobs' customers (their type when not
    the keyed type; None for a payload without one)."""
    rows = conn.execute(
        query("claim"),
        {"types": list(types), "limit": limit, "worker_id": uuid.uuid4(), "hold_s": 12.0},
    ).fetchall()
    out: list[Any] = []
    for r in rows:
        if r[1] != KEYED:
            out.append(r[1])
            continue
        try:
            doc = json.loads(r[3])
        except ValueError:
            doc = None
        out.append(doc.get("customer") if isinstance(doc, dict) else None)
    return out


def finish(conn: Conn, key: str) -> None:
    """Every running job of customer ``key`` finishes."""
    conn.execute(
        "UPDATE sk_task_results_t SET task_status = 3 WHERE task_status = 2 AND task_type = %s"
        " AND sk_try_jsonb(task_payload) ->> 'customer' = %s",
        (KEYED, key),
    )


def set_limit(conn: Conn, task_type: str = KEYED, **kw: Any) -> ops.ActionResult:
    return ops.LIMIT.execute(conn, Selection(task_type=task_type), LimitParams(**kw), actor=ACTOR)


def per_key(conn: Conn, n: int = 1, **kw: Any) -> ops.ActionResult:
    return set_limit(conn, concurrency=n, per=PER, **kw)


# -- concurrency per key --------------------------------------------------------------------
def test_a_claim_takes_at_most_n_jobs_of_each_key(conn: Conn) -> None:
    post(conn, "acme", 5)
    post(conn, "globex", 5)
    per_key(conn, 2)

    assert Counter(claim(conn)) == {"acme": 2, "globex": 2}


def test_a_key_at_its_limit_gets_nothing_more_while_other_keys_are_claimed(conn: Conn) -> None:
    post(conn, "acme", 5)
    per_key(conn, 1)
    claim(conn)
    post(conn, "globex", 3)

    assert claim(conn) == ["globex"]


def test_a_finished_job_frees_its_keys_slot(conn: Conn) -> None:
    post(conn, "acme", 5)
    per_key(conn, 1)
    claim(conn)
    finish(conn, "acme")

    assert claim(conn) == ["acme"]


def test_one_keys_backlog_at_the_head_does_not_hold_up_another_keys_later_job(
    conn: Conn,
) -> None:
    post(conn, "acme", 2_000)
    post(conn, "globex", 1)
    per_key(conn, 1)

    assert sorted(claim(conn, limit=10)) == ["acme", "globex"]


def test_the_keys_jobs_are_taken_in_claim_order(conn: Conn) -> None:
    post(conn, "acme", 3, priority=5)
    post(conn, "acme", 1, priority=0)
    per_key(conn, 1)
    rows = conn.execute(
        query("claim"), {"types": [KEYED], "limit": 10, "worker_id": uuid.uuid4(), "hold_s": 12.0}
    ).fetchall()

    assert [r[4] for r in rows] == [0]


def test_jobs_without_the_path_share_one_limited_key(conn: Conn) -> None:
    post(conn, 'raw:{"other": 1}', 3)
    post(conn, "raw:not json", 3)
    post(conn, "acme", 3)
    per_key(conn, 1)

    taken = claim(conn)

    assert Counter(taken) == {"acme": 1, None: 1}


def test_a_type_wide_limit_still_bounds_a_keyed_type(conn: Conn) -> None:
    for key in ("a", "b", "c", "d"):
        post(conn, key, 2)
    set_limit(conn, concurrency=3)
    per_key(conn, 1)

    assert len(claim(conn)) == 3


def test_other_types_are_claimed_beside_a_keyed_type(conn: Conn) -> None:
    post(conn, "acme", 3)
    post(conn, None, 2, task_type=OTHER)
    per_key(conn, 1)

    assert Counter(claim(conn)) == {"acme": 1, OTHER: 2}


def end_key_windows(conn: Conn) -> None:
    """Every key's window as if it had opened an hour ago: ended, without waiting for it."""
    conn.execute(
        "UPDATE sk_task_key_windows_t SET window_start_ts = window_start_ts - interval '1 hour'"
    )


# -- rate per key ---------------------------------------------------------------------------
def test_a_rate_per_key_lets_n_claims_of_each_key_through_per_window(conn: Conn) -> None:
    post(conn, "acme", 10)
    post(conn, "globex", 10)
    set_limit(conn, rate=Rate(2, 60.0), per=PER)

    assert Counter(claim(conn)) == {"acme": 2, "globex": 2}
    post(conn, "initech", 5)
    assert claim(conn) == ["initech", "initech"]


def test_a_keys_window_counts_only_its_claims(conn: Conn) -> None:
    post(conn, "acme", 1)
    set_limit(conn, rate=Rate(3, 60.0), per=PER)
    claim(conn)
    post(conn, "acme", 5)

    assert claim(conn) == ["acme", "acme"]


def test_a_keys_window_lets_more_through_when_it_ends(conn: Conn) -> None:
    post(conn, "acme", 10)
    set_limit(conn, rate=Rate(2, 60.0), per=PER)
    claim(conn)
    end_key_windows(conn)

    assert claim(conn) == ["acme", "acme"]


def test_ended_key_windows_are_pruned(conn: Conn) -> None:
    post(conn, "acme", 1)
    set_limit(conn, rate=Rate(2, 60.0), per=PER)
    claim(conn)
    end_key_windows(conn)
    post(conn, "globex", 1)
    claim(conn)

    keys = conn.execute("SELECT key FROM sk_task_key_windows_t").fetchall()
    assert keys == [("globex",)]


# -- setting and clearing -------------------------------------------------------------------
def test_clearing_the_per_key_limit_restores_plain_claiming(conn: Conn) -> None:
    post(conn, "acme", 5)
    per_key(conn, 1)
    claim(conn)
    set_limit(conn, clear_concurrency=True, clear_rate=True, per=PER)

    assert claim(conn) == ["acme"] * 4


def test_clearing_drops_the_key_index_and_the_key_windows(conn: Conn) -> None:
    post(conn, "acme", 2)
    set_limit(conn, concurrency=1, rate=Rate(5, 60.0), per=PER)
    claim(conn)
    set_limit(conn, clear_concurrency=True, clear_rate=True, per=PER)

    assert key_indexes(conn, KEYED) == []
    assert conn.execute("SELECT count(*) FROM sk_task_key_windows_t").fetchone() == (0,)


def test_setting_a_per_key_limit_builds_a_valid_key_index(conn: Conn) -> None:
    result = per_key(conn)

    [found] = key_indexes(conn, KEYED)
    assert found.valid and found.index == index_name(KEYED, PER)
    assert result.details["key_index"] == found.index


def test_an_invalid_leftover_key_index_is_rebuilt(conn: Conn) -> None:
    per_key(conn)
    conn.execute(
        "UPDATE pg_index SET indisvalid = false WHERE indexrelid = %s::regclass",
        (index_name(KEYED, PER),),
    )
    per_key(conn, 2)

    [found] = key_indexes(conn, KEYED)
    assert found.valid


def test_the_claim_is_correct_without_the_key_index(conn: Conn) -> None:
    post(conn, "acme", 5)
    post(conn, None, 2)
    per_key(conn, 1)
    conn.execute(f'DROP INDEX "{index_name(KEYED, PER)}"')

    assert Counter(claim(conn)) == {"acme": 1, None: 1}


def test_a_type_wide_and_a_per_key_limit_hold_side_by_side(conn: Conn) -> None:
    set_limit(conn, concurrency=20)
    per_key(conn, 1)

    [limit] = read.limits(conn)
    assert (limit.concurrency, limit.key_concurrency, limit.per) == (20, 1, "payload.customer")


def test_a_second_key_path_is_refused_while_the_first_holds(conn: Conn) -> None:
    per_key(conn, 1)

    with pytest.raises(ConfigError, match="one key path"):
        set_limit(conn, concurrency=1, per=("tenant",))


def test_the_audit_row_records_the_per_key_limits_before_and_after(conn: Conn) -> None:
    per_key(conn, 1)
    per_key(conn, 3)

    details = ops.audit.entries(conn, action="limit")[0].details or {}
    assert details["old"]["concurrency_per_key"] == 1  # type: ignore[index]
    assert details["new"]["concurrency_per_key"] == 3  # type: ignore[index]
    assert details["new"]["per"] == "payload.customer"  # type: ignore[index]


def test_a_bad_per_path_is_refused_on_creation() -> None:
    with pytest.raises(ConfigError, match="empty key"):
        LimitParams(concurrency=1, per=("customer", ""))


# -- why ------------------------------------------------------------------------------------
def _waiting_id(conn: Conn, key: str) -> uuid.UUID:
    row = one_row(
        conn,
        "SELECT task_id FROM sk_tasks_queue_t WHERE task_type = %s"
        " AND sk_try_jsonb(task_payload) ->> 'customer' = %s LIMIT 1",
        (KEYED, key),
    )
    return uuid.UUID(str(row[0]))


def test_why_names_the_key_at_its_limit_and_the_job_holding_it(conn: Conn) -> None:
    post(conn, "acme", 2)
    per_key(conn, 1)
    claim(conn)
    [holder] = conn.execute(
        "SELECT task_id FROM sk_task_results_t WHERE task_status = 2"
    ).fetchall()

    found = read.why(conn, _waiting_id(conn, "acme"))

    assert found is not None
    [cause] = [c for c in found.causes if c.code is read.CauseCode.KEY_LIMIT_FULL]
    assert f"key payload.customer = 'acme' has 1 of 1 running: job {holder[0]}" in cause.evidence
    assert "--per payload.customer" in cause.fix and "--clear" in cause.fix


def test_why_names_a_keys_used_up_rate_window(conn: Conn) -> None:
    post(conn, "acme", 3)
    set_limit(conn, rate=Rate(1, 60.0), per=PER)
    claim(conn)

    found = read.why(conn, _waiting_id(conn, "acme"))

    assert found is not None and "key_rate_limited" in found.codes


def test_why_escapes_a_hostile_key(conn: Conn) -> None:
    post(conn, "evil\x1b[2J", 2)
    per_key(conn, 1)
    claim(conn)

    found = read.why(conn, _waiting_id(conn, "evil\x1b[2J"))

    assert found is not None
    assert all("\x1b" not in c.evidence for c in found.causes)


def test_why_says_nothing_of_a_key_with_a_free_slot(conn: Conn) -> None:
    post(conn, "acme", 1)
    post(conn, "globex", 2)
    per_key(conn, 1)
    claim(conn, limit=1)  # acme's job, the first posted

    found = read.why(conn, _waiting_id(conn, "globex"))

    assert found is not None and "key_limit_full" not in found.codes


def test_why_counts_only_the_jobs_of_its_own_key_ahead_of_it(conn: Conn) -> None:
    post(conn, "acme", 5)
    post(conn, "globex", 2)
    per_key(conn, 1)
    claim(conn)  # one of each runs

    globex = read.why(conn, _last_waiting_id(conn, "globex"))
    acme = read.why(conn, _last_waiting_id(conn, "acme"))

    assert globex is not None and "behind" not in globex.codes  # acme's jobs do not count
    assert acme is not None
    [behind] = [c for c in acme.causes if c.code is read.CauseCode.BEHIND]
    assert behind.evidence.startswith("3 due job(s) of key payload.customer = 'acme' are ahead")


def _last_waiting_id(conn: Conn, key: str) -> uuid.UUID:
    row = one_row(
        conn,
        "SELECT task_id FROM sk_tasks_queue_t WHERE task_type = %s"
        " AND sk_try_jsonb(task_payload) ->> 'customer' = %s"
        " ORDER BY task_priority DESC, task_locked_until_ts DESC LIMIT 1",
        (KEYED, key),
    )
    return uuid.UUID(str(row[0]))


# -- the CLI --------------------------------------------------------------------------------
def test_the_cli_sets_shows_and_clears_a_per_key_limit(run_cli: CLI, conn: Conn) -> None:
    set_out = run_cli("limit", KEYED, "--concurrency", "1", "--per", "payload.customer", "--yes")
    shown = run_cli("limit", "--json")
    cleared = run_cli("limit", KEYED, "--clear", "--per", "payload.customer", "--yes")

    assert set_out.returncode == 0, set_out.stderr
    assert "concurrency 1 per payload.customer" in " ".join(set_out.stdout.split())
    [row] = json.loads(shown.stdout)["limits"]
    assert (row["per"], row["concurrency_per_key"]) == ("payload.customer", 1)
    assert cleared.returncode == 0 and "no limits" in cleared.stdout
    assert key_indexes(conn, KEYED) == []


def test_the_cli_sets_a_per_key_limit_as_json_with_its_key_index(run_cli: CLI, conn: Conn) -> None:
    done = run_cli(
        "limit", KEYED, "--concurrency", "1", "--per", "payload.customer", "--yes", "--json"
    )

    assert done.returncode == 0, done.stderr
    details = json.loads(done.stdout)["details"]
    assert details["new"]["per"] == "payload.customer"
    assert details["new"]["concurrency_per_key"] == 1
    assert details["key_index"] == index_name(KEYED, PER)


def test_the_cli_lists_a_per_key_limit(run_cli: CLI, conn: Conn) -> None:
    run_cli("limit", KEYED, "--rate", "5/s", "--per", "payload.customer", "--yes")

    out = run_cli("limit", "--wide").stdout

    assert KEYED in out and "5/s per payload.customer" in out


def test_a_dry_run_sets_no_per_key_limit(run_cli: CLI, conn: Conn) -> None:
    out = run_cli("limit", KEYED, "--concurrency", "2", "--per", "payload.customer", "--dry-run")

    assert out.returncode == 0
    assert "concurrency 2 per payload.customer" in " ".join(out.stdout.split())
    assert read.limits(conn) == []


def test_a_bad_per_gives_a_one_line_error(run_cli: CLI) -> None:
    out = run_cli("limit", KEYED, "--concurrency", "1", "--per", "customer")

    assert out.returncode != 0
    assert "payload path" in out.stderr and len(out.stderr.strip().splitlines()) == 1


# -- plans ----------------------------------------------------------------------------------
def _keyed_plan(conn: Conn) -> str:
    """The plan of the statement sk_claim_keyed() runs, as it runs it (a one-off plan with
    the type and path as literals; a concurrency of 1 per key)."""
    statement = one_row(conn, "SELECT sk_claim_keyed_statement(%s, %s::text[])", (KEYED, list(PER)))
    conn.execute("PREPARE keyed(integer, integer, integer, double precision) AS " + statement[0])
    conn.execute("SET plan_cache_mode = force_custom_plan")
    try:
        rows = conn.execute("EXPLAIN EXECUTE keyed(10, 1, NULL, NULL)").fetchall()
    finally:
        conn.execute("RESET plan_cache_mode")
        conn.execute("DEALLOCATE keyed")
    return "\n".join(r[0] for r in rows)


def test_the_keyed_claim_enumerates_keys_and_heads_through_the_key_index(conn: Conn) -> None:
    """One customer's backlog must cost one index descent, not a walk through it."""
    post(conn, "acme", 20_000)
    post(conn, "globex", 1)
    post(conn, OTHER, 20_000, task_type=OTHER)
    per_key(conn, 1)
    conn.execute("ANALYZE sk_tasks_queue_t")

    plan = _keyed_plan(conn)

    assert index_name(KEYED, PER) in plan, plan
    assert "Seq Scan on sk_tasks_queue_t" not in plan, plan
    assert "Bitmap Heap Scan on sk_tasks_queue_t" not in plan, plan


def test_a_claim_of_unlimited_types_calls_no_key_function(conn: Conn) -> None:
    """Unlimited types keep their plan: the per-type head from the claim-order index; the
    keyed branch is there but runs for no type (its filter is on kinds' flag)."""
    post(conn, None, 100, task_type=OTHER)
    conn.execute("ANALYZE sk_tasks_queue_t")
    for name, value in CLAIM_SETTINGS.items():  # the worker's claim connection
        conn.execute("SELECT set_config(%s, %s, false)", (name, value))
    params = {"types": [OTHER], "limit": 10, "worker_id": uuid.uuid4(), "hold_s": 12.0}
    plan = "\n".join(
        r[0] for r in conn.execute("EXPLAIN (ANALYZE, COSTS OFF) " + query("claim"), params)
    )

    assert "idx_sk_tasks_queue_type_claim_order" in plan, plan
    keyed = [line for line in plan.splitlines() if "sk_claim_keyed" in line]
    assert keyed and all("never executed" in line for line in keyed), plan
