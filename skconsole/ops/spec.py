"""Operator actions as specs: what each action is, said once; how any of them runs, written once.

An action is a :class:`JobAction` (it changes jobs: requeue, bump, cancel,
purge, reap), a :class:`TypeAction` (it flips a task type: pause, resume), a
:class:`TypeSetting` (it sets a type's settings: limit, slo, retention) or a
:class:`ServerAction` (it acts once on the server around the queue: vacuum a
queue table, cancel a blocking session's statement).
The spec holds everything that differs between actions: names and verbs for
messages, the statuses it may touch, its select and write queries, the
privileges it needs, how it must be confirmed, and the type of its
parameters. Everything else — freezing the selection, the preview that
captures ids, the batches, each batch's audit row, the result — is the one
flow of its kind, so the CLI, the console and the tests run every action the
same way, and a new action is a spec, its SQL and its key.

This module holds what every kind shares: a spec's :class:`Wording`, its
:class:`Params`, its :class:`Needs`, how it is confirmed, and :class:`Action`, the
two steps every spec answers to. Each kind is a module of its own:
:mod:`~skconsole.ops.job_action`, :mod:`~skconsole.ops.type_actions` (pause and
resume, and a type's settings) and :mod:`~skconsole.ops.server_action`.
"""

from __future__ import annotations

import enum
from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, fields
from typing import TYPE_CHECKING, Any, Generic, Self, TypeVar
from uuid import UUID

from skconsole.core.actor import Actor
from skconsole.core.errors import ConfigError
from skconsole.core.json_types import JsonObject
from skconsole.core.status import JobStatus
from skconsole.db.mapping import TableMapping
from skconsole.ops.common import Batches, Conn, run_action
from skconsole.ops.forecast import with_forecast
from skconsole.ops.guard import Privilege
from skconsole.ops.model import (
    BATCH_SIZE,
    SAMPLE_SIZE,
    ActionResult,
    Preview,
    ProgressCallback,
    Selection,
)

if TYPE_CHECKING:
    pass

#: A row a write statement returns, by column name.
Row = Mapping[str, Any]


class Confirm(enum.Enum):
    """How a person confirms the action before it runs."""

    ASK = "ask"  # a question that defaults to No
    TYPE_COUNT = "type count"  # type the number of jobs (irreversible and possibly huge)
    NONE = "none"  # reversible: no question in the console (the CLI still asks)


@dataclass(frozen=True)
class Params:
    """An action's parameters beyond the selection; subclasses check themselves on creation."""

    def sql(self) -> dict[str, object]:
        """Extra parameters of the action's statements."""
        return {}

    def sql_on(self, mapping: TableMapping) -> dict[str, object]:
        """The parameters for a queue of ``mapping``'s names (an action on a table
        names it as that queue does)."""
        return self.sql()

    def details(self) -> JsonObject:
        """What the preview, the result and the audit row record of these parameters."""
        return {}

    def phrase(self) -> str:
        """Words a confirmation adds after the scope, e.g. " to priority 0"."""
        return ""

    @classmethod
    def from_details(cls, details: Mapping[str, object]) -> Self | None:
        """These parameters again from what an audit row's details recorded of them
        (:meth:`details`), so that the row is worded as the action was (:meth:`phrase`);
        None where the details do not say them back. By default the fields that the
        details name alike."""
        names = {f.name for f in fields(cls)}
        try:
            return cls(**{k: v for k, v in details.items() if k in names})
        except (ConfigError, TypeError, ValueError):
            return None

    def done_phrase(self) -> str:
        """Words an outcome adds after the target, e.g. ", posted again, ready now"."""
        return ""

    def check(self, action: str, selection: Selection) -> None:
        """Refuse a selection these parameters do not allow (ConfigError)."""

    def extra_statuses(self) -> tuple[JobStatus, ...]:
        """Statuses these parameters let the action touch beyond its own."""
        return ()


@dataclass(frozen=True)
class NoParams(Params):
    """For an action that takes none."""


@dataclass(frozen=True)
class Steps:
    """How an execution proceeds: who acts, on which ids, in what batches, reporting to whom."""

    actor: Actor
    ids: Sequence[UUID] | None
    batch_size: int
    on_progress: ProgressCallback | None


