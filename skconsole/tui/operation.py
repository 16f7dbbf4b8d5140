"""What an operator key does, as data: an ``ops`` spec, how the selection on screen becomes
its target, and (for some) a dialog that asks for its parameters first.

The key registry (:mod:`skconsole.tui.actions`) holds one :class:`Operation` per write
key; :class:`~skconsole.tui.action_runner.ActionRunner` drives any of them the same way:
resolve the target, ask for parameters if the operation has a dialog for them, preview,
confirm as the spec says, execute, report. So a new action needs its spec, its SQL and
its key (with a resolver from :mod:`skconsole.tui.targets` or a new one), no App method.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from textual.screen import Screen

from skconsole.ops import OperatorAction, Params
from skconsole.tui.model import Dialog, Snapshot, Target
from skconsole.tui.source import DataSource

R = TypeVar("R")


@dataclass(frozen=True)
class Here:
    """Where the key was pressed: the screen, its focused panel's scope, the data shown,
    and the data source (a dialog that reads what it states does so through it, off the
    UI thread)."""

    screen: Screen[Any]
    scope: str
    snapshot: Snapshot | None
    source: DataSource


@dataclass(frozen=True)
class Pick:
    """The target the selection names, and what it fixes of the action: its parameters
    (a table to vacuum, a session's pid) or the spec itself (pause or resume)."""

    target: Target
    params: Params | None = None
    action: OperatorAction | None = None


@dataclass(frozen=True)
class Question(Generic[R]):
    """A dialog asking for an action's parameters, and how its answer completes the pick
    (None: the operator cancelled)."""

    screen: Screen[R | None]
    answer: Callable[[R | None], Pick | None]


#: The selection as a target: a :class:`Pick`, a refusal to show (str), or None (nothing).
Resolver = Callable[[Here], "Pick | str | None"]
#: The dialog that asks for the parameters, given the pick.
Asker = Callable[[Here, Pick], Question[Any]]


@dataclass(frozen=True)
class Operation:
    """One write key: the spec it runs, its target, and how it is asked and confirmed."""

    action: OperatorAction
    target: Resolver
    #: the notice when nothing is selected (None: say nothing)
    missing: str | None = "Select a row first."
    params: Params | None = None  # fixed parameters (else the pick's, else the spec's default)
    ask: Asker | None = None  # a dialog for the parameters before the preview
    dialog: Dialog = Dialog.SAMPLE  # what the confirmation shows besides its question
