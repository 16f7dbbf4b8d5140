"""Failure signatures: the Python reference normaliser on known texts and its properties
(pure, no database). SAMPLES and PIECES are also the texts tests/db/test_failures.py
checks its SQL twin against."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from skconsole.core.signature import MAX_LENGTH, NO_ERROR, error_signature, final_exception_line

PY_TRACEBACK = """Traceback (most recent call last):
  File "/srv/app/tasks.py", line 41, in handle
    return client.call(payload)
  File "/srv/app/client.py", line 12, in call
    raise UpstreamTimeout(f"timeout after {s}s")
app.errors.UpstreamTimeout: timeout after 30s on host db-7
"""

CHAINED = """Traceback (most recent call last):
  File "/srv/app/tasks.py", line 3, in handle
    connect()
ConnectionRefusedError: [Errno 111] Connection refused

During handling of the above exception, another exception occurred:

Traceback (most recent call last):
  File "/srv/app/tasks.py", line 5, in handle
    raise RetryLater("cache-3 unavailable")
app.errors.RetryLater: cache-3 unavailable
"""

DOTNET = """System.TimeoutException: The operation has timed out after 00:00:30.
   at Acme.Orders.Sync.Run(Guid orderId) in C:\\src\\Acme\\Sync.cs:line 42
   at Stakhanovise.NET.Processor.ExecuteAsync()
"""

SAMPLES = [
    PY_TRACEBACK,
    CHAINED,
    DOTNET,
    "timeout after 30s on host db-7",
    "InvalidPayload: payload is not valid JSON (Expecting value: line 1 column 1 (char 0)): 'oops'",
    "skconsole.HungJob: worker gone (db-3.internal pid 4242)",
    "skconsole.HungJob: worker heartbeat stale (45 s)",
    "skconsole.HungJob: over the type's timeout (2.0 s)",
    "TimeoutError: job exceeded its timeout of 2s",
    "KeyError: \"'shipping_address' missing in order 77\"",
    "KeyError: 'user_id'",
    "ValueError: cannot parse amount '12,00' for invoice INV-12",
    "ConnectionRefusedError: connection refused by cache-3.internal:6379",
    "UpstreamTimeout: timeout after 31s calling https://api.partner.example/v2/orders/123?x=1",
    "lookup of 550e8400-e29b-41d4-a716-446655440000 at 0x7f3a2b1c failed, trace 3f2a9c1b7d4e",
    "FileNotFoundError: [Errno 2] No such file or directory: '/srv/exports/batch-7/part-1.csv'",
    "OSError: cannot open /var/log/app/7.log nor ~/cache/x1",
    "Traceback (most recent call last):",
    "",
    "   \n\t  ",
    "x" * 1000,
    "E: " + "'a' " * 200,
    "can't parse `cfg-7` \"quoted 1\" it's fine",
]


# -- behaviour on known texts -----------------------------------------------------------
def test_numbers_differ_but_the_signature_is_the_same() -> None:
    a = error_signature("timeout after 30s on host db-7")
    b = error_signature("timeout after 31s on host db-2")
    assert a == b == "timeout after <n>s on host db-<n>"


def test_a_python_traceback_is_signed_by_its_final_exception_line() -> None:
    assert (
        error_signature(PY_TRACEBACK)
        == "app.errors.UpstreamTimeout: timeout after <n>s on host db-<n>"
    )


def test_a_chained_traceback_is_signed_by_the_last_exception() -> None:
    assert final_exception_line(CHAINED) == "app.errors.RetryLater: cache-3 unavailable"
    assert error_signature(CHAINED) == "app.errors.RetryLater: cache-<n> unavailable"


def test_dotnet_exception_text_is_signed_by_its_first_line() -> None:
    assert error_signature(DOTNET) == (
        "System.TimeoutException: The operation has timed out after <n>:<n>:<n>."
    )


def test_uuids_hex_ids_and_paths_are_collapsed() -> None:
    assert error_signature(SAMPLES[14]) == "lookup of <uuid> at <hex> failed, trace <hex>"
    assert error_signature("OSError: cannot open /var/log/app/7.log nor ~/cache/x1") == (
        "OSError: cannot open <path> nor <path>"
    )


def test_quoted_values_are_collapsed_but_apostrophes_are_kept() -> None:
    assert error_signature("ValueError: cannot parse amount '12,00' for invoice INV-12") == (
        "ValueError: cannot parse amount <str> for invoice INV-<n>"
    )
    assert error_signature("can't parse `cfg-7` \"quoted 1\" it's fine") == (
        "can't parse <str> <str> it's fine"
    )


def test_a_message_that_is_one_quoted_string_keeps_its_words() -> None:
    assert error_signature("KeyError: 'user_id'") == "KeyError: user_id"
    assert error_signature(SAMPLES[9]) == "KeyError: <str> missing in order <n>"


def test_a_url_keeps_its_scheme_and_host_but_not_its_path() -> None:
    assert error_signature(SAMPLES[13]) == (
        "UpstreamTimeout: timeout after <n>s calling https://api.partner.example<path>"
    )


def test_an_empty_or_missing_error_has_a_group_of_its_own() -> None:
    assert error_signature(None) == error_signature("") == error_signature(" \n\t") == NO_ERROR


def test_a_long_signature_is_cut_with_an_ellipsis() -> None:
    sig = error_signature("x" * 1000)
    assert len(sig) == MAX_LENGTH
    assert sig.endswith("\u2026")


# -- properties ---------------------------------------------------------------------------
PIECES = st.sampled_from(
    [
        *"aZ09_'\"`/\\:.-~<>x \t\n\r\x0b\x0c\x00\u2026ABCDEFfe(",
        'KeyError: "',
        "E: '",
        "Traceback (most recent call last):",
        "\n  File",
        "Error: ",
        "://",
        "0x",
        "550e8400-e29b-41d4-a716-446655440000",
        "https://h.example/",
        "\udcff",
    ]
)
ANY_TEXT = st.one_of(
    st.text(st.characters(codec=None)),
    st.lists(PIECES, max_size=80).map("".join),
)


@settings(max_examples=1500, deadline=None)
@given(ANY_TEXT)
def test_the_signature_is_deterministic_and_idempotent(text: str) -> None:
    sig = error_signature(text)
    assert error_signature(text) == sig
    assert error_signature(sig) == sig


@settings(max_examples=1500, deadline=None)
@given(ANY_TEXT)
def test_the_signature_is_one_bounded_line(text: str) -> None:
    sig = error_signature(text)
    assert sig and "\n" not in sig
    assert len(sig) <= MAX_LENGTH


@settings(max_examples=500, deadline=None)
@given(st.binary())
def test_bytes_including_invalid_utf8_never_raise(data: bytes) -> None:
    assert error_signature(data) == error_signature(data.decode("utf-8", errors="replace"))
