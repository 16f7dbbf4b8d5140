"""An action on jobs (requeue, bump, cancel, purge, reap, edit): its statuses, its
statements, and the one flow every such action runs: the preview freezes the selection
and captures the ids, the execution acts on them in batches, each with its audit row."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from uuid import UUID

from psycopg.rows import dict_row

from skconsole.core.errors import ConfigError
from skconsole.core.json_types import JsonObject
from skconsole.core.status import JobStatus
from skconsole.db.sqlfiles import query
from skconsole.ops.common import (
    ActionProgress,
    Batches,
    Conn,
    Done,
    batch_transaction,
    freeze,
    in_batches,
    select_rows,
    selection_params,
)
from skconsole.ops.model import ActionResult, JobRow, Preview, Selection
from skconsole.ops.spec import Action, Confirm, Needs, P, Row, Steps, Wording


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

    def result_summary(self, details: Mapping[str, object]) -> str:
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
        by_type = tuple(Counter(r.task_type for r in rows).most_common())
        shown = tuple(rows[:sample_size])
        return Preview(self.name, selection, len(rows), shown, ids, details, by_type)

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
