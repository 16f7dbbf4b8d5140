"""Several queues in one process: the queues file (TOML), names read from DSNs, and the
layout each queue's reads use."""

from __future__ import annotations

from pathlib import Path

import pytest

from skconsole.cli.options import named_queues
from skconsole.core.errors import ConfigError
from skconsole.db.mapping import TableMapping
from skconsole.db.queues import load_queues, name_from_dsn, queues_from_dsns
from skconsole.db.sqlfiles import for_layout, query


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "queues.toml"
    path.write_text(text, encoding="utf-8")
    return path


def error_of(path: Path) -> str:
    with pytest.raises(ConfigError) as caught:
        load_queues(path)
    message = str(caught.value)
    assert "\n" not in message
    return message


# -- the file ---------------------------------------------------------------------------------
def test_a_queues_file_names_each_queue_with_its_dsn(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        '[[queue]]\nname = "billing"\ndsn = "postgresql://w@db1/billing"\n\n'
        '[[queue]]\nname = "emails"\ndsn = "host=db2 dbname=mail"\n',
    )

    queues = load_queues(path)

    assert [(q.name, q.dsn, q.mapping) for q in queues] == [
        ("billing", "postgresql://w@db1/billing", None),
        ("emails", "host=db2 dbname=mail", None),
    ]


def test_a_queue_without_a_name_is_named_from_its_dsn(tmp_path: Path) -> None:
    path = write(tmp_path, '[[queue]]\ndsn = "postgresql://w:secret@db1:6432/billing"\n')

    (queue,) = load_queues(path)

    assert queue.name == "billing@db1"


def test_a_queues_mapping_file_is_read_beside_the_queues_file(tmp_path: Path) -> None:
    (tmp_path / "billing.json").write_text('{"QueueTableName": "billing_queue"}')
    path = write(
        tmp_path,
        '[[queue]]\nname = "billing"\ndsn = "postgresql://db1/b"\n'
        'mapping = "billing.json"\nschema = "jobs"\n',
    )

    (queue,) = load_queues(path)

    assert queue.mapping == TableMapping(queue_table="billing_queue", schema="jobs")


def test_a_queues_mapping_may_be_an_inline_table(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        '[[queue]]\nname = "b"\ndsn = "postgresql://db1/b"\nmapping = { queue_table = "bq" }\n',
    )

    (queue,) = load_queues(path)

    assert queue.mapping == TableMapping(queue_table="bq")


def test_a_queue_with_a_schema_alone_keeps_the_default_names(tmp_path: Path) -> None:
    path = write(tmp_path, '[[queue]]\nname = "b"\ndsn = "postgresql://db1/b"\nschema = "q"\n')

    (queue,) = load_queues(path)

    assert queue.mapping == TableMapping(schema="q")


def test_a_queue_without_a_dsn_is_one_line_naming_it(tmp_path: Path) -> None:
    path = write(tmp_path, '[[queue]]\nname = "billing"\n')

    message = error_of(path)

    assert "queue 1 ('billing') has no dsn" in message
    assert str(path) in message


def test_two_queues_of_one_name_are_refused(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        '[[queue]]\nname = "a"\ndsn = "postgresql://h/1"\n'
        '[[queue]]\nname = "b"\ndsn = "postgresql://h/2"\n'
        '[[queue]]\nname = "a"\ndsn = "postgresql://h/3"\n',
    )

    assert "queues 1 and 3 are both named 'a'" in error_of(path)


def test_toml_that_does_not_parse_says_where(tmp_path: Path) -> None:
    path = write(tmp_path, '[[queue]]\nname = "a"\ndsn = postgresql://h/1\n')

    message = error_of(path)

    assert "is not valid TOML" in message and "line 3" in message


def test_a_file_with_no_queue_says_what_to_write(tmp_path: Path) -> None:
    assert "names no queue" in error_of(write(tmp_path, "# nothing yet\n"))


