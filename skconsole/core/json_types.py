"""The type of a JSON document: what ``--json`` prints and the audit log stores.

A read model's ``as_dict()``, an action's ``details`` and a params' ``details()``
build JSON from typed values; saying so (rather than a dict of ``Any``) makes
mypy check that only JSON goes in: a UUID, datetime, Decimal or enum is turned
into a string or a number explicitly, where it is put in, not by the dumper.
The containers are the read-only ``Sequence``/``Mapping`` (covariant), so a
``list[JsonObject]`` or a ``dict[str, int]`` is a ``Json`` too.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import TypeAlias

#: Any JSON value.
Json: TypeAlias = "bool | int | float | str | Sequence[Json] | Mapping[str, Json] | None"
#: A JSON object being built (mutable while it is put together).
JsonObject: TypeAlias = "dict[str, Json]"


def attributes(obj: object, names: str) -> JsonObject:
    """``{name: obj.name}`` for each of the space-separated ``names``, in their order: the
    part of a value's JSON that its fields and properties give as they are.

    Only for names whose values are JSON already (mypy cannot see through the names: the
    ``--json`` and audit tests of each read model check them). A value that must be turned
    into JSON (an instant, a UUID, an enum) or a key named otherwise is put in by the
    caller: ``{**attributes(self, "a at b"), "at": iso(self.at)}`` keeps the key where the
    names put it and changes its value.
    """
    return {name: getattr(obj, name) for name in names.split()}


__all__ = ["Json", "JsonObject", "attributes"]


def payload_fields(text: str | None) -> JsonObject:
    """A job's stored payload as ``--json`` gives it: ``payload``, its document when the
    text is JSON (so a reader can select into it), else the text itself; and
    ``payload_is_json`` (a JSON string and a text that is not JSON would look alike)."""
    if text is None:
        return {"payload": None, "payload_is_json": True}
    try:
        return {"payload": json.loads(text, parse_constant=_not_json), "payload_is_json": True}
    except (ValueError, RecursionError):
        return {"payload": text, "payload_is_json": False}


def _not_json(constant: str) -> Json:
    raise ValueError(f"{constant} is not JSON")
