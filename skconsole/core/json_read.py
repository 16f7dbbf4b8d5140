"""Reading a JSON document back into typed values: an incident bundle
(:mod:`skconsole.read.incident`) is a file anyone may hand over, so every field is
checked for its type as it is read, and a wrong one is one clear line
(:class:`~skconsole.core.errors.ConfigError`), never a traceback.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime

from skconsole.core.errors import ConfigError


@dataclass(frozen=True)
class Doc:
    """One JSON object being read; ``where`` names it in an error ("types[2]")."""

    value: Mapping[str, object]
    where: str = "the document"

    @classmethod
    def of(cls, value: object, where: str = "the document") -> Doc:
        if not isinstance(value, Mapping):
            raise ConfigError(f"{where} is not a JSON object")
        return cls(value, where)

    def _get(self, key: str) -> object:
        if key not in self.value:
            raise ConfigError(f"{self.where} has no {key!r}")
        return self.value[key]

    def bad(self, key: str, what: str) -> ConfigError:
        return ConfigError(f"{self.where}: {key!r} is not {what}")

    def integer(self, key: str) -> int:
        v = self._get(key)
        if isinstance(v, bool) or not isinstance(v, int):
            raise self.bad(key, "a whole number")
        return v

    def integer_or_none(self, key: str) -> int | None:
        return None if self.value.get(key) is None else self.integer(key)

    def number_or_none(self, key: str) -> float | None:
        v = self.value.get(key)
        if v is None:
            return None
        if isinstance(v, bool) or not isinstance(v, int | float):
            raise self.bad(key, "a number")
        return float(v)

    def flag(self, key: str) -> bool:
        v = self._get(key)
        if not isinstance(v, bool):
            raise self.bad(key, "true or false")
        return v

    def text(self, key: str) -> str:
        v = self._get(key)
        if not isinstance(v, str):
            raise self.bad(key, "text")
        return v

    def text_or_none(self, key: str) -> str | None:
        return None if self.value.get(key) is None else self.text(key)

    def time(self, key: str) -> datetime:
        text = self.text(key)
        try:
            at = datetime.fromisoformat(text)
        except ValueError:
            raise self.bad(key, "an ISO 8601 time") from None
        if at.tzinfo is None:
            raise self.bad(key, "a time with its zone")
        return at

    def time_or_none(self, key: str) -> datetime | None:
        return None if self.value.get(key) is None else self.time(key)

    def items(self, key: str) -> list[object]:
        v = self._get(key)
        if isinstance(v, str) or not isinstance(v, Sequence):
            raise self.bad(key, "a list")
        return list(v)

    def docs(self, key: str) -> list[Doc]:
        return [Doc.of(v, f"{self.where}.{key}[{i}]") for i, v in enumerate(self.items(key))]

    def doc(self, key: str) -> Doc:
        return Doc.of(self._get(key), f"{self.where}.{key}")

    def integers(self, key: str) -> list[int]:
        out = []
        for v in self.items(key):
            if isinstance(v, bool) or not isinstance(v, int):
                raise self.bad(key, "a list of whole numbers")
            out.append(v)
        return out

    def texts(self, key: str) -> list[str]:
        out = []
        for v in self.items(key):
            if not isinstance(v, str):
                raise self.bad(key, "a list of texts")
            out.append(v)
        return out
