"""Text cut to fit a column always says so, and a failure signature keeps its message:
its module path shortens first. The console's columns share the terminal's width."""

from __future__ import annotations

from typing import Any

import pytest

from skconsole.tui.formatting import beyond_signature, cut, shorten_signature
from skconsole.tui.widgets.keyed_table import Fit, fit_columns
from skconsole.views.table import Column

DECLINED = "skconsole.demo.handlers.PaymentDeclined: card declined for order <n>"


def test_a_text_that_fits_is_left_whole() -> None:
    assert cut("demo.order.validate", 19) == "demo.order.validate"


def test_a_cut_text_ends_with_an_ellipsis_in_its_last_cell() -> None:
    assert cut("demo.order.validate", 17) == "demo.order.valid…"


def test_a_cut_never_splits_a_wide_character_nor_ends_on_a_space() -> None:
    assert cut("注文の検証", 6) == "注文…"
    assert cut("card declined for order", 15) == "card declined…"


def test_a_signature_that_fits_is_left_whole() -> None:
    assert shorten_signature(DECLINED, len(DECLINED)) == DECLINED


def test_a_signature_shortens_its_module_path_package_by_package_first() -> None:
    assert shorten_signature(DECLINED, 62) == (
        "s.demo.handlers.PaymentDeclined: card declined for order <n>"
    )
    assert shorten_signature(DECLINED, 59) == (
        "s.d.handlers.PaymentDeclined: card declined for order <n>"
    )
    assert shorten_signature(DECLINED, 51) == "s.d.h.PaymentDeclined: card declined for order <n>"


def test_then_the_message_is_cut_at_its_end_with_an_ellipsis() -> None:
    assert shorten_signature(DECLINED, 40) == "s.d.h.PaymentDeclined: card declined fo…"


def test_two_signatures_of_one_type_read_apart_in_45_columns() -> None:
    """The on-call report: both read "skconsole.demo.handlers.PaymentDeclined:" cut."""
    other = "skconsole.demo.handlers.PaymentDeclined: card declined for customer cus_<n>"
    assert shorten_signature(DECLINED, 45) != shorten_signature(other, 45)


def test_a_signature_without_a_dotted_type_is_only_cut() -> None:
    assert shorten_signature("UpstreamTimeout: timeout after <n>s", 20) == "UpstreamTimeout: ti…"


def test_a_job_error_that_is_its_signature_says_nothing_more() -> None:
    assert beyond_signature("KeyError: missing", "KeyError: missing") == ""


def test_a_job_error_shows_from_the_word_where_it_parts_from_the_signature() -> None:
    assert beyond_signature(
        "p.UpstreamTimeout: timeout after 31s calling https://api.partner.example/v2/orders/7",
        "p.UpstreamTimeout: timeout after <n>s calling https://api.partner.example<path>",
    ) == ("…31s calling https://api.partner.example/v2/orders/7")


def test_a_job_error_that_parts_in_its_first_word_is_shown_whole() -> None:
    assert beyond_signature("ValueError: x", "KeyError: <str>") == "ValueError: x"


# -- the console's columns ------------------------------------------------------------------
def col(key: str, width: int | None, **kw: Any) -> Column[Any]:
    return Column(key, key, width, cell=lambda _i, _n: "", **kw)


SIGNATURE = col("signature", 30, flex=True, min_width=60)
TABLE = (
    SIGNATURE,
    col("jobs", 7),
    col("types", 16, priority=2),
    col("statuses", 20, priority=3),
    col("first", 10, priority=4),
)


def test_the_flex_column_gets_its_whole_text_and_the_rest_is_blank_at_the_rows_end() -> None:
    fit = fit_columns(TABLE, (90, 7, 16, 20, 10), 200, padding=2)
    assert fit == Fit((0, 1, 2, 3, 4), (90, 7, 16, 20, 200 - 10 - 90 - 43))


def test_on_a_narrow_table_the_highest_priority_numbers_go_first() -> None:
    fit = fit_columns(TABLE, (90, 7, 16, 20, 10), 110, padding=2)
    assert fit.shown == (0, 1, 2)
    assert fit.widths[0] == 110 - 6 - 23


def test_a_flex_column_whose_text_is_short_drops_nothing() -> None:
    fit = fit_columns(TABLE, (35, 7, 16, 20, 10), 110, padding=2)
    assert fit.shown == (0, 1, 2, 3, 4)


def test_spare_width_grows_a_cut_column_to_its_text_after_the_flex_one() -> None:
    fit = fit_columns(TABLE, (50, 7, 29, 23, 10), 200, padding=2)
    assert fit.widths[2:4] == (29, 23)
    assert fit.widths[0] == 50
    assert fit.widths[4] == 200 - 10 - (50 + 7 + 29 + 23)


@pytest.mark.parametrize("room", [0, 10, 40])
def test_a_flex_column_keeps_its_width_when_nothing_more_can_go(room: int) -> None:
    fit = fit_columns(TABLE, (90, 7, 16, 20, 10), room, padding=2)
    assert fit.shown == (0, 1)
    assert fit.widths == (30, 7)