def test_an_unknown_key_of_a_queue_is_named(tmp_path: Path) -> None:
    path = write(tmp_path, '[[queue]]\nname = "a"\ndns = "postgresql://h/1"\n')

    assert "unknown key 'dns'" in error_of(path)


def test_a_missing_file_is_one_line(tmp_path: Path) -> None:
    assert "cannot read the queues file" in error_of(tmp_path / "absent.toml")


def test_a_dsn_libpq_cannot_parse_is_refused(tmp_path: Path) -> None:
    path = write(tmp_path, '[[queue]]\nname = "a"\ndsn = "host"\n')

    assert "queue 1 ('a') has an invalid dsn" in error_of(path)


def test_a_name_with_control_characters_is_refused(tmp_path: Path) -> None:
    path = write(tmp_path, '[[queue]]\nname = "a\\u001b[31m"\ndsn = "postgresql://h/1"\n')

    assert "printable" in error_of(path)


def test_a_bad_mapping_names_its_queue(tmp_path: Path) -> None:
    path = write(
        tmp_path, '[[queue]]\nname = "a"\ndsn = "postgresql://h/1"\nmapping = "absent.json"\n'
    )

    message = error_of(path)

    assert "queue 1 ('a')" in message and "cannot read the mapping file" in message


# -- names from DSNs --------------------------------------------------------------------------
def test_a_dsn_gives_its_database_at_its_host_and_never_its_password() -> None:
    assert name_from_dsn("postgresql://ops:hunter2@db.example:5433/billing") == (
        "billing@db.example"
    )
    assert name_from_dsn("host=/run/postgresql dbname=mail") == "mail@localhost"


def test_two_dsns_that_read_the_same_get_their_ports_then_numbers() -> None:
    queues = queues_from_dsns(
        [
            "postgresql://h1:5432/q",
            "postgresql://h1:5433/q",
            "postgresql://h2/other",
            "postgresql://u@h2/other",
        ]
    )

    assert [q.name for q in queues] == [
        "q@h1:5432",
        "q@h1:5433",
        "other@h2:5432",
        "other@h2:5432-2",
    ]


def test_one_queue_named_twice_by_dsn_is_refused_in_one_line() -> None:
    with pytest.raises(ConfigError, match=r"--dsn names the queue q@h1:5432 twice"):
        queues_from_dsns(["postgresql://ops@h1/q", "postgresql://ops:pw@h1:5432/q"])


# -- the options --------------------------------------------------------------------------------
def test_dsn_and_queues_together_are_refused(tmp_path: Path) -> None:
    path = write(tmp_path, '[[queue]]\nname = "a"\ndsn = "postgresql://h/1"\n')

    with pytest.raises(ConfigError, match="--dsn and --queues"):
        named_queues(["postgresql://h/2"], path)


def test_the_environments_dsn_is_the_one_queue_when_none_is_given(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("SKCONSOLE_DSN", "host=db dbname=q user=me")

    (queue,) = named_queues([], None)

    assert (queue.name, queue.dsn) == ("q@db", "host=db dbname=q user=me")


def test_no_dsn_and_no_file_name_no_queue(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SKCONSOLE_DSN", raising=False)

    assert named_queues([], None) == ()


# -- each queue's layout ------------------------------------------------------------------------
def test_a_statement_is_written_for_the_layout_it_runs_for_and_for_no_other() -> None:
    mine = TableMapping(queue_table="mine_q")

    assert '"mine_q"' in for_layout(query("depth"), mine)
    assert "sk_tasks_queue_t" in query("depth")  # as written: each cursor rewrites its own
    assert for_layout(query("depth"), TableMapping()) == query("depth")


def test_text_that_is_not_a_named_statement_is_never_rewritten() -> None:
    """Text composed from names already mapped must not be mapped twice."""
    mine = TableMapping(queue_table="mine_q")
    composed = "SELECT 1 FROM sk_tasks_queue_t"

    assert for_layout(composed, mine) == composed
