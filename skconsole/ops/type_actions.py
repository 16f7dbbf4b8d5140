"""Actions on a task type: :class:`TypeAction` flips it (pause, resume),
:class:`TypeSetting` sets its settings (limit, slo, retention) with the settings before
and after in its audit row. One row changes; nothing is batched."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, fields
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from psycopg.rows import dict_row

from skconsole.core.errors import ConfigError
from skconsole.core.json_types import JsonObject
from skconsole.db.sqlfiles import query
from skconsole.ops.common import ActionProgress, Conn, Done, batch_transaction
from skconsole.ops.model import ActionResult, Preview, PreviewDetails, Selection
from skconsole.ops.spec import Action, Confirm, Needs, NoParams, Params, Row, Steps, Wording
from skconsole.read.query import fetch

if TYPE_CHECKING:
    from _typeshed import DataclassInstance


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
        details: PreviewDetails = {"task_type": task_type, **asdict(state)}
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

    # its three statements are named after it: sql/queries/ops_NAME_state.sql, ...
    @property
    def read(self) -> str:
        """The query of the type's settings (``settings``' fields) and what it holds now."""
        return f"ops_{self.name}_state"

    @property
    def lock(self) -> str:
        """The query of the type's settings, its row locked (no row: none set)."""
        return f"ops_{self.name}_lock"

    @property
    def write(self) -> str:
        """The statement that stores the settings (parameters: task_type and ``settings``)."""
        return f"ops_{self.name}"

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
