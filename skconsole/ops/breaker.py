"""Circuit breakers keyed on a failure signature: add one (armed with a threshold, or for
opening by hand), open it, close it, remove it; each an audited change of one breaker.

Why a breaker and not a pause: a pause stops a whole type, the healthy jobs with the
failing ones. A breaker (sql/schema/150_skconsole_breakers.sql) holds back only the
type's jobs that would hit the failure (those sharing a payload term, and retries of
the signature), lets a few canaries through after a cool-down, and closes by itself
when they succeed. The workers' upkeep moves it between its states; this module is
what an operator does to it, with an audit row like any other action.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, LiteralString

from psycopg.rows import dict_row

from skconsole.core.breakers import PARK_SCAN
from skconsole.core.durations import format_age
from skconsole.core.errors import ConfigError
from skconsole.core.json_types import JsonObject
from skconsole.core.payload_terms import PayloadTerm
from skconsole.core.text import quoted
from skconsole.db.sqlfiles import query
from skconsole.ops.common import ActionProgress, Conn, Done, batch_transaction
from skconsole.ops.guard import QUEUE, TYPES
from skconsole.ops.model import ActionResult, Preview, PreviewDetails, Selection
from skconsole.ops.spec import Action, Confirm, Needs, Params, Steps, Wording
from skconsole.ops.type_actions import type_only

#: the breaker tables, for the write-access check
BREAKERS = "sk_breakers_t"
BREAKER_HELD = "sk_breaker_held_t"
#: the bounds of the knobs
MAX_CANARIES = 1_000
MAX_WINDOW_S = 86_400.0
MAX_COOL_DOWN_S = 86_400.0
DEFAULT_COOL_DOWN_S = 60.0
DEFAULT_CANARIES = 3
#: the longest signature a breaker may name (a stored one is far shorter)
MAX_SIGNATURE = 1_000


class BreakerCommand(enum.Enum):
    """What the operator does to a breaker."""

    ADD = "add"  # create it (or change its settings), closed: armed when it has a threshold
    OPEN = "open"  # open it now (created first when it does not exist)
    CLOSE = "close"  # close it now: its held jobs get their due times back
    REMOVE = "remove"  # close it and delete it


@dataclass(frozen=True)
class BreakerParams(Params):
    """Which breaker (its id, or its type (the selection), signature and payload term)
    and what to do; for add and open, its settings."""

    command: BreakerCommand = BreakerCommand.OPEN
    breaker_id: int | None = None
    signature: str | None = None
    term: PayloadTerm | None = None
    threshold: int | None = None
    window_s: float | None = None
    cool_down_s: float = DEFAULT_COOL_DOWN_S
    canaries: int = DEFAULT_CANARIES

    def __post_init__(self) -> None:
        if isinstance(self.command, str):
            object.__setattr__(self, "command", BreakerCommand(self.command))
        if isinstance(self.term, Mapping):
            term: Mapping[str, Any] = self.term
            path = str(term["path"]).removeprefix("payload.").split(".")
            object.__setattr__(self, "term", PayloadTerm(tuple(path), str(term["value"])))
        if self.breaker_id is None and not self.signature:
            raise ConfigError("breaker: name it by its id, or by --type and --signature")
        if self.signature is not None:
            if len(self.signature) > MAX_SIGNATURE:
                raise ConfigError(f"--signature is longer than {MAX_SIGNATURE:,} characters")
            if self.signature == "(no error text)":
                raise ConfigError("a breaker watches a failure signature: this group has none")
        if (self.threshold is None) != (self.window_s is None):
            raise ConfigError("--threshold and --window go together: N failures in a window")
        if self.threshold is not None and not 1 <= self.threshold <= 1_000_000:
            raise ConfigError(f"--threshold must be 1 to 1,000,000, got {self.threshold}")
        if self.window_s is not None and not 1.0 <= self.window_s <= MAX_WINDOW_S:
            raise ConfigError(f"--window must be 1s to 1d, got {self.window_s:g}s")
        if not 0.0 <= self.cool_down_s <= MAX_COOL_DOWN_S:
            raise ConfigError(f"--cool-down must be 0s to 1d, got {self.cool_down_s:g}s")
        if not 1 <= self.canaries <= MAX_CANARIES:
            raise ConfigError(f"--canaries must be 1 to {MAX_CANARIES:,}, got {self.canaries}")

    def details(self) -> JsonObject:
        return {
            "command": self.command.value,
            "breaker_id": self.breaker_id,
            "signature": self.signature,
            "term": self.term.as_json() if self.term is not None else None,
            "threshold": self.threshold,
            "window_s": self.window_s,
            "cool_down_s": self.cool_down_s,
            "canaries": self.canaries,
        }

    def phrase(self) -> str:
        what = f": {self.command.value}"
        if self.breaker_id is not None:
            what += f" #{self.breaker_id}"
        if self.signature is not None:
            what += f" on {quoted(self.signature)}"
        if self.term is not None:
            what += f" for {self.term}"
        if self.command in (BreakerCommand.ADD, BreakerCommand.OPEN):
            if self.threshold is not None and self.window_s is not None:
                what += f", opening at {self.threshold} failures in {format_age(self.window_s)}"
            what += (
                f", half-open after {format_age(self.cool_down_s)} with"
                f" {self.canaries} canar{'y' if self.canaries == 1 else 'ies'}"
            )
        return what


@dataclass(frozen=True, slots=True)
class BreakerRow:
    """The breaker an action acts on, as it stands (None fields: it does not exist yet)."""

    breaker_id: int | None
    state: int | None
    held: int
    #: the type's queued jobs that it holds back or would (an open breaker's test)
    would_hold: int
    waiting: int


@dataclass(frozen=True)
class BreakerAction(Action[Any]):
    """An action on one breaker (add, open, close, remove): one row, one audit row. Its
    parameters are :class:`BreakerParams` (``Any`` here, as the other kinds' are in
    ``ops.OperatorAction``: a face passes whichever parameters its request holds)."""

    wording: Wording
    needs: Needs
    params_type: type[BreakerParams] = BreakerParams
    confirm: Confirm = Confirm.ASK
    warning: str = ""
    #: the statement that creates the breaker or sets its settings (named for the tests
    #: that hold every spec to its SQL; the code names it as a literal)
    write: str = "ops_breaker_upsert"

    def default_params(self) -> BreakerParams:
        raise ConfigError("breaker needs parameters: which breaker, and what to do")

    @staticmethod
    def _type(selection: Selection, params: BreakerParams) -> str | None:
        return None if params.breaker_id is not None else type_only("breaker", selection)

    def _key(self, selection: Selection, params: BreakerParams) -> dict[str, object]:
        task_type = self._type(selection, params)
        term = params.term
        return {
            "breaker_id": params.breaker_id,
            "task_type": task_type,
            "signature": params.signature,
            "term_path": list(term.path) if term is not None else None,
            "term_value": term.value if term is not None else None,
        }

    def _state(self, conn: Conn, key: dict[str, object], lock: bool) -> BreakerRow:
        if lock:
            conn.execute(query("ops_breaker_lock"), key, prepare=False)
        with conn.cursor(row_factory=dict_row) as cur:
            row = cur.execute(query("ops_breaker_state"), key, prepare=False).fetchone()
        if row is None:
            if key["breaker_id"] is not None:
                raise ConfigError(
                    f"no breaker #{key['breaker_id']}: `skconsole breaker` lists them"
                )
            return BreakerRow(None, None, 0, 0, 0)
        return BreakerRow(**row)

    def _changes(self, row: BreakerRow, params: BreakerParams) -> bool:
        command = params.command
        if command is BreakerCommand.ADD:
            return True  # settings (re)written; the audit row says which
        if command is BreakerCommand.OPEN:
            return row.state != 1
        if command is BreakerCommand.CLOSE:
            return row.state is not None and row.state != 0
        return row.breaker_id is not None

    def _preview(
        self, conn: Conn, selection: Selection, params: BreakerParams, sample_size: int
    ) -> Preview:
        key = self._key(selection, params)
        row = self._state(conn, key, lock=False)
        details: PreviewDetails = {
            **params.details(),
            "task_type": self._type(selection, params),
            "exists": row.breaker_id is not None,
            "state": row.state,
            "held": row.held,
            "would_hold": row.would_hold,
            "waiting": row.waiting,
        }
        return Preview(self.name, selection, int(self._changes(row, params)), (), None, details)

    def _execute(
        self, conn: Conn, selection: Selection, params: BreakerParams, steps: Steps
    ) -> ActionResult:
        key = self._key(selection, params)
        outcome: JsonObject = {}

        def act(progress: ActionProgress) -> Done:
            with batch_transaction(conn, progress) as batch:  # the change and its audit row
                row = self._state(conn, key, lock=True)
                changed = self._changes(row, params)
                breaker_id = row.breaker_id
                command = params.command
                if command in (BreakerCommand.ADD, BreakerCommand.OPEN) and (
                    breaker_id is None or command is BreakerCommand.ADD
                ):
                    breaker_id = self._upsert(conn, key, params)
                moved = 0
                reason = f"{command.value} by {steps.actor.user}@{steps.actor.host}"
                if command is BreakerCommand.OPEN and changed:
                    moved = self._value(
                        conn, query("ops_breaker_open"), {"id": breaker_id, "reason": reason}
                    )
                elif command in (BreakerCommand.CLOSE, BreakerCommand.REMOVE) and (
                    row.state not in (None, 0)
                ):
                    moved = self._value(
                        conn, query("ops_breaker_close"), {"id": breaker_id, "reason": reason}
                    )
                if command is BreakerCommand.REMOVE and breaker_id is not None:
                    conn.execute(query("ops_breaker_delete"), {"id": breaker_id}, prepare=False)
                batch.add(int(changed))
                outcome.update(breaker_id=breaker_id, moved=moved, was=row.state)
            progress.report(int(changed), 1)
            return Done(int(changed), {**outcome, "unchanged": 0 if changed else 1})

        return self._audited(
            conn,
            selection,
            steps,
            1,
            act,
            {"task_type": self._type(selection, params), **params.details()},
        )

    def _upsert(self, conn: Conn, key: dict[str, object], params: BreakerParams) -> int:
        if key["task_type"] is None:
            raise ConfigError("breaker add needs --type and --signature (not an id)")
        values = {
            **key,
            "threshold": params.threshold,
            "window_s": params.window_s,
            "cool_down_s": params.cool_down_s,
            "canaries": params.canaries,
        }
        return self._value(conn, query("ops_breaker_upsert"), values)

    @staticmethod
    def _value(conn: Conn, statement: LiteralString, values: dict[str, object]) -> int:
        row = conn.execute(statement, {**values, "scan": PARK_SCAN}, prepare=False).fetchone()
        assert row is not None
        return int(row[0])


BREAKER = BreakerAction(
    Wording(
        "breaker",
        "changed breaker",
        "breaker",
        question="Circuit breaker of {target}{phrase}?",
        outcome="{Done}{phrase}.",
        nothing="Nothing to change: the breaker is already so.",
    ),
    needs=Needs(
        update=(BREAKERS, QUEUE, TYPES),
        insert=(BREAKERS, BREAKER_HELD, TYPES),
        delete=(BREAKERS, BREAKER_HELD),
    ),
    warning=(
        "An open breaker holds back the type's jobs that would hit the failure; the rest"
        " of the type keeps running."
    ),
)
