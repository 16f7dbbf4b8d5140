"""The peers benchmark's arithmetic and wording, which decide what its table claims (no database)."""

from __future__ import annotations

import math

import pytest
from psycopg import conninfo

from skconsole.bench.peers.harness import (
    COLUMNS,
    RATIO_COLUMNS,
    Drain,
    Round,
    Row,
    database_dsn,
    drain_rate,
    format_ratios,
    format_table,
    missing_message,
    pickup_summary,
    ratio_rows,
)


def test_a_missing_peer_is_one_line_that_says_how_to_get_it() -> None:
    assert missing_message("pgqueuer", lambda _m: None) == (
        "pgqueuer not installed: pip install 'skconsole[bench]'"
    )
    only_driver = missing_message("pgqueuer", lambda m: None if m == "asyncpg" else object())
    assert (
        only_driver == "asyncpg not installed (pgqueuer needs it): pip install 'skconsole[bench]'"
    )
    assert missing_message("procrastinate", lambda _m: object()) is None
    assert missing_message("skconsole", lambda _m: None) is None  # needs nothing extra


def test_oban_on_python_3_11_says_which_python_it_needs_even_when_installed() -> None:
    assert missing_message("oban", lambda _m: object(), (3, 11)) == (
        "oban needs Python >= 3.12 (this is 3.11): pip install 'skconsole[bench]' in a 3.12 venv"
    )
    assert missing_message("oban", lambda _m: None, (3, 12)) == (
        "oban not installed: pip install 'skconsole[bench]'"
    )
    assert missing_message("oban", lambda _m: object(), (3, 13)) is None


def test_the_drain_rate_leaves_out_start_up_and_counts_from_the_first_progress() -> None:
    # 1,000 jobs; workers start at 0, nothing moves for 2 s, then 800 are left at 2.0 s
    polls = [(0.0, 1000), (1.0, 1000), (2.0, 800), (2.2, 400), (2.4, 0)]
    rate, startup = drain_rate(1000, polls)
    assert rate == pytest.approx(800 / 0.4)
    assert startup == 2.0


def test_a_drain_too_short_to_see_is_not_given_a_rate() -> None:
    rate, startup = drain_rate(1000, [(0.0, 1000), (0.05, 0)])
    assert math.isnan(rate) and startup == 0.05
    assert all(math.isnan(v) for v in drain_rate(1000, [(0.0, 1000)]))


def test_pickup_percentiles_interpolate_and_an_empty_run_has_none() -> None:
    p50, p95, p99 = pickup_summary([float(ms) for ms in range(1, 101)])
    assert (p50, p95, p99) == pytest.approx((50.5, 95.05, 99.01))
    assert all(math.isnan(v) for v in pickup_summary([]))


@pytest.mark.parametrize(
    ("server", "expected"),
    [
        (
            "postgresql://postgres@127.0.0.1:5432/postgres",
            "postgresql://postgres@127.0.0.1:5432/peers_pgqueuer",
        ),
        (
            "host=db port=6432 user=me password='p@ss w' dbname=x sslmode=require",
            "postgresql://me:p%40ss%20w@db:6432/peers_pgqueuer?sslmode=require",
        ),
        (
            "host=/var/run/postgresql dbname=x",
            "postgresql:///peers_pgqueuer?host=%2Fvar%2Frun%2Fpostgresql",
        ),
    ],
)
def test_each_library_database_gets_a_uri_on_the_same_server(server: str, expected: str) -> None:
    dsn = database_dsn(server, "peers_pgqueuer")
    assert dsn == expected
    assert conninfo.conninfo_to_dict(dsn)["dbname"] == "peers_pgqueuer"


def test_the_table_has_the_columns_in_order_and_says_n_a_for_what_was_not_measured() -> None:
    rows = [
        Row("skconsole 0.1.0", 51234.4, 2010.0, 12000.0, 20500.0, (1.24, 2.5, 4.0)),
        Row("procrastinate 3.10.0", 14000.0, 480.0, math.nan, 300.0, (5.7, math.nan, 135.8)),
    ]
    lines = format_table(rows).splitlines()
    cells = [[c.strip() for c in line.strip("|").split("|")] for line in lines]
    assert cells[0] == list(COLUMNS)
    assert len({len(line) for line in lines}) == 1  # aligned
    assert lines[1].startswith("|---") and lines[1].endswith(":|")  # Markdown, numbers right
    assert cells[2] == ["skconsole 0.1.0", "51,234", "2,010", "12,000", "20,500", "1.2 / 2.5 / 4.0"]
    assert cells[3][3] == "n/a" and cells[3][5] == "5.7 / n/a / 135.8"


def _round(number: int, bulk: float, drain1: float, pickup: list[float]) -> Round:
    drains = [Drain(1, 1000, drain1, 0.5), Drain(2, 1000, math.nan, 0.5)]
    return Round(number, bulk, 100.0, drains, pickup)


def test_ratios_pair_the_rounds_both_completed_and_pool_the_pickup_samples() -> None:
    results = {
        "skconsole": [_round(1, 40.0, 10.0, [2.0]), _round(2, 60.0, 12.0, [4.0])],
        # round 1 of the peer failed: only round 2 pairs
        "pgqueuer": [_round(2, 30.0, 4.0, [8.0]), _round(3, 1.0, 1.0, [8.0])],
    }
    rows = ratio_rows(results)
    assert list(rows) == ["pgqueuer"]
    row = rows["pgqueuer"]
    assert row.bulk == pytest.approx(2.0) and row.drain1 == pytest.approx(3.0)
    assert row.single == pytest.approx(1.0)
    assert math.isnan(row.drain2)  # not measured is not a ratio
    assert row.pickup[0] == pytest.approx(3.0 / 8.0)  # p50 over every sample of each
    assert ratio_rows({"pgqueuer": results["pgqueuer"]}) == {}  # no skconsole, no ratios


def test_the_ratio_table_has_its_columns_and_two_decimals() -> None:
    row = Row("oban 0.7.0", 11.384, 1.0, 3.5, math.nan, (0.891, 0.93, 0.85))
    lines = format_ratios([row]).splitlines()
    cells = [[c.strip() for c in line.strip("|").split("|")] for line in lines]
    assert cells[0] == list(RATIO_COLUMNS)
    assert cells[2] == ["oban 0.7.0", "11.38", "1.00", "3.50", "n/a", "0.89 / 0.93 / 0.85"]
    assert len({len(line) for line in lines}) == 1
