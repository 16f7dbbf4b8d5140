"""What a failure group's jobs share (the factors screen's list): one factor a row, with
its counts and shares and the search that selects by it (Enter opens it)."""

from __future__ import annotations

from skconsole.tui.widgets.panel import Panel, console_columns
from skconsole.views import factors
from skconsole.views.factors import FactorRow


class FactorsPanel(Panel):
    scope = "factors"
    title = "Factors"
    COLUMNS = console_columns(factors.COLUMNS)
    opens = "the search that selects the factor's jobs"

    def row_key(self, item: FactorRow) -> str:
        return item.key
