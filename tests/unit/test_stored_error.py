"""Errors as stored in task_last_error: Stakhanovise.NET's QueuedTaskError JSON, which a
.NET consumer deserialises when it dequeues the job again (pure, no database).

JSON_SAMPLES is also used by tests/db/test_failures.py to check that SQL reads the
same texts as the JSON shape, with the same naming line and signature."""

from __future__ import annotations

import json

import pytest

from skconsole.core.signature import error_signature, final_exception_line, read_error
from skconsole.core.stored_error import (
    JSON_LIMIT,
    MESSAGE_LIMIT,
    STACK_TRACE_LIMIT,
    StoredError,
    parse_json,
    readable_error,
)

DOTNET_ARGUMENT = json.dumps(
    {
        "Type": "System.ArgumentException",
        "Message": "Value cannot be null. (Parameter 'cardId')",
        "StackTrace": "   at Billing.Tasks.ChargeCard.Execute() in C:\\src\\Charge.cs:line 42",
    },
    separators=(",", ":"),
)

JSON_SAMPLES = [
    DOTNET_ARGUMENT,
    '{"Type":"System.TimeoutException","Message":"timed out after 30012 ms","StackTrace":null}',
    '  {"Type" : "ValueError", "Message" : "bad amount \'12,00\'\\nsecond line"}',
    '{"Message":"no type here 42"}',
    '{"Type":"OnlyType"}',
    '{"Type":"T","Message":"\\n\\n   \\n  third line counts  \\n"}',
    '{"Type":"","Message":""}',
    # not the shape: read as plain text
    '{"Type": 7, "Message": "x"}',
    '{"Other": "x"}',
    '["Type", "Message"]',
    '{"Type": "T", "Message": "m"',
    '{"Type":"T","Message":"nul \\u0000 inside"}',
    '{"Type":"T","Message":"lone \\ud800 surrogate"}',
    '{"Type":"T","Message":"x","n":NaN}',
    "\f" + '{"Type":"T","Message":"form feed first"}',
    "Traceback (most recent call last):\n  File x\nValueError: plain text",
]


def test_a_stored_error_is_the_json_a_dotnet_consumer_deserialises() -> None:
    stored = StoredError("ValueError", "bad amount", "Traceback ...").stored()
    assert json.loads(stored) == {
        "Type": "ValueError",
        "Message": "bad amount",
        "StackTrace": "Traceback ...",
    }
    assert stored.startswith('{"Type":"ValueError","Message":')


def test_an_exception_is_stored_with_its_type_message_and_traceback() -> None:
    class PaymentDeclined(Exception):
        pass

    try:
        raise PaymentDeclined("card 4242 declined")
    except PaymentDeclined as exc:
        error = StoredError.from_exception(exc)
    assert (
        error.type
        == f"{__name__}.test_an_exception_is_stored_with_its_type_message_and_traceback.<locals>.PaymentDeclined"
    )
    assert error.message == "card 4242 declined"
    assert error.stack_trace is not None
    assert error.stack_trace.startswith("Traceback (most recent call last):")
    assert error.stack_trace.endswith("PaymentDeclined: card 4242 declined")


def test_a_builtin_exception_is_named_as_a_traceback_names_it() -> None:
    assert StoredError.from_exception(KeyError("user_id")).type == "KeyError"


def test_an_exception_whose_str_raises_is_still_stored_by_its_type() -> None:
    class Broken(Exception):
        def __str__(self) -> str:
            raise RuntimeError("no")

    error = StoredError.from_exception(Broken())
    assert error.type.endswith("Broken")
    assert error.message == "<the exception could not be formatted>"


def test_a_huge_message_and_stack_trace_are_capped_and_stay_json() -> None:
    error = StoredError("E", "m" * 10_000_000, "s" * 10_000_000).storable()
    assert len(error.message) == MESSAGE_LIMIT
    assert error.stack_trace is not None and len(error.stack_trace) == STACK_TRACE_LIMIT
    assert parse_json(error.to_json()) == error


def test_nul_and_lone_surrogates_never_reach_the_stored_text() -> None:
    stored = StoredError("E", "a\x00b \ud800", None).stored()
    parsed = parse_json(stored)
    assert parsed is not None
    assert "\x00" not in parsed.message
    parsed.message.encode("utf-8")  # valid UTF-8


@pytest.mark.parametrize(
    "text",
    [
        '{"Type": 7, "Message": "x"}',
        '{"Other": "x"}',
        '["Type"]',
        '{"Type": "T"',
        '{"Type":"T","Message":"\\u0000"}',
        '{"Type":"T","Message":"x","n":NaN}',
        "plain text",
        "",
    ],
)
def test_texts_not_of_the_shape_are_not_read_as_json(text: str) -> None:
    assert parse_json(text) is None


def test_a_text_longer_than_the_json_limit_is_read_as_plain_text() -> None:
    big = json.dumps({"Type": "T", "Message": "x" * JSON_LIMIT})
    assert parse_json(big) is None


def test_the_naming_line_of_json_is_its_type_and_first_message_line() -> None:
    assert final_exception_line(DOTNET_ARGUMENT) == (
        "System.ArgumentException: Value cannot be null. (Parameter 'cardId')"
    )
    assert final_exception_line('{"Type":"T","Message":"\\n  first  \\nsecond"}') == "T: first"
    assert final_exception_line('{"Message":"only a message"}') == "only a message"
    assert final_exception_line('{"Type":"OnlyType"}') == "OnlyType"


def test_dotnet_errors_differing_in_values_sign_alike_and_types_apart() -> None:
    def dotnet(kind: str, message: str) -> str:
        return json.dumps({"Type": kind, "Message": message, "StackTrace": "   at X.Y()"})

    a = error_signature(dotnet("System.ArgumentException", "Invalid card 4242 (Parameter 'a')"))
    b = error_signature(dotnet("System.ArgumentException", "Invalid card 1881 (Parameter 'b')"))
    c = error_signature(dotnet("System.TimeoutException", "Invalid card 4242 (Parameter 'a')"))
    assert a == b == "System.ArgumentException: Invalid card <n> (Parameter <str>)"
    assert c != a


def test_a_python_error_signs_the_same_stored_as_json_or_as_its_traceback() -> None:
    try:
        raise ValueError("cannot parse amount '12,00' for invoice 7")
    except ValueError as exc:
        error = StoredError.from_exception(exc)
    assert error.stack_trace is not None
    assert error_signature(error.stored()) == error_signature(error.stack_trace)


def test_either_shape_reads_back_as_type_message_and_stack_trace() -> None:
    assert read_error(DOTNET_ARGUMENT) == StoredError(
        "System.ArgumentException",
        "Value cannot be null. (Parameter 'cardId')",
        "   at Billing.Tasks.ChargeCard.Execute() in C:\\src\\Charge.cs:line 42",
    )
    legacy = "Traceback (most recent call last):\n  File x\nValueError: bad"
    assert read_error(legacy) == StoredError("ValueError", "bad", legacy)
    assert read_error("just words") == StoredError("", "just words", None)
    assert read_error(None) is None and read_error("  ") is None


def test_a_dotnet_error_reads_with_its_stack_trace_below_the_headline() -> None:
    assert readable_error(DOTNET_ARGUMENT) == (
        "System.ArgumentException: Value cannot be null. (Parameter 'cardId')\n\n"
        "   at Billing.Tasks.ChargeCard.Execute() in C:\\src\\Charge.cs:line 42"
    )
    assert readable_error("plain\ntext") == "plain\ntext"
