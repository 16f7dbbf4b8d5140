"""Tables fit the terminal: the column picker of ``skconsole.cli.output``, without a database."""

from __future__ import annotations

import io
import itertools

from rich.console import Console
from rich.table import Table

from skconsole.cli.output import Column, build_table, pick_columns, table_overhead, text_width

GROUP_ID = "65b9b39de380"
SIGNATURE = (
    "RuntimeError: psycopg.errors.SerializationFailure: could not serialize access due to "
    "concurrent update while processing order <N> for customer <N> in warehouse <S> after "
    "retrying the payment provider call that timed out at https://payments.example.com<path>"
)
#: the failure groups table of ``skconsole status failures``
FAILURES = [
    Column("id", key=True),
    Column("jobs", justify="right"),
    Column("statuses", 4),
    Column("types", 2),
    Column("first seen", 5),
    Column("last seen", 3),
    Column("signature", flexible=True, min_width=30),
]
FAILURE_ROWS = [
    [
        GROUP_ID,
        "1,203",
        "Error 1, Faulted 1,202",
        "billing.charge_customer_card",
        "2026-11-24 00:09:01",
        "2026-11-24 00:19:44",
        SIGNATURE,
    ],
    [
        "53728ad2083d",
        "2",
        "Error 1, Fatal 1",
        "emails.send",
        "2026-11-24 00:09:01",
        "2026-11-24 00:09:01",
        "app.UpstreamTimeout: timeout after <n>s on host db-<n>",
    ],
]
JOB_ID = "0b0c7d8e-5f43-4a4e-9a57-3c1f2d9e8b71"


def headers(columns: list[Column], shown: tuple[int, ...]) -> list[str]:
    return [columns[i].header for i in shown]


def render(table: object, width: int) -> list[str]:
    console = Console(width=width, record=True, file=io.StringIO())
    console.print(table, crop=False)
    return console.export_text().splitlines()


def natural_widths(columns: list[Column], rows: list[list[str]]) -> list[int]:
    return [
        max([text_width(c.header)] + [text_width(r[i]) for r in rows])
        for i, c in enumerate(columns)
    ]


def test_at_80_columns_the_failures_table_keeps_id_jobs_and_a_one_line_signature() -> None:
    layout = pick_columns(FAILURES, natural_widths(FAILURES, FAILURE_ROWS), 80)

    assert headers(FAILURES, layout.shown) == ["id", "jobs", "signature"]
    assert layout.flex_width is not None and layout.flex_width >= 30

    lines = render(build_table(FAILURES, FAILURE_ROWS, width=80), 80)
    [row] = [line for line in lines if GROUP_ID in line]
    assert row.rstrip().endswith("… │")
    assert "RuntimeError: psycopg.errors.SerializationFailure" in row
    assert len(lines) == 4 + len(FAILURE_ROWS)  # border, header, rule, rows, border: one line each


def test_the_least_useful_columns_are_dropped_first_as_the_terminal_narrows() -> None:
    widths = natural_widths(FAILURES, FAILURE_ROWS)
    seen = [
        headers(FAILURES, pick_columns(FAILURES, widths, width).shown)
        for width in range(200, 39, -1)
    ]

    dropped_order: list[str] = []
    for before, after in itertools.pairwise(seen):
        dropped_order += [h for h in before if h not in after]
    assert dropped_order == ["first seen", "statuses", "last seen", "types"]


def test_a_column_that_is_dropped_stays_dropped_on_a_narrower_terminal() -> None:
    widths = natural_widths(FAILURES, FAILURE_ROWS)
    shown = [set(pick_columns(FAILURES, widths, w).shown) for w in range(40, 250)]

    assert all(narrow <= wider for narrow, wider in itertools.pairwise(shown))


def test_ids_are_never_dropped_or_cut_even_on_a_very_narrow_terminal() -> None:
    columns = [
        Column("job", key=True),
        Column("type", 1),
        Column("status", 2),
        Column("note", flexible=True),
    ]
    rows = [[JOB_ID, "emails.send", "Faulted", "x" * 200]]
    for width in (50, 60, 80, 100):
        lines = render(build_table(columns, rows, width=width), width)
        assert any(JOB_ID in line for line in lines), (width, lines)
        assert all(len(line) <= width for line in lines), width


def test_a_table_rendered_at_80_columns_has_no_line_longer_than_80() -> None:
    for columns, rows in ((FAILURES, FAILURE_ROWS), (FAILURES, FAILURE_ROWS * 50)):
        lines = render(build_table(columns, rows, width=80), 80)
        assert max(len(line) for line in lines) <= 80


def test_a_table_without_edges_fits_its_overhead_exactly() -> None:
    columns = [Column("job", key=True), Column("note", flexible=True)]
    rows = [[JOB_ID, "y" * 100]]

    lines = render(build_table(columns, rows, width=80, edge=False), 80)

    assert table_overhead(2, edge=False) == 3
    assert max(len(line) for line in lines) == 80
    assert any(JOB_ID in line and line.endswith("…") for line in lines)


def test_wide_keeps_every_column_at_full_width_whatever_the_terminal() -> None:
    widths = natural_widths(FAILURES, FAILURE_ROWS)

    layout = pick_columns(FAILURES, widths, 80, wide=True)
    lines = render(build_table(FAILURES, FAILURE_ROWS, width=80, wide=True), 80)

    assert layout.shown == tuple(range(len(FAILURES))) and layout.flex_width is None
    header = next(line for line in lines if "signature" in line)
    assert all(c.header in header for c in FAILURES)
    assert any(SIGNATURE in line for line in lines)
    assert max(len(line) for line in lines) == sum(widths) + table_overhead(len(FAILURES))


def test_a_table_that_fits_is_drawn_exactly_as_a_plain_rich_table() -> None:
    plain = Table(title="Failure groups", title_justify="left")
    for c in FAILURES:
        plain.add_column(c.header, justify=c.justify)
    for row in FAILURE_ROWS:
        plain.add_row(*row)

    fitted = build_table(FAILURES, FAILURE_ROWS, width=250, title="Failure groups")

    assert render(fitted, 250) == render(plain, 250)


def test_while_every_column_fits_the_free_text_wraps_as_before_instead_of_being_cut() -> None:
    widths = natural_widths(FAILURES, FAILURE_ROWS)
    at_min = sum(widths[:-1]) + 30 + table_overhead(len(FAILURES))

    layout = pick_columns(FAILURES, widths, at_min)

    assert layout.shown == tuple(range(len(FAILURES))) and layout.flex_width is None
    assert pick_columns(FAILURES, widths, at_min - 1).shown != layout.shown


def test_a_table_without_a_flexible_column_drops_columns_and_cuts_nothing() -> None:
    columns = [Column("type"), *(Column(f"col{n}", n, "right") for n in range(1, 10))]
    rows = [["emails.send", *(f"{n * 1000:,}" for n in range(1, 10))]]

    layout = pick_columns(columns, natural_widths(columns, rows), 60)
    lines = render(build_table(columns, rows, width=60), 60)

    assert layout.flex_width is None
    assert headers(columns, layout.shown)[:3] == ["type", "col1", "col2"]
    assert "col9" not in headers(columns, layout.shown)
    assert max(len(line) for line in lines) <= 60
    assert any("emails.send" in line for line in lines)


def test_cell_width_is_measured_as_drawn_with_control_characters_made_visible() -> None:
    assert text_width("t.\x1b[31mevil") == len("t.\\x1b[31mevil")
    assert text_width("\\[literal]") == len("[literal]")
    assert text_width("日本") == 4
