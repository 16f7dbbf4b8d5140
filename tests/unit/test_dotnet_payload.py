"""Payloads a Stakhanovise.NET consumer can run: its type and assembly as Newtonsoft.Json's
"$type", first in the object (pure, no database)."""

from __future__ import annotations

import json

import pytest

from skconsole import dotnet_payload
from skconsole.core.errors import InvalidJobError
from skconsole.producer import dotnet_type_name


def test_the_dotnet_type_goes_first_in_the_payload() -> None:
    payload = dotnet_payload({"CardId": 7, "$type": "A.B, C"}, "A.B, C")
    assert json.dumps(payload) == '{"$type": "A.B, C", "CardId": 7}'


def test_the_task_type_is_the_type_name_without_its_assembly() -> None:
    assert dotnet_type_name("Billing.Tasks.ChargeCard, Billing") == "Billing.Tasks.ChargeCard"
    assert dotnet_type_name("A.B, A, Version=1.0.0.0, Culture=neutral") == "A.B"


@pytest.mark.parametrize("name", ["Billing.Tasks.ChargeCard", ", Billing", "A.B,", ""])
def test_a_type_name_without_its_assembly_is_refused(name: str) -> None:
    with pytest.raises(InvalidJobError, match=r"Namespace\.Type, Assembly"):
        dotnet_payload({}, name)


def test_a_payload_that_is_not_an_object_is_refused() -> None:
    with pytest.raises(InvalidJobError, match="JSON object"):
        dotnet_payload([1, 2], "A.B, C")  # type: ignore[arg-type]


def test_a_payload_naming_another_type_is_refused() -> None:
    with pytest.raises(InvalidJobError, match="already names"):
        dotnet_payload({"$type": "X.Y, Z"}, "A.B, C")
