"""``payload.PATH=VALUE``: a condition on a job's JSON payload, as an operator types it.

Why here: ``skconsole find``, the ``--where`` option of every job action and the
console's search screen read the same terms, and the audit row records them,
so they are parsed and checked once, with no database.

The rule (documented in docs/howto/on-call.md, "Find a job"): PATH is a dotted path into the payload
(``payload.customer.id``; a segment of digits also indexes an array:
``payload.items.0.sku``); a key holding a dot cannot be named. VALUE is compared
with the field's text as PostgreSQL's ``#>>`` gives it, so ``42`` matches the
number 42 and the string "42", ``true`` the boolean and the string "true"; a
JSON null and a missing field match nothing; an object or array matches its
compact JSON text. A payload that is not JSON matches no term.
"""

from __future__ import annotations

from dataclasses import dataclass

from skconsole.core.errors import ConfigError
from skconsole.core.json_types import JsonObject
from skconsole.core.text import is_valid_utf8, quoted

PREFIX = "payload."
#: Deepest path a term may name (PostgreSQL itself allows more; nobody needs it).
MAX_DEPTH = 16
#: Longest key of a path, in characters: a path is a condition, not a document.
MAX_TEXT = 1_000
#: Longest value, in characters: a payload's value may be big (a search index holds
#: its digest, sk_key()), and a search for it exactly must be possible.
MAX_VALUE = 100_000
#: Most terms one selection may carry.
MAX_TERMS = 8


@dataclass(frozen=True, slots=True)
class PayloadTerm:
    """One condition: the field at ``path`` has the text ``value``."""

    path: tuple[str, ...]
    value: str

    def __post_init__(self) -> None:
        if not self.path or len(self.path) > MAX_DEPTH:
            raise ConfigError(f"a payload path has 1 to {MAX_DEPTH} keys, got {len(self.path)}")
        for part in self.path:
            _check(part)
        _check(self.value, MAX_VALUE)
        if any(not key for key in self.path):
            raise ConfigError(f"empty key in payload path {quoted(self.dotted)}")

    @property
    def dotted(self) -> str:
        """The term's path as typed: ``payload.customer.id``."""
        return PREFIX + ".".join(self.path)

    def as_json(self) -> JsonObject:
        """As the audit row and ``--json`` record it."""
        return {"path": self.dotted, "value": self.value}

    def __str__(self) -> str:
        return f"{self.dotted}={self.value}"


def _check(text: str, longest: int = MAX_TEXT) -> None:
    if not is_valid_utf8(text):
        raise ConfigError(f"payload term is not valid UTF-8 text: {quoted(text)}")
    if "\x00" in text:
        raise ConfigError("a payload term must not contain NUL characters")
    if len(text) > longest:
        what = "key" if longest == MAX_TEXT else "value"
        raise ConfigError(f"a payload {what} is longer than {longest:,} characters")


def parse_path(text: str) -> tuple[str, ...]:
    """``payload.a.b`` → ``("a", "b")``; anything else is a ConfigError saying what to type."""
    stripped = text.strip()
    if not stripped.startswith(PREFIX) or stripped == PREFIX:
        raise ConfigError(
            f"invalid payload path {quoted(text)}: write payload.KEY[.KEY...],"
            " e.g. payload.customer.id"
        )
    path = tuple(stripped[len(PREFIX) :].split("."))
    if any(not key for key in path):
        raise ConfigError(f"empty key in payload path {quoted(text)} (two dots, or a trailing dot)")
    return path


def parse_term(text: str) -> PayloadTerm:
    """``payload.customer.id=42`` → a term (the first ``=`` splits; the value may be empty)."""
    path_text, eq, value = text.partition("=")
    if not eq:
        raise ConfigError(
            f"invalid --where {quoted(text)}: write payload.PATH=VALUE, e.g. payload.customer.id=42"
        )
    return PayloadTerm(parse_path(path_text), value)


def parse_terms(texts: list[str] | tuple[str, ...] | None) -> tuple[PayloadTerm, ...]:
    """Every ``--where`` given (all must match), duplicates dropped, at most MAX_TERMS."""
    terms = tuple(dict.fromkeys(parse_term(t) for t in texts or ()))
    if len(terms) > MAX_TERMS:
        raise ConfigError(f"at most {MAX_TERMS} --where terms, got {len(terms)}")
    return terms


def terms_json(terms: tuple[PayloadTerm, ...]) -> list[JsonObject] | None:
    """The terms as SQL receives them (a jsonb array of {"path": [...], "value"}), or None."""
    if not terms:
        return None
    return [{"path": list(t.path), "value": t.value} for t in terms]
