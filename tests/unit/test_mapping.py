"""Stakhanovise.NET's table mapping: SQL written with the default names, rewritten
for the names an application chose, names always quoted."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from skconsole.db.mapping import DEFAULT_MAPPING, TableMapping
from skconsole.db.sqlfiles import QUERIES
from skconsole.errors import ConfigError

RENAMED = TableMapping(
    queue_table="app_queue",
    results_table="App Results",
    metrics_table="app_metrics",
    execution_time_stats_table="app_exec",
    dequeue_function="app_dequeue",
    channel="app_added",
)


def test_the_default_mapping_leaves_sql_as_it_is() -> None:
    text = QUERIES["claim"]
    assert DEFAULT_MAPPING.rewrite(text) is text


def test_table_names_become_quoted_identifiers() -> None:
    out = RENAMED.rewrite(
        "SELECT * FROM sk_tasks_queue_t q JOIN sk_task_results_t r USING (task_id)"
    )
    assert out == 'SELECT * FROM "app_queue" q JOIN "App Results" r USING (task_id)'


def test_the_channel_literal_becomes_the_mapped_literal() -> None:
    assert RENAMED.rewrite("SELECT pg_notify('sk_task_queue_item_added', '')") == (
        "SELECT pg_notify('app_added', '')"
    )


def test_names_that_only_contain_a_default_name_are_left_alone() -> None:
    text = "CREATE INDEX idx_sk_task_results_parent ON sk_task_results_t (x); sk_tasks_queue_t_pkey"
    assert RENAMED.rewrite(text) == (
        'CREATE INDEX idx_sk_task_results_parent ON "App Results" (x); sk_tasks_queue_t_pkey'
    )


def test_every_query_rewrites_without_a_default_name_left() -> None:
    for name, text in QUERIES.items():
        out = RENAMED.rewrite(text)
        for default in ("sk_tasks_queue_t", "sk_task_results_t", "sk_metrics_t"):
            assert re.search(rf"\b{default}\b", out) is None, name
        assert "'sk_task_queue_item_added'" not in out, name


def test_a_hostile_name_stays_one_quoted_identifier() -> None:
    evil = TableMapping(queue_table='q"; DROP TABLE x; --')
    assert evil.rewrite("DELETE FROM sk_tasks_queue_t") == 'DELETE FROM "q""; DROP TABLE x; --"'


def test_stakhanovise_option_names_are_accepted(tmp_path: Path) -> None:
    path = tmp_path / "appsettings.json"
    path.write_text(
        json.dumps(
            {"QueuedTaskMapping": {"QueueTableName": "app_queue", "ResultsQueueTableName": "r"}}
        )
    )
    mapping = TableMapping.from_file(path)
    assert (mapping.queue_table, mapping.results_table) == ("app_queue", "r")
    assert mapping.table("sk_task_results_t") == "r"
    assert mapping.table("sk_metrics_t") == "sk_metrics_t"


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("{", "is not JSON"),
        ("[1]", "must hold a JSON object"),
        ('{"QueueTable": "x"}', "unknown key"),
        ('{"queue_table": ""}', "non-empty name"),
        ('{"queue_table": "' + "x" * 64 + '"}', "63-byte"),
    ],
)
def test_a_bad_mapping_file_is_refused_with_one_clear_line(
    tmp_path: Path, content: str, message: str
) -> None:
    path = tmp_path / "m.json"
    path.write_text(content)
    with pytest.raises(ConfigError, match=message):
        TableMapping.from_file(path)


def test_a_missing_mapping_file_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="cannot read the mapping file"):
        TableMapping.from_file(tmp_path / "nope.json")
