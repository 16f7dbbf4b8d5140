"""A place one can link to (a job, a failure group, a search) is checked strictly: it
travels from a URL onto a shell command line and a screen, so anything but a UUID, a
12-hex group id or a search line the console reads is refused with what is wrong."""

from __future__ import annotations

import shlex

import pytest

from skconsole.core.errors import ConfigError
from skconsole.core.places import (
    MAX_SEARCH_CHARS,
    PlaceKind,
    base_url,
    link,
    parse_place,
    place,
)

JOB = "0f3c7a1e-5b2d-4c8e-9a10-1234567890ab"

HOSTILE = [
    ("job", "1; rm -rf /"),
    ("job", f"{JOB} --dsn x"),
    ("job", f"{JOB}\n"),
    ("job", "{" + JOB + "}"),
    ("job", "urn:uuid:" + JOB),
    ("group", "$(id)"),
    ("group", "`reboot`"),
    ("group", "0123456789ab'"),
    ("group", "0123456789AB"),
    ("group", "0123456789abc"),
    ("search", "type=x\x1b]52;c;aGVsbG8=\x07"),
    ("search", "type=x\u202eevil"),
    ("search", "type=x\nstatus=4"),
    ("search", "'unclosed"),
    ("search", "rm -rf /"),
    ("search", ""),
    ("search", "type=" + "a" * MAX_SEARCH_CHARS),
    ("shell", "ls"),
]


@pytest.mark.parametrize(("kind", "value"), HOSTILE)
def test_a_hostile_or_malformed_place_is_refused(kind: str, value: str) -> None:
    with pytest.raises(ConfigError):
        place(kind, value)


def test_a_refusal_shows_the_place_escaped() -> None:
    with pytest.raises(ConfigError) as refused:
        place("job", "\x1b[2J")

    assert "\x1b" not in str(refused.value)


def test_a_job_id_is_kept_in_lower_case() -> None:
    assert place("job", JOB.upper()).value == JOB


def test_a_search_line_is_one_the_search_screen_reads() -> None:
    at = place("search", "type=invoices.send status=4 error='timed out'")

    assert at.kind is PlaceKind.SEARCH
    assert at.value == "type=invoices.send status=4 error='timed out'"


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        (f"job:{JOB}", PlaceKind.JOB),
        ("group:0123456789ab", PlaceKind.GROUP),
        ("search:type=a:b", PlaceKind.SEARCH),
    ],
)
def test_open_takes_kind_colon_value(text: str, kind: PlaceKind) -> None:
    at = parse_place(text)

    assert at.kind is kind
    assert at.option() == text


@pytest.mark.parametrize("text", [JOB, "job", "", "search:" + "x" * 1000])
def test_open_without_a_kind_or_too_long_is_refused(text: str) -> None:
    with pytest.raises(ConfigError):
        parse_place(text)


def test_a_place_on_a_command_line_is_one_argument_after_open() -> None:
    at = place("search", "type=\"a b\" error='$(id)'")

    assert shlex.split(shlex.join(at.argv())) == ["--open", at.option()]


@pytest.mark.parametrize(
    ("text", "url"),
    [
        (f"job:{JOB}", f"http://h:8000/job/{JOB}"),
        ("group:0123456789ab", "http://h:8000/group/0123456789ab"),
        ("search:type=a status=4", "http://h:8000/search?q=type%3Da%20status%3D4"),
    ],
)
def test_the_link_of_a_place(text: str, url: str) -> None:
    assert link(base_url("http://h:8000/"), parse_place(text)) == url


@pytest.mark.parametrize(
    "text",
    ["ftp://h/", "http://h/?q=1", "http://user@h/", "http://h/\x1b", "javascript:alert(1)", ""],
)
def test_a_base_address_with_anything_but_scheme_host_port_and_path_is_refused(
    text: str,
) -> None:
    with pytest.raises(ConfigError):
        base_url(text)