@dataclass(frozen=True)
class Wording:
    """How messages name the action: "would requeue 3 job(s)", "requeued 3 job(s)"."""

    verb: str  # also the action's name (CLI command, audit rows)
    done: str
    noun: str = "job(s)"
    # The console's sentences, as templates (str.format). Fields: {verb} (hyphens as
    # spaces), {Verb} and {Done} (capitalised), {target} and {Target} (the target's label),
    # {scope} (the target counted: "12 jobs in group `X`"), {phrase} (the parameters'
    # words), {done_phrase}, {changed} (a count), {summary} (the result's details) and
    # {tally} ("; 5 had changed state meanwhile ..." or " of 12").
    #: the confirmation (a warning follows it)
    question: str = "{Verb} {scope}{phrase}?"
    #: the outcome
    outcome: str = "{Done} {changed}{summary}{tally}."
    #: the outcome when nothing changed because the target changed meanwhile (None: ``outcome``)
    left_alone: str | None = None
    #: the notice when the preview finds nothing to act on
    nothing: str = "Nothing to {verb} for {target}: nothing there qualifies now."

    @classmethod
    def of_settings(cls, verb: str, done: str, held: str = "these settings") -> Wording:
        """How an action setting a task type's settings speaks: "Limited task type `x` to
        concurrency 2.", "Nothing changed: task type `x` already has these settings."."""
        return cls(
            verb,
            done,
            "task type",
            outcome="{Done} {target}{phrase}.",
            nothing=f"Nothing changed: {{target}} already has {held}.",
        )

    @classmethod
    def of_one(cls, verb: str, done: str, noun: str) -> Wording:
        """How an action on one thing of the server (a session, a table) speaks: "Vacuum
        table `x`?", "Vacuumed table `x`.", and of a target gone or no longer qualifying."""
        return cls(
            verb,
            done,
            noun,
            question="{Verb} {scope}?",
            outcome="{Done} {target}.",
            left_alone="Left alone: {target} changed meanwhile (gone, or no longer qualifies).",
            nothing="Nothing to {verb}: {target} is gone or no longer qualifies.",
        )


@dataclass(frozen=True)
class Needs:
    """The tables an action writes, by privilege, besides its audit row."""

    update: tuple[str, ...] = ()
    insert: tuple[str, ...] = ()
    delete: tuple[str, ...] = ()

    @property
    def privileges(self) -> tuple[Privilege, ...]:
        return tuple(
            (table, privilege)
            for privilege, tables in (
                ("update", self.update),
                ("insert", self.insert),
                ("delete", self.delete),
            )
            for table in tables
        )


P = TypeVar("P", bound=Params)


class Action(ABC, Generic[P]):
    """What every spec answers to: its name (its wording's verb) and its two steps,
    ``preview`` then ``execute``, taking the same arguments for every action."""

    wording: Wording
    params_type: type[P]
    needs: Needs

    @property
    def name(self) -> str:
        return self.wording.verb

    def default_params(self) -> P:
        return self.params_type()

    def result_summary(self, details: Mapping[str, object]) -> str:
        """What a result's details add to "<done> N" (only job actions have anything)."""
        return ""

    def preview(
        self,
        conn: Conn,
        selection: Selection | None = None,
        params: P | None = None,
        *,
        sample_size: int = SAMPLE_SIZE,
    ) -> Preview:
        """What the action would change, as seen now (for jobs: their ids captured); for
        an action that moves jobs, with its forecast (:mod:`skconsole.ops.forecast`)."""
        params = params if params is not None else self.default_params()
        preview = self._preview(conn, selection or Selection(), params, sample_size)
        # an action that moves jobs says what follows, from the flow read right after
        return with_forecast(conn, preview)

    def execute(
        self,
        conn: Conn,
        selection: Selection | None = None,
        params: P | None = None,
        *,
        actor: Actor,
        ids: Sequence[UUID] | None = None,
        batch_size: int = BATCH_SIZE,
        on_progress: ProgressCallback | None = None,
    ) -> ActionResult:
        """Act on ``ids`` (a preview's) or else on the selection as of now, with its audit row.

        Each job's state is re-checked by the write statement, so jobs that
        changed since the preview are left alone and counted as such.
        """
        params = params if params is not None else self.default_params()
        steps = Steps(actor, ids, batch_size, on_progress)
        return self._execute(conn, selection or Selection(), params, steps)

    def _audited(
        self,
        conn: Conn,
        selection: Selection,
        steps: Steps,
        requested: int,
        batches: Batches,
        details: JsonObject | None = None,
    ) -> ActionResult:
        """Run ``batches`` after the write-access check, each with the audit row."""
        return run_action(
            conn,
            self.name,
            self.needs.privileges,
            selection,
            steps.actor,
            requested,
            batches,
            steps.on_progress,
            details,
        )

    @abstractmethod
    def _preview(
        self, conn: Conn, selection: Selection, params: P, sample_size: int
    ) -> Preview: ...

    @abstractmethod
    def _execute(
        self, conn: Conn, selection: Selection, params: P, steps: Steps
    ) -> ActionResult: ...
