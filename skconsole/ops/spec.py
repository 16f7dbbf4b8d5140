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
flow below, so the CLI, the console and the tests run every action the same
way, and a new action is a spec, its SQL and its key.
"""

from __future__ import annotations

import enum
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, fields
from datetime import datetime
from typing import TYPE_CHECKING, Any, Generic, TypeVar
from uuid import UUID

import psycopg
from psycopg.rows import dict_row

from skconsole.core.actor import Actor
from skconsole.core.errors import ConfigError
from skconsole.core.json_types import JsonObject
from skconsole.core.status import JobStatus
from skconsole.db.sqlfiles import query
from skconsole.ops.common import (
    ActionProgress,
    Batches,
    Done,
    batch_transaction,
    freeze,
    in_batches,
    run_action,
    select_rows,
    selection_params,
)
from skconsole.ops.guard import Privilege
from skconsole.ops.model import (
    BATCH_SIZE,
    SAMPLE_SIZE,
    ActionResult,
    JobRow,
    Preview,
    PreviewDetails,
    ProgressCallback,
    Selection,
)
from skconsole.read.query import fetch

if TYPE_CHECKING:
    from _typeshed import DataclassInstance

Conn = psycopg.Connection[Any]
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

    def details(self) -> JsonObject:
        """What the preview, the result and the audit row record of these parameters."""
        return {}

    def phrase(self) -> str:
        """Words a confirmation adds after the scope, e.g. " to priority 0"."""
        return ""

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
class Plan:
    """What an action reads of its jobs before it acts (its spec's ``plan``): the ids in
    the order its batches take them, parameters every batch's statement shares, and
    details the preview, the result and the audit row add."""

    ids: tuple[UUID, ...]
    shared: dict[str, object]
    details: JsonObject


@dataclass(frozen=True)
class Tally:
    """What one batch's rows say: jobs changed, and named counts to add up."""

    changed: int
    counts: tuple[tuple[str, int], ...] = ()


def count_rows(rows: Sequence[Row]) -> Tally:
    """The usual tally: the write statement returns one row per job it changed."""
    return Tally(len(rows))


def no_summary(details: Mapping[str, object]) -> str:
    """Most results say all there is in their count."""
    return ""


def needs_criteria(action: str, selection: Selection) -> None:
    if selection.is_empty:
        raise ConfigError(
            f"{action} needs a selection: --id, --group, --type, --status, --older-than or --where"
        )


def any_selection(action: str, selection: Selection) -> None:
    """An empty selection means all the jobs the action applies to."""


def effective_statuses(
    action: str,
    selection: Selection,
    allowed: tuple[JobStatus, ...],
    default: tuple[JobStatus, ...],
) -> tuple[int, ...]:
    """The statuses an action acts on: the selection's (checked) or the action's default."""
    if not selection.statuses:
        return tuple(int(s) for s in default)
    bad = sorted(set(selection.statuses) - set(allowed))
    if bad:
        names = ", ".join(f"{int(s)} {s.label}" for s in allowed)
        raise ConfigError(
            f"{action} acts on jobs in status {names}; not on {', '.join(map(str, bad))}"
        )
    return tuple(sorted(set(selection.statuses)))


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
class StatusRule:
    """The statuses an action may touch, and those it touches when none are named."""

    allowed: tuple[JobStatus, ...]
    default: tuple[JobStatus, ...] | None = None  # None: all it may touch
    #: those it touches when jobs are named by id and no status is (None: as default):
    #: a job named by id may be one a broader selection leaves alone (a running one)
    by_id: tuple[JobStatus, ...] | None = None

    @property
    def defaults(self) -> tuple[JobStatus, ...]:
        return self.allowed if self.default is None else self.default

    def defaults_for(self, selection: Selection) -> tuple[JobStatus, ...]:
        if selection.ids and self.by_id is not None:
            return self.by_id
        return self.defaults


@dataclass(frozen=True)
class Queries:
    """An action's statements (names in sql/queries, checked when the spec is made)."""

    select: str  # the selection's jobs as JobRow columns, oldest activity first
    write: str  # one batch: ids, or a LIMIT of ``batch`` for a frozen selection
    count: str | None = None  # the selection's size (needed with a capture limit)

    def __post_init__(self) -> None:
        for name in (self.select, self.write, self.count):
            if name is not None:
                query(name)  # a misspelt query name fails at import


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

    def result_summary(self, details: dict[str, Any]) -> str:
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
        """What the action would change, as seen now (for jobs: their ids captured)."""
        params = params if params is not None else self.default_params()
        return self._preview(conn, selection or Selection(), params, sample_size)

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


@dataclass(frozen=True)
class JobAction(Action[P]):
    """An action on jobs, run as preview (count, sample, captured ids) then execute."""

    wording: Wording
    params_type: type[P]
    statuses: StatusRule
    queries: Queries
    needs: Needs
    check_selection: Callable[[str, Selection], None] = needs_criteria
    tally: Callable[[Sequence[Row]], Tally] = count_rows
    counted: tuple[str, ...] = ()  # the named counts of its tallies (0 when no batch ran)
    #: after the last batch, with every row its writes returned: details to add
    #: to the result (a cancel waits for the workers it asked to stop jobs)
    follow_up: Callable[[Conn, Sequence[Row], P], JsonObject] | None = None
    #: what a result's details add to "<done> N": the CLI and the console print it
    summary: Callable[[Mapping[str, object]], str] = no_summary
    #: before the batches (and in a preview): the order of the jobs and what every
    #: batch shares (a requeue's spread: its start), with details to record. Each
    #: batch's statement also gets ``position`` (how many jobs came before it in
    #: that order) and ``total`` (how many in all).
    plan: Callable[[Conn, Sequence[UUID], P], Plan] | None = None
    confirm: Confirm = Confirm.ASK
    warning: str = ""  # the sentence a console confirmation ends with
    groups: bool = True  # whether --group may select
    #: above this many jobs, a preview keeps a sample only and execute re-runs
    #: the frozen selection in batches (for actions whose result cannot newly match)
    capture_limit: int | None = None

    def result_summary(self, details: dict[str, Any]) -> str:
        return self.summary(details)

    def _statuses(self, selection: Selection, params: P) -> tuple[int, ...]:
        extra = params.extra_statuses()
        rule = self.statuses
        return effective_statuses(
            self.name, selection, (*rule.allowed, *extra), (*rule.defaults_for(selection), *extra)
        )

    def _prepare(
        self, conn: Conn, selection: Selection, params: P
    ) -> tuple[Selection, dict[str, object]]:
        if not self.groups and selection.group is not None:
            raise ConfigError(
                f"{self.name} selects jobs by --id, --type or --older-than, not --group"
            )
        self.check_selection(self.name, selection)
        params.check(self.name, selection)
        statuses = self._statuses(selection, params)
        selection = freeze(conn, selection)
        return selection, {**selection_params(conn, selection, statuses), **params.sql()}

    def _count(self, conn: Conn, where: dict[str, object]) -> int:
        assert self.queries.count is not None
        with conn.cursor(row_factory=dict_row) as cur:
            row = cur.execute(query(self.queries.count), where, prepare=False).fetchone()
        return int(row["n"]) if row else 0

    def _rows(self, conn: Conn, where: dict[str, object], limit: int | None) -> list[JobRow]:
        return select_rows(conn, query(self.queries.select), where, limit)

    def _preview(self, conn: Conn, selection: Selection, params: P, sample_size: int) -> Preview:
        selection, where = self._prepare(conn, selection, params)
        details = params.details()
        if self.capture_limit is not None:
            count = self._count(conn, where)
            if count > self.capture_limit:
                sample = self._rows(conn, where, sample_size)
                return Preview(self.name, selection, count, tuple(sample), None, details)
        rows = self._rows(conn, where, None)
        ids = tuple(r.task_id for r in rows)
        if self.plan is not None and ids:
            details = {**details, **self.plan(conn, ids, params).details}
        return Preview(self.name, selection, len(rows), tuple(rows[:sample_size]), ids, details)

    def _execute(self, conn: Conn, selection: Selection, params: P, steps: Steps) -> ActionResult:
        selection, where = self._prepare(conn, selection, params)
        batch_size = steps.batch_size
        counts: dict[str, int] = dict.fromkeys(self.counted, 0)
        followed: JsonObject = {}
        written: list[Row] = []

        def step(batch_where: dict[str, object]) -> int:
            with conn.cursor(row_factory=dict_row) as cur:
                rows = cur.execute(query(self.queries.write), batch_where, prepare=False).fetchall()
            tally = self.tally(rows)
            for key, n in tally.counts:
                counts[key] = counts.get(key, 0) + n
            if self.follow_up is not None:
                written.extend(rows)
            return tally.changed

        def by_ids(todo: list[UUID], shared: dict[str, object]) -> Batches:
            def run(progress: ActionProgress) -> Done:
                position = 0

                def one(batch: list[UUID]) -> int:
                    nonlocal position
                    at, position = position, position + len(batch)
                    return step(
                        {
                            **where,
                            **shared,
                            "ids": batch,
                            "batch": len(batch),
                            "limit": len(batch),
                            "position": at,
                            "total": len(todo),
                        }
                    )

                changed = in_batches(conn, todo, batch_size, one, progress)
                if self.follow_up is not None:
                    followed.update(self.follow_up(conn, written, params))
                return Done(changed, {**counts, **followed})

            return run

        def by_selection(progress: ActionProgress) -> Done:
            # a frozen selection of final results: nothing can newly match it
            done = 0
            while True:
                with batch_transaction(conn, progress) as batch:
                    n = batch.add(
                        step(
                            {
                                **where,
                                "batch": batch_size,
                                "limit": batch_size,
                                "position": done,
                                "total": total,
                            }
                        )
                    )
                done += n
                progress.report(done, min(done, total))
                if n < batch_size:
                    return Done(done, dict(counts))

        requested: int
        batches: Batches
        details = params.details()
        if steps.ids is None and self.capture_limit is not None:
            requested = total = self._count(conn, where)
            batches = by_selection
        else:
            todo = (
                list(dict.fromkeys(steps.ids))
                if steps.ids is not None
                else [r.task_id for r in self._rows(conn, where, None)]
            )
            shared: dict[str, object] = {}
            if self.plan is not None and todo:
                plan = self.plan(conn, todo, params)
                todo, shared, details = list(plan.ids), plan.shared, {**details, **plan.details}
            requested, batches = len(todo), by_ids(todo, shared)
        return self._audited(conn, selection, steps, requested, batches, details)


def type_only(action: str, selection: Selection) -> str:
    """The task type a type action applies to: the selection names it and nothing else."""
    if (
        selection.task_type is None
        or selection.ids
        or selection.group
        or selection.statuses
        or selection.where
        or (selection.older_than_seconds is not None)
    ):
        raise ConfigError(f"{action} applies to a task type: give --type T and nothing else")
    return selection.task_type


@dataclass(frozen=True, slots=True)
class TypeState:
    """What pausing or resuming a type would affect: its switch and its jobs."""

    paused: bool
    waiting: int
    in_flight: int

    def as_json(self) -> JsonObject:
        return asdict(self)


@dataclass(frozen=True)
class TypeAction(Action[Params]):
    """An action on a task type (pause, resume): one row flips, nothing is batched."""

    wording: Wording
    paused: bool  # the state it sets
    write: str  # query: flip the type; returns a row when it changed
    needs: Needs
    confirm: Confirm = Confirm.ASK
    warning: str = ""
    params_type: type[Params] = NoParams

    def __post_init__(self) -> None:
        query(self.write)

    def _task_type(self, selection: Selection) -> str:
        return type_only(self.name, selection)

    def _preview(
        self, conn: Conn, selection: Selection, params: Params, sample_size: int
    ) -> Preview:
        """Whether the flip would change anything (count 1 or 0), and what the type holds."""
        task_type = self._task_type(selection)
        (state,) = fetch(conn, "ops_type_state", TypeState, {"task_type": task_type})
        details: PreviewDetails = {"task_type": task_type, **state.as_json()}
        return Preview(self.name, selection, int(state.paused != self.paused), (), None, details)

    def _execute(
        self, conn: Conn, selection: Selection, params: Params, steps: Steps
    ) -> ActionResult:
        """Flip the type (idempotent: a type already in that state is unchanged, not skipped)."""
        task_type = self._task_type(selection)

        def flip(progress: ActionProgress) -> Done:
            with batch_transaction(conn, progress) as batch:  # the flip and its audit row
                rows = conn.execute(
                    query(self.write), {"task_type": task_type}, prepare=False
                ).fetchall()
                batch.add(len(rows))
            progress.report(len(rows), 1)
            return Done(len(rows), {"task_type": task_type, "unchanged": 0 if rows else 1})

        return self._audited(conn, selection, steps, 1, flip)


V = TypeVar("V", bound="DataclassInstance")


class SettingParams(Params, Generic[V]):
    """The parameters of a :class:`TypeSetting`: how they change a type's settings ``V``
    (a frozen dataclass whose fields are the setting queries' columns)."""

    def apply(self, old: V) -> V:
        """The settings after the action, from those before."""
        raise NotImplementedError

    def shown(self, settings: V) -> JsonObject:
        """Settings as the preview, the result and the audit row record them (JSON)."""
        return asdict(settings)


S = TypeVar("S", bound=SettingParams[Any])


@dataclass(frozen=True)
class TypeSetting(Action[S], Generic[S, V]):
    """An action that sets a task type's settings (limit, slo, retention): one row changes,
    and its audit row records the settings before and after."""

    wording: Wording
    params_type: type[S]
    read: str  # query: the type's settings (``settings``' fields) and what it holds now
    lock: str  # query: the type's settings, its row locked (no row: none set)
    write: str  # query: store the settings (named parameters: task_type and ``settings``)
    settings: type[V]  # the settings: a dataclass of the read queries' columns, by name
    needs: Needs
    confirm: Confirm = Confirm.ASK
    warning: str = ""
    #: after the settings (and their audit row) committed, outside any transaction: work
    #: the new settings need that cannot run in one (limit: its key index); given the
    #: type, the old and new settings, it returns details to add to the result
    after: Callable[[Conn, str, V, V], JsonObject] | None = None

    def __post_init__(self) -> None:
        for name in (self.read, self.lock, self.write):
            query(name)

    def default_params(self) -> S:
        raise ConfigError(f"{self.name} needs parameters: what to set")

    def _task_type(self, selection: Selection) -> str | None:
        return type_only(self.name, selection)

    def _settings(self, row: Mapping[str, Any] | None) -> V:
        names = (f.name for f in fields(self.settings))
        return self.settings(**{n: row[n] if row is not None else None for n in names})

    def _context(self, row: Row | None) -> JsonObject:
        """The read query's columns beyond the settings: what the type holds now."""
        names = {f.name for f in fields(self.settings)}
        return {k: v for k, v in (row or {}).items() if k not in names}

    def _write_params(self, task_type: str | None, new: V, steps: Steps) -> dict[str, object]:
        """The write statement's parameters: the type and its new settings."""
        return {"task_type": task_type, **asdict(new)}

    def _read_row(self, conn: Conn, name: str, task_type: str | None) -> Row | None:
        with conn.cursor(row_factory=dict_row) as cur:
            return cur.execute(query(name), {"task_type": task_type}, prepare=False).fetchone()

    def _preview(self, conn: Conn, selection: Selection, params: S, sample_size: int) -> Preview:
        """Whether the settings would change (count 1 or 0): before, after, and the type's jobs."""
        task_type = self._task_type(selection)
        row = self._read_row(conn, self.read, task_type)
        old = self._settings(row)
        new = params.apply(old)
        details: PreviewDetails = {
            "task_type": task_type,
            "old": params.shown(old),
            "new": params.shown(new),
            **self._context(row),
        }
        return Preview(self.name, selection, int(old != new), (), None, details)

    def _execute(self, conn: Conn, selection: Selection, params: S, steps: Steps) -> ActionResult:
        """Set the settings, reading the old ones under the row's lock in the same transaction."""
        task_type = self._task_type(selection)
        seen: JsonObject = {}
        settings: list[V] = []  # old, new

        def store(progress: ActionProgress) -> Done:
            with batch_transaction(conn, progress) as batch:  # the change and its audit row
                old = self._settings(self._read_row(conn, self.lock, task_type))
                new = params.apply(old)
                seen.update(old=params.shown(old), new=params.shown(new))
                settings.extend((old, new))
                changed = 0
                if new != old:
                    changed = len(
                        conn.execute(
                            query(self.write),
                            self._write_params(task_type, new, steps),
                            prepare=False,
                        ).fetchall()
                    )
                batch.add(changed)
            progress.report(changed, 1)
            extra = {}
            if self.after is not None and task_type is not None:
                extra = self.after(conn, task_type, settings[0], settings[1])
            return Done(
                changed,
                {"task_type": task_type, **seen, "unchanged": 0 if changed else 1, **extra},
            )

        return self._audited(
            conn, selection, steps, 1, store, {"task_type": task_type, **params.details()}
        )


def _jsonable(row: Row) -> JsonObject:
    """A row as the audit row's JSON keeps it (instants as ISO text)."""
    return {k: v.isoformat() if isinstance(v, datetime) else v for k, v in row.items()}


def _qualifies(row: Row | None) -> bool:
    """A server action's target is there and qualifies (its ``eligible`` column, if any)."""
    return row is not None and row.get("eligible", True) is not False


@dataclass(frozen=True)
class ServerAction(Action[P]):
    """An action on the server around the queue rather than on jobs (vacuum a queue table,
    cancel a blocking session's statement): one target, named by its parameters, previewed
    with ``read`` and acted on once with ``write``, which re-checks in SQL that the target
    is still the one previewed and still qualifies (no row: left alone).

    ``then`` (optional) runs after ``write`` with its row, outside any transaction, for a
    statement that cannot run in a transaction block (VACUUM); the audit row is then
    written in its own transaction right after it. Without ``then``, ``write`` and the
    audit row commit together. The connection must be in autocommit mode either way.
    """

    wording: Wording
    params_type: type[P]
    read: str  # query: the target now (one row: its columns are the preview's details)
    write: str  # query: re-check and act; a row when it acted
    needs: Needs
    then: Callable[[Conn, P, Row], JsonObject] | None = None
    confirm: Confirm = Confirm.ASK
    warning: str = ""

    def __post_init__(self) -> None:
        query(self.read)
        query(self.write)

    def default_params(self) -> P:
        raise ConfigError(f"{self.name} needs parameters: what to act on")

    def _row(self, conn: Conn, name: str, params: P) -> Row | None:
        with conn.cursor(row_factory=dict_row) as cur:
            return cur.execute(query(name), params.sql(), prepare=False).fetchone()

    def _target(self, conn: Conn, params: P) -> Row | None:
        """The write query's row, when the target is there and still qualifies: a write
        that re-reads its target (``write`` the read query) acts only then."""
        row = self._row(conn, self.write, params)
        return row if _qualifies(row) else None

    def _preview(self, conn: Conn, selection: Selection, params: P, sample_size: int) -> Preview:
        """The target as it is now: count 1, or 0 when there is none or it does not qualify
        (the read query's ``eligible`` column, when it has one, says)."""
        params.check(self.name, selection)
        row = self._row(conn, self.read, params)
        count = int(_qualifies(row))
        return Preview(self.name, selection, count, (), None, {**params.details(), **(row or {})})

    def _execute(self, conn: Conn, selection: Selection, params: P, steps: Steps) -> ActionResult:
        """Act once, audited; a target that no longer qualifies is counted as left alone."""
        params.check(self.name, selection)
        if not conn.autocommit:
            raise ConfigError(f"{self.name} needs an autocommit connection (Database.connect())")
        then = self.then

        def in_transaction(progress: ActionProgress) -> Done:
            with batch_transaction(conn, progress) as batch:  # the action and its audit row
                row = self._target(conn, params)
                batch.add(int(row is not None))
            progress.report(batch.changed, 1)
            return Done(batch.changed, _jsonable(row or {}))

        def outside(progress: ActionProgress) -> Done:
            assert then is not None
            row = self._target(conn, params)  # autocommit: no transaction open
            extra = then(conn, params, row) if row is not None else {}
            # the statement ran outside any transaction (it must); its audit row follows
            # at once, in a transaction of its own
            with batch_transaction(conn, progress) as batch:
                batch.add(int(row is not None))
            progress.report(batch.changed, 1)
            return Done(batch.changed, _jsonable({**(row or {}), **extra}))

        return self._audited(
            conn,
            selection,
            steps,
            1,
            in_transaction if then is None else outside,
            params.details(),
        )


#: Any operator action.
OperatorAction = JobAction[Any] | TypeAction | TypeSetting[Any, Any] | ServerAction[Any]
