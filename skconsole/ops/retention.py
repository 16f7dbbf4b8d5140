"""Retention as a type setting: how long finished results of a task type are kept.

Policies live in ``sk_retention_t``, one per task type and one default (for
every type without its own; the selection names no type). Setting or clearing
one is an operator action like a limit or an SLO (:class:`TypeSetting`): the
write-access check, the old and the new policy read under the row's lock, and
the audit row in the same transaction. The workers purge what is past the
policies (:mod:`skconsole.worker.retention`), reading them as
:class:`skconsole.core.retention.Policy`. With no policy, nothing is purged
automatically: retention is off until someone sets it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

import psycopg

from skconsole.core.durations import format_limit
from skconsole.core.errors import ConfigError
from skconsole.core.json_types import JsonObject, attributes
from skconsole.core.retention import Policy
from skconsole.ops.common import Conn
from skconsole.ops.model import Preview, Selection
from skconsole.ops.spec import Needs, Steps, Wording
from skconsole.ops.type_actions import SettingParams, TypeSetting
from skconsole.read.query import fetch

#: results counted at most when a preview says how many a policy makes eligible
ELIGIBLE_CAP = 1_000_000
RETENTION_TABLE = "sk_retention_t"


@dataclass(frozen=True, slots=True)
class Retention:
    """A type's policy as sk_retention_t holds it (None: no policy)."""

    older_than_s: float | None
    include_faulted: bool | None

    def policy(self, task_type: str | None) -> Policy | None:
        if self.older_than_s is None:
            return None
        return Policy(task_type, float(self.older_than_s), bool(self.include_faulted))


@dataclass(frozen=True)
class RetentionParams(SettingParams[Retention]):
    """Keep finished results ``older_than_s`` seconds (5 Faulted ones purged only with
    ``include_faulted``), or ``clear`` the policy."""

    older_than_s: float | None = None
    include_faulted: bool = False
    clear: bool = False

    def __post_init__(self) -> None:
        if self.clear and self.older_than_s is not None:
            raise ConfigError("retention: set a policy or clear it, not both")
        if not self.clear and self.older_than_s is None:
            raise ConfigError("retention needs --older-than DURATION (or `retention clear`)")
        if self.older_than_s is not None and not self.older_than_s > 0:
            raise ConfigError(f"--older-than must be positive, got {self.older_than_s:g}s")

    def apply(self, old: Retention) -> Retention:
        if self.clear:
            return Retention(None, None)
        return Retention(self.older_than_s, self.include_faulted)

    def shown(self, settings: Retention) -> JsonObject:
        value = settings.older_than_s
        return {
            "older_than_s": float(value) if value is not None else None,
            "include_faulted": settings.include_faulted,
        }

    def details(self) -> JsonObject:
        return attributes(self, "older_than_s include_faulted clear")

    def phrase(self) -> str:
        if self.clear:
            return ": clear it (the default policy applies, if there is one)"
        assert self.older_than_s is not None
        return f" to keep finished results {format_limit(self.older_than_s)}"


@dataclass(frozen=True)
class RetentionSetting(TypeSetting[RetentionParams, Retention]):
    """Retention as a type setting: an empty selection names the default policy, the
    preview counts what the new policy makes eligible now, and the row records who set it."""

    def _task_type(self, selection: Selection) -> str | None:
        return None if selection.is_empty else super()._task_type(selection)

    def _write_params(
        self, task_type: str | None, new: Retention, steps: Steps
    ) -> dict[str, object]:
        set_by = f"{steps.actor.user}@{steps.actor.host}"[:250]
        return {**super()._write_params(task_type, new, steps), "set_by": set_by}

    def _preview(
        self, conn: Conn, selection: Selection, params: RetentionParams, sample_size: int
    ) -> Preview:
        """Whether the policy would change, and how many results the new one makes
        eligible now (``eligible``, counted up to ELIGIBLE_CAP; 0 when clearing)."""
        preview = super()._preview(conn, selection, params, sample_size)
        policy = params.apply(Retention(None, None)).policy(self._task_type(selection))
        count = eligible(conn, policy) if policy is not None else 0
        return replace(preview, details={**preview.details, "eligible": count})


def replaced(task_type: str | None, details: Mapping[str, Any]) -> Policy | None:
    """The policy a change replaced, from its result's details (None: there was none)."""
    old = details["old"]
    return Retention(old["older_than_s"], old["include_faulted"]).policy(task_type)


def policies(conn: psycopg.Connection[Any]) -> list[Policy]:
    """Every policy, the default first."""
    return fetch(conn, "retention_policies", Policy.from_row)


def eligible(conn: psycopg.Connection[Any], policy: Policy) -> int:
    """How many results ``policy`` would purge now (counted up to ELIGIBLE_CAP)."""
    others = [p for p in policies(conn) if p.task_type != policy.task_type] + [policy]
    (count,) = fetch(
        conn,
        "retention_eligible",
        lambda eligible: int(eligible),
        {**policy.scope(others), "cap": ELIGIBLE_CAP},
    )
    return count


RETENTION = RetentionSetting(
    replace(
        Wording.of_settings("retention", "set the retention of", held="this retention"),
        question="{Done} {target}{phrase}?",  # "Set the retention of task type `x` to ...?"
    ),
    params_type=RetentionParams,
    settings=Retention,
    needs=Needs(update=(RETENTION_TABLE,), insert=(RETENTION_TABLE,), delete=(RETENTION_TABLE,)),
)
