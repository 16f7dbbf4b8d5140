"""How an edit shows a payload and checks a new one (no database)."""

from __future__ import annotations

import json

import pytest

from skconsole.core.errors import ConfigError
from skconsole.core.text import is_printable
from skconsole.ops.edit import EditParams, editable_json, payload_diff, refusal, same_payload

HOSTILE = {"note": "x\x1b[31mred\x9b31m\u202eexe", "emoji": "\U0001f600", "city": "Zürich"}


def test_an_editable_payload_is_pretty_printed_json_of_the_same_value() -> None:
    text = editable_json(json.dumps(HOSTILE))

    assert json.loads(text) == HOSTILE
    assert text.startswith('{\n  "note": ')


def test_an_editable_payload_holds_no_character_a_terminal_could_act_on() -> None:
    text = editable_json(json.dumps(HOSTILE, ensure_ascii=False))

    assert is_printable(text, keep_newlines=True)
    assert "\\u001b[31mred\\u009b31m\\u202eexe" in text
    assert "Zürich" in text and "\U0001f600" in text  # printable text stays readable


def test_a_stored_payload_that_is_not_json_is_shown_with_visible_escapes() -> None:
    assert editable_json('{"a": \x1b[31m') == '{"a": \\x1b[31m'


def test_a_missing_payload_is_edited_as_null() -> None:
    assert editable_json(None) == "null"


def test_payloads_differing_only_in_formatting_are_the_same() -> None:
    assert same_payload('{"a":1,"b":[2]}', '{\n  "a": 1, "b": [ 2 ]\n}')


def test_the_diff_removes_and_adds_the_changed_lines_only() -> None:
    diff = payload_diff('{"a": 1, "b": 2}', '{"a": 1, "b": 3}')

    assert [line for line in diff if line[:1] in "+-" and line[:3] not in ("---", "+++")] == [
        '-  "b": 2',
        '+  "b": 3',
    ]


def test_the_diff_of_the_same_value_is_empty() -> None:
    assert payload_diff('{"a":1}', '{"a": 1}') == []


def test_edit_params_refuse_a_priority_out_of_range() -> None:
    with pytest.raises(ConfigError, match="--priority must be between 0"):
        EditParams(payload="{}", priority=-1)


def test_edit_params_refuse_reset_errors_without_requeue() -> None:
    with pytest.raises(ConfigError, match="--reset-errors goes with --requeue"):
        EditParams(payload="{}", reset_errors=True)


def test_edit_params_refuse_invalid_utf8_as_the_producer_does() -> None:
    with pytest.raises(ConfigError, match="UTF-8"):
        EditParams(payload='"\udcff"')


@pytest.mark.parametrize("status", [1, 4, 5, 6, 7])
def test_waiting_failed_and_cancelled_jobs_may_be_edited(status: int) -> None:
    assert refusal("j", status) is None


@pytest.mark.parametrize("status", [0, 2, 3])
def test_running_succeeded_or_unknown_jobs_may_not_be_edited(status: int) -> None:
    assert (refusal("j", status) or "").startswith(f"edit refused: job j is {status} ")
