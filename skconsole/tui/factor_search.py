"""The failure group's ``F`` key: what its jobs share, then a search by the strongest factor.

Why a module: the factors are a costly read (two bounded samples), so it runs in a
worker thread; the result is said in a notification (the top factors, as the CLI's
``status failures --group G --common`` lists them) and the strongest payload factor
becomes the search screen's line, with the group's type, ready to run or edit.
"""

from __future__ import annotations

import shlex
from typing import Any

from textual.app import App

from skconsole.core.text import printable
from skconsole.read import FailureGroup
from skconsole.read.factors import CommonFactors
from skconsole.tui.context import Console
from skconsole.tui.off_thread import read_off_thread
from skconsole.tui.reads import FactorsRead
from skconsole.tui.screens.search import SearchScreen

SHOWN = 3


def factors_text(found: CommonFactors) -> str:
    """The top factors in words: "payload.region = eu: 90% of the group, 10% of others"."""
    if not found.factors:
        return "Nothing stands out among the group's jobs."
    return "\n".join(
        f"{f.field} = {f.value}: {f.share_failing:.0%} of the group, {f.share_others:.0%} of others"
        for f in found.factors[:SHOWN]
    )


def search_line(found: CommonFactors, group: FailureGroup) -> str | None:
    """The search the strongest payload factor makes (with the group's type, when it has one)."""
    factor = next((f for f in found.factors if f.is_payload), None)
    if factor is None:
        return None
    terms = [shlex.quote(f"{factor.field}={factor.value}")]
    if len(group.task_types) == 1:
        terms.append("type=" + shlex.quote(group.task_types[0]))
    return " ".join(terms)


def load_factors(app: App[Any], console: Console, group: FailureGroup) -> None:
    """Read the group's factors in a worker thread, then say them and open the search."""

    def show(found: CommonFactors) -> None:
        app.notify(printable(factors_text(found)), title="What the group's jobs share")
        line = search_line(found, group)
        if line is not None:
            app.push_screen(SearchScreen(console, line))

    read_off_thread(
        app,
        lambda: console.source.read(FactorsRead(group.signature)),
        show,
        lambda exc: console.report_error("could not read the group's factors", exc),
        group="factors",
    )
