"""Stakhanovise.NET's table mapping: SQL written with the default names, rewritten
for the names an application chose, read as PostgreSQL reads them unquoted (as .NET
writes them into its SQL), then always quoted."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from skconsole.core.errors import ConfigError
from skconsole.db.mapping import DEFAULT_MAPPING, TableMapping
from skconsole.db.sqlfiles import QUERIES

RENAMED = TableMapping(
    queue_table="app_queue",
    results_table='"App Results"',
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


def test_unquoted_names_fold_to_lower_case_as_postgresql_reads_them() -> None:
    mapping = TableMapping.from_dict(
        {
            "QueueTableName": "Billing_sk_tasks_queue_t",
            "NewTaskNotificationChannelName": "Billing_Chan",
        }
    )
    assert mapping.table("sk_tasks_queue_t") == "billing_sk_tasks_queue_t"
    assert mapping.channel_name == "billing_chan"
    assert (
        mapping.rewrite("DELETE FROM sk_tasks_queue_t") == 'DELETE FROM "billing_sk_tasks_queue_t"'
    )


def test_a_name_differing_from_the_default_only_in_case_is_the_default() -> None:
    assert TableMapping(queue_table="SK_TASKS_QUEUE_T").is_default


def test_a_qualified_name_names_the_schema_too() -> None:
    mapping = TableMapping(queue_table="Billing.Jobs")
    assert mapping.regname("sk_tasks_queue_t") == '"billing"."jobs"'
    assert mapping.table("sk_tasks_queue_t") == "jobs"


def test_setup_names_derive_from_the_mapped_table_as_dotnet_setup_derives_them() -> None:
    mapping = TableMapping(queue_table="Billing_Q", results_table="Billing_R")
    out = mapping.rewrite(
        "CONSTRAINT pk_sk_tasks_queue_t; idx_sk_tasks_queue_t_sort_index;"
        " nextval('sk_tasks_queue_t_task_lock_handle_id_seq'); idx_sk_task_results_t_task_type"
    )
    assert out == (
        'CONSTRAINT "pk_billing_q"; "idx_billing_q_sort_index";'
        ' nextval(\'"billing_q_task_lock_handle_id_seq"\'); "idx_billing_r_task_type"'
    )


def test_a_long_name_is_cut_to_63_bytes_as_postgresql_cuts_it() -> None:
    mapping = TableMapping(queue_table="q" * 60)
    assert mapping.table("sk_tasks_queue_t") == "q" * 60
    assert mapping.rewrite("idx_sk_tasks_queue_t_filter_index") == '"' + ("idx_" + "q" * 59) + '"'


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


def test_a_hostile_name_is_refused_as_no_name() -> None:
    with pytest.raises(ConfigError, match="is not a name"):
        TableMapping(queue_table='q"; DROP TABLE x; --')


def test_a_quoted_hostile_name_stays_one_quoted_identifier() -> None:
    evil = TableMapping(queue_table='"q""; DROP TABLE x; --"')
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
        ('{"queue_table": "App Results"}', "is not a name"),
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
