"""``skconsole status failures --group G --common``: what a failure group's jobs share.

The factors (:mod:`skconsole.read.factors`: the rule, the samples) as a table
or JSON; a payload factor is printed with the ``--where`` that selects by it,
so the next command (``requeue --where ...``) is a copy away.
"""

from __future__ import annotations

import shlex

from rich.markup import escape

from skconsole.cli.output import Column, out, print_json, print_table
from skconsole.core.text import printable
from skconsole.db.connect import Database
from skconsole.ops.common import signature_of
from skconsole.read.factors import CommonFactors, Factor, common_factors

COLUMNS = (
    Column("field", key=True),
    Column("value", flexible=True),
    Column("in group", justify="right"),
    Column("in others", 1, "right"),
    Column("select with", 2),
)


def where_of(factor: Factor) -> str:
    """The ``--where`` option that selects by a payload factor ("" for another factor)."""
    if not factor.is_payload:
        return ""
    return "--where " + shlex.quote(f"{factor.field}={factor.value}")


def read_common(db: Database, group: str) -> CommonFactors:
    with db.connect() as conn:
        return common_factors(conn, signature_of(conn, group) or group)


def show_common(found: CommonFactors, as_json: bool, wide: bool) -> None:
    if as_json:
        print_json(found.as_dict())
        return
    out.print(
        f"{found.failing_sampled:,} failed job(s) of the group compared with"
        f" {found.others_sampled:,} other job(s) of the same type(s)",
        highlight=False,
    )
    if not found.factors:
        out.print("nothing stands out", highlight=False)
        return
    rows = [
        [
            escape(printable(f.field)),
            escape(printable(f.value)),
            f"{f.share_failing:.0%}",
            f"{f.share_others:.0%}",
            escape(printable(where_of(f))),
        ]
        for f in found.factors
    ]
    print_table(COLUMNS, rows, wide=wide, edge=False)
