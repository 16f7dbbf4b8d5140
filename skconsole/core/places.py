"""A place of the console one can link to: a job, a failure group, a search.

``skconsole serve`` answers ``/job/<id>``, ``/group/<group id>`` and
``/search?q=<search line>`` with the console page, and the console that session starts
opens that place (``skconsole --open job:ID``); the console's link key gives the URL of
what is on screen. The place travels from a URL into a shell command line
(textual-serve starts each console with ``create_subprocess_shell``) and onto a screen,
so it is checked here, strictly, once for all three:

- a job: a UUID in its canonical form (8-4-4-4-12 hex digits), kept in lower case;
- a failure group: its short id, 12 lower-case hex digits
  (:func:`skconsole.read.group_id`, what ``skconsole failures`` and the requeue
  command's ``--group`` take);
- a search: one line of at most :data:`MAX_SEARCH_CHARS` printable characters that the
  console's search line reads (:func:`skconsole.core.find_query.parse_line`).

Anything else is a :class:`~skconsole.core.errors.ConfigError` naming what is wrong,
the place itself shown escaped. The checked value is still shell-quoted by whoever
puts it on a command line (:meth:`Place.argv`).
"""

from __future__ import annotations

import enum
import re
from dataclasses import dataclass
from urllib.parse import quote

from skconsole.core.errors import ConfigError
from skconsole.core.find_query import parse_line
from skconsole.core.text import is_printable, printable

#: where ``skconsole serve`` tells its consoles the address they are reached at
SERVE_URL_ENV = "SKCONSOLE_SERVE_URL"
#: the longest base address a console takes from ``SERVE_URL_ENV``
MAX_BASE_CHARS = 300
#: the longest search line a place (a URL, --open) carries
MAX_SEARCH_CHARS = 500
#: the longest --open text looked at before it is refused (a search line and its prefix)
_MAX_TEXT = MAX_SEARCH_CHARS + 16
_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
_GROUP = re.compile(r"[0-9a-f]{12}")
_BASE = re.compile(r"https?://[A-Za-z0-9.\-\[\]:]+(/[A-Za-z0-9._~\-/]*)?")
_HOW = "job:<job id>, group:<12-hex group id> or search:<search line>"


class PlaceKind(enum.Enum):
    JOB = "job"
    GROUP = "group"
    SEARCH = "search"


@dataclass(frozen=True)
class Place:
    """A checked place: build one with :func:`place` or :func:`parse_place`."""

    kind: PlaceKind
    value: str

    def option(self) -> str:
        """As ``--open`` takes it: ``job:ID``, ``group:ID``, ``search:LINE``."""
        return f"{self.kind.value}:{self.value}"

    def argv(self) -> tuple[str, str]:
        """The console's arguments that open it (to shell-quote onto a command line)."""
        return ("--open", self.option())

    def path(self) -> str:
        """Its address on ``skconsole serve``, percent-encoded: ``/job/ID``,
        ``/group/ID``, ``/search?q=LINE``."""
        if self.kind is PlaceKind.SEARCH:
            return "/search?q=" + quote(self.value, safe="")
        return f"/{self.kind.value}/{self.value}"

    def describe(self) -> str:
        """For a line on screen: ``job 0f3c...``, ``search type=x``."""
        return f"{self.kind.value} {printable(self.value)}"


def place(kind: str, value: str) -> Place:
    """The place of ``kind`` (job, group, search) ``value``, checked; a ConfigError
    says what is wrong."""
    try:
        which = PlaceKind(kind)
    except ValueError:
        raise ConfigError(f"unknown place {printable(kind[:20])!r}: use {_HOW}") from None
    if which is PlaceKind.JOB:
        job_id = value.lower()
        if not _UUID.fullmatch(job_id):
            raise ConfigError(f"not a job id (a UUID): {_shown(value)}")
        return Place(which, job_id)
    if which is PlaceKind.GROUP:
        if not _GROUP.fullmatch(value):
            raise ConfigError(
                f"not a failure group id (12 hex digits, as `skconsole failures` shows): {_shown(value)}"
            )
        return Place(which, value)
    line = value.strip()
    if not line:
        raise ConfigError("an empty search: give a search line, e.g. type=invoices.send status=4")
    if len(line) > MAX_SEARCH_CHARS:
        raise ConfigError(f"the search line is longer than {MAX_SEARCH_CHARS} characters")
    if not is_printable(line):
        raise ConfigError(f"the search line holds control characters: {_shown(line)}")
    parse_line(line)  # a ConfigError saying which term is wrong
    return Place(which, line)


def parse_place(text: str) -> Place:
    """``--open``'s value: ``job:ID``, ``group:ID`` or ``search:LINE``."""
    if len(text) > _MAX_TEXT:
        raise ConfigError(f"--open is longer than {_MAX_TEXT} characters")
    kind, colon, value = text.partition(":")
    if not colon:
        raise ConfigError(f"--open takes {_HOW}, got {_shown(text)}")
    return place(kind, value)


def base_url(text: str) -> str:
    """``skconsole serve``'s address (``http(s)://host[:port][/path]``) without its
    trailing slash; a ConfigError unless it is one (no query, no user, nothing to escape)."""
    if len(text) > MAX_BASE_CHARS or not _BASE.fullmatch(text):
        raise ConfigError(
            f"not a base address (http(s)://host[:port][/path], no query): {_shown(text)}"
        )
    return text.rstrip("/")


def link(base: str, at: Place) -> str:
    """The URL of ``at`` on the server at ``base`` (a checked :func:`base_url`)."""
    return base + at.path()


def _shown(text: str) -> str:
    """``text`` for an error line: escaped, and cut."""
    cut = text if len(text) <= 60 else text[:60] + "..."
    return repr(printable(cut))
