"""The main screen's panels are listed once (skconsole.tui.panels.PANELS); keys 1-9,
tabs and help derive from that one tuple."""

from __future__ import annotations

import importlib
import pkgutil

import skconsole.tui.widgets as widgets_pkg
from skconsole.tui import action_spec, actions
from skconsole.tui.actions import ACTIONS
from skconsole.tui.panels import PANEL_IDS, PANELS, number_of, numbered, panel_class
from skconsole.tui.screens.help import help_text, where
from skconsole.tui.screens.main import tab_label
from skconsole.tui.widgets.panel import Panel


def test_panels_are_numbered_one_to_nine_in_tuple_order() -> None:
    assert [n for n, _ in numbered()] == list(range(1, len(PANELS) + 1)) == list(range(1, 10))
    for n, cls in numbered():
        assert number_of(cls.scope) == n
        assert panel_class(cls.scope) is cls


def test_every_panel_class_in_the_widgets_is_in_the_tuple() -> None:
    found = set()
    for info in pkgutil.iter_modules(widgets_pkg.__path__):
        if not info.name.endswith("_panel"):
            continue
        module = importlib.import_module(f"{widgets_pkg.__name__}.{info.name}")
        for value in vars(module).values():
            if (
                isinstance(value, type)
                and issubclass(value, Panel)
                and value is not Panel
                and value.__module__ == module.__name__
            ):
                found.add(value)
    # a drill-down's list (jobs, factors), and the overview of several queues: not the main screen's
    elsewhere = {cls for cls in found if cls.scope in ("jobs", "factors", action_spec.QUEUES)}
    assert found - elsewhere == set(PANELS)


def test_panel_ids_and_titles_are_unique_and_set() -> None:
    assert len(set(PANEL_IDS)) == len(PANELS)
    assert all(cls.scope and cls.title for cls in PANELS)
    labels = [cls.label() for cls in PANELS]
    assert len(set(labels)) == len(labels)


def test_panel_keys_are_the_numbers_and_unique() -> None:
    panel_specs = [a for a in actions.ACTIONS if a.id.startswith("panel(")]
    assert [(a.key, a.id) for a in panel_specs] == [
        (str(n), f"panel('{cls.scope}')") for n, cls in numbered()
    ]
    keys = [a.key for a in actions.ACTIONS]
    assert len(keys) == len(set(keys))


def test_key_help_and_palette_use_the_panel_label_defined_on_its_class() -> None:
    for n, cls in numbered():
        spec = actions.BY_ID[f"panel('{cls.scope}')"]
        assert spec.description == cls.label()
        assert cls.label() in spec.help
        assert spec.key == str(n)
    text = help_text(ACTIONS, read_only=False)
    assert "Exec times" in text and "Failures" in text


def test_short_title_is_the_label_and_title_heads_the_border() -> None:
    exec_panel = panel_class("exec")
    assert exec_panel.title == "Execution time"
    assert exec_panel.label() == "Exec times"
    depth = panel_class("depth")
    assert depth.short_title == "" and depth.label() == depth.title == "Queue depth"


def test_tab_labels_are_number_and_label_with_the_note() -> None:
    failures = panel_class("failures")
    assert tab_label(3, failures) == "3 Failures"
    assert tab_label(3, failures, "6") == "3 Failures 6"


def test_main_scope_covers_every_panel_and_help_names_them() -> None:
    assert frozenset(PANEL_IDS) == action_spec.MAIN
    requeue = actions.BY_ID["requeue"]
    assert where(requeue) == "Queue depth, Failures, job lists, job detail"


def test_only_the_depth_panel_sits_above_the_tabs() -> None:
    assert [cls.scope for cls in PANELS if not cls.tabbed] == ["depth"]
