"""Every named query exists, and every query file is used (no database)."""

from __future__ import annotations

import ast
from pathlib import Path

import skconsole
from skconsole import ops
from skconsole.db.sqlfiles import QUERIES, query
from skconsole.ops.server_action import ServerAction
from skconsole.read.query import COMPAT

PACKAGE = Path(skconsole.__file__).parent
#: Where a query name may be a variable: the spec flows (one per kind of action) read the
#: names their specs hold, and the read layer's runner the names its callers give
#: (literals: see _query_calls).
NAMES_FROM_SPECS = {
    *(PACKAGE / "ops" / f"{kind}.py" for kind in ("job_action", "type_actions", "server_action")),
    PACKAGE / "read" / "query.py",
}
#: Calls that name a query, and where in their arguments the name is.
NAMING_CALLS = {"query": 0, "fetch": 1}


def _query_calls() -> list[tuple[Path, ast.Call]]:
    calls = []
    for path in sorted(PACKAGE.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Name)
                and node.func.id in NAMING_CALLS
            ):
                calls.append((path, node))
    return calls


def _name_arg(call: ast.Call) -> ast.expr | None:
    assert isinstance(call.func, ast.Name)
    at = NAMING_CALLS[call.func.id]
    return call.args[at] if len(call.args) > at else None


def _literal_names() -> set[str]:
    names = set()
    for _, call in _query_calls():
        arg = _name_arg(call)
        if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
            names.add(arg.value)
    return names


def _spec_names() -> set[str]:
    names: set[str] = set()
    for action in ops.ACTIONS:
        if isinstance(action, ops.JobAction):
            names |= {action.queries.select, action.queries.write, action.queries.count or ""}
        elif isinstance(action, ops.TypeSetting):
            names |= {action.read, action.lock, action.write}
        elif isinstance(action, ServerAction):
            names |= {action.read, action.write}
        else:
            names.add(action.write)
    return names - {""}


def test_every_query_named_in_the_code_has_its_file() -> None:
    missing = sorted((_literal_names() | _spec_names()) - set(QUERIES))
    assert missing == []


def test_every_query_file_is_used() -> None:
    """A ``NAME_compat`` twin counts as used with NAME: read models' ``fetch`` runs it on a
    database with Stakhanovise.NET's tables alone."""
    used = _literal_names() | _spec_names()
    twins = {n + COMPAT for n in used}
    unused = sorted(set(QUERIES) - used - twins)
    assert unused == []


def test_a_compat_twin_is_run_where_the_database_lacks_skconsoles_objects() -> None:
    """Each twin stands beside its statement (or is named on its own, as the failure scan)."""
    orphans = [
        n
        for n in QUERIES
        if n.endswith(COMPAT)
        and n.removesuffix(COMPAT) not in QUERIES
        and n not in _literal_names()
    ]
    assert orphans == []


def test_query_names_are_literals_outside_the_spec_flow() -> None:
    built = [
        f"{path.relative_to(PACKAGE)}:{call.lineno}"
        for path, call in _query_calls()
        if path not in NAMES_FROM_SPECS
        and path.name != "sqlfiles.py"
        and not isinstance(_name_arg(call), ast.Constant)
    ]
    assert built == []


def test_a_missing_query_is_refused_with_its_file_name() -> None:
    try:
        query("no_such_query")
    except KeyError as exc:
        assert "sql/queries/no_such_query.sql" in str(exc)
    else:
        raise AssertionError("a missing query was not refused")


def test_every_action_spec_names_existing_queries() -> None:
    for action in ops.ACTIONS:
        if isinstance(action, ops.JobAction):
            assert {action.queries.select, action.queries.write} <= set(QUERIES), action.name
        else:
            assert action.write in QUERIES, action.name
