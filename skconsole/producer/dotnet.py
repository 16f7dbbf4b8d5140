"""Payloads a Stakhanovise.NET consumer can run.

A .NET producer posts a job under its payload type's full name
(``typeof(TPayload).FullName``, e.g. ``Billing.Tasks.ChargeCard``) with the
payload serialised by Newtonsoft.Json with type information: a ``"$type"``
property naming the type and its assembly (``"Billing.Tasks.ChargeCard,
Billing"``), first in the object. Its consumer deserialises the payload with
``TypeNameHandling.Auto`` and picks the executor by that type: without
``"$type"`` it gets an untyped JSON object its executor cannot take; and
Newtonsoft only reads ``"$type"`` as the first property.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from skconsole.core.errors import InvalidJobError

#: "Namespace.Type, Assembly" (the assembly may carry Version=..., Culture=... after it)
_TYPE_NAME = re.compile(r"\s*([^,\s][^,]*?)\s*,\s*([^,\s][^,]*?)\s*(,.*)?")


def dotnet_type_name(type_name: str) -> str:
    """The full type name a .NET consumer runs the payload as (the part before the
    assembly): the task type to post it under. A clear InvalidJobError if ``type_name``
    is not ``"Namespace.Type, Assembly"``."""
    m = _TYPE_NAME.fullmatch(type_name) if isinstance(type_name, str) else None
    if m is None:
        raise InvalidJobError(
            f"a .NET payload type is 'Namespace.Type, Assembly' (as Newtonsoft.Json writes"
            f" $type), got {type_name!r}"
        )
    return m.group(1)


def dotnet_payload(fields: Mapping[str, Any], type_name: str) -> dict[str, Any]:
    """``fields`` as a payload a Stakhanovise.NET consumer deserialises as ``type_name``
    ("Namespace.Type, Assembly"): the same object with ``"$type"`` first. Post it under
    :func:`dotnet_type_name` of the same type name::

        producer.post("Billing.Tasks.ChargeCard",
                      dotnet_payload({"CardId": 7}, "Billing.Tasks.ChargeCard, Billing"))
    """
    dotnet_type_name(type_name)
    if not isinstance(fields, Mapping):
        raise InvalidJobError(
            f"a .NET payload is a JSON object (its properties), got {type(fields).__name__}"
        )
    given = fields.get("$type")
    if given is not None and given != type_name:
        raise InvalidJobError(
            f"the payload already names its .NET type {given!r}, not {type_name!r}"
        )
    return {"$type": type_name, **{k: v for k, v in fields.items() if k != "$type"}}
