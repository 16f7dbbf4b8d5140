"""The documentation holds together: every relative link of README.md, CONTRIBUTING.md
and docs/ reaches a file (and, for a Markdown page, its heading), the CLI reference
covers every command and option of the Typer app, and every command that takes
``--json`` has its document in docs/reference/json.md.

Anchors are GitHub's (the site's ``toc`` slugify is set to the same, mkdocs.yml), so
one link works in both places. ``mkdocs build --strict`` (.ci/run) checks the site's
own links again; this checks README.md and CONTRIBUTING.md too, and needs no mkdocs.
"""

from __future__ import annotations

import importlib.util
import re
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
import typer.main

from skconsole.cli import full_app

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
PAGES = sorted([ROOT / "README.md", ROOT / "CONTRIBUTING.md", *DOCS.rglob("*.md")])

_FENCE = re.compile(r"^\s*(```|~~~)")
_CODE_SPAN = re.compile(r"`+[^`]*`+")
_LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")


def _prose(path: Path) -> Iterator[str]:
    """The page's lines outside fenced code blocks."""
    fenced = False
    for line in path.read_text(encoding="utf-8").splitlines():
        if _FENCE.match(line):
            fenced = not fenced
            continue
        if not fenced:
            yield line


def github_slug(heading: str) -> str:
    """The anchor GitHub gives a heading: its text without markup, lower case, with
    what is neither a word character, a hyphen nor a space removed, and spaces as
    hyphens."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading)
    text = re.sub(r"<[^>]+>", "", text).strip().lower()
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def anchors(path: Path) -> set[str]:
    seen: dict[str, int] = {}
    found = set()
    for line in _prose(path):
        m = _HEADING.match(line)
        if not m:
            continue
        slug = github_slug(m.group(2))
        n = seen.get(slug, 0)
        seen[slug] = n + 1
        found.add(slug if n == 0 else f"{slug}-{n}")
    return found


def relative_links(path: Path) -> Iterator[str]:
    for line in _prose(path):
        for m in _LINK.finditer(_CODE_SPAN.sub("", line)):
            target = m.group(1)
            if not re.match(r"^[a-z][a-z0-9+.-]*:", target):  # http:, mailto:, ...
                yield target


LINKS = [(page, target) for page in PAGES for target in relative_links(page)]


def test_there_are_pages_and_links_to_check() -> None:
    assert len(PAGES) > 20
    assert len(LINKS) > 100


@pytest.mark.parametrize(
    ("page", "target"), LINKS, ids=[f"{p.relative_to(ROOT)}->{t}" for p, t in LINKS]
)
def test_a_relative_link_reaches_its_file_and_heading(page: Path, target: str) -> None:
    file_part, _, anchor = target.partition("#")
    reached = (page.parent / file_part).resolve() if file_part else page

    assert reached.exists(), f"{page.relative_to(ROOT)}: {target} is not there"
    if anchor and reached.suffix == ".md":
        assert anchor in anchors(reached), f"{page.relative_to(ROOT)}: no heading #{anchor}"


def test_the_slug_is_githubs() -> None:
    assert github_slug("Why one job waits (`skconsole why`, `w`) and run it now") == (
        "why-one-job-waits-skconsole-why-w-and-run-it-now"
    )
    assert github_slug("`skconsole check --json`") == "skconsole-check---json"


# -- the CLI reference ------------------------------------------------------------------
def _hooks() -> ModuleType:
    spec = importlib.util.spec_from_file_location("docs_hooks", DOCS / "hooks.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def commands() -> Iterator[tuple[str, Any]]:
    """Every command of the Typer app, by its full name (``skconsole db start``)."""

    def walk(cmd: Any, path: str) -> Iterator[tuple[str, Any]]:
        yield path, cmd
        for name, sub in (getattr(cmd, "commands", None) or {}).items():
            yield from walk(sub, f"{path} {name}")

    yield from walk(typer.main.get_command(full_app()), "skconsole")


def _sections(markdown: str) -> dict[str, str]:
    """The generated reference by command: each ``### `skconsole X``` heading's text."""
    parts = re.split(r"^#+ `(skconsole[^`]*)`\s*$", markdown, flags=re.MULTILINE)
    return dict(zip(parts[1::2], parts[2::2], strict=True))


def test_the_cli_reference_page_is_generated_from_the_app() -> None:
    page = (DOCS / "reference" / "cli.md").read_text(encoding="utf-8")

    assert _hooks().MARKER in page


def test_the_cli_reference_has_every_command_and_its_every_option() -> None:
    core = pytest.importorskip("typer.core")
    if not hasattr(core, "MARKUP_MODE_KEY"):
        pytest.skip("the docs extra's typer (>=0.21.1) generates the CLI reference")
    sections = _sections(_hooks().cli_reference())

    for name, cmd in commands():
        assert name in sections, f"{name} is missing from the CLI reference"
        records = re.findall(r"^\* `([^`]*)`", sections[name], flags=re.MULTILINE)
        shown = {word for record in records for word in re.findall(r"-[\w-]+", record)}
        for param in cmd.params:
            if getattr(param, "hidden", False):
                continue  # kept for old scripts, left out of --help
            for opt in getattr(param, "opts", []) + getattr(param, "secondary_opts", []):
                if opt.startswith("-"):
                    assert opt in shown, f"{name} {opt} is not documented"


def test_every_command_that_prints_json_has_its_document() -> None:
    page = (DOCS / "reference" / "json.md").read_text(encoding="utf-8")
    documented = " ".join(re.findall(r"`(skconsole [^`]*)`", page)) + " " + page

    for name, cmd in commands():
        opts = {o for p in cmd.params for o in getattr(p, "opts", [])}
        if "--json" in opts:
            short = name.removeprefix("skconsole ")
            assert (
                f"`{name} " in documented
                or f"`{name}`" in documented
                or f"`{short}`" in page
                or f"`{short} " in page
            ), f"{name} --json has no document in docs/reference/json.md"


# -- the README's commands -----------------------------------------------------------------
def test_ci_runs_the_readmes_test_command_as_written() -> None:
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    marker = ci.index("# keep this line identical to the README's test command")

    assert ci[marker + 1] in (ROOT / "README.md").read_text(encoding="utf-8").splitlines()


# -- the console's keys ----------------------------------------------------------------------
_SHOWN_AS = {
    "enter": "Enter",
    "escape": "Esc",
    "left": "←",
    "right": "→",
    "minus": "-",
    "plus": "+",
    "question_mark": "?",
    "slash": "/",
    "left_square_bracket": "[",
    "right_square_bracket": "]",
    "left_curly_bracket": "{",
    "right_curly_bracket": "}",
}


def test_every_key_of_the_registry_is_in_the_key_reference_and_the_readme() -> None:
    from skconsole.tui.actions import ACTIONS

    for page in (DOCS / "reference" / "keys.md", ROOT / "README.md"):
        rows = [line for line in _prose(page) if line.startswith("| `")]
        shown = {k for row in rows for k in re.findall(r"`([^`]+)`", row.split("|")[1])}
        if {"1", "9"} <= shown:  # `1`…`9`
            shown |= {str(n) for n in range(1, 10)}
        for action in ACTIONS:
            key = _SHOWN_AS.get(action.key, action.key)
            assert key in shown, f"{page.relative_to(ROOT)}: key {key} ({action.id}) is missing"


def test_the_commands_at_a_glance_name_every_command() -> None:
    """The hand-written overview of docs/reference/cli.md leaves none out (it left out
    demo and serve): each command appears as `skconsole NAME` in a row of it."""
    from skconsole.cli.commands import MODULES

    page = (DOCS / "reference" / "cli.md").read_text(encoding="utf-8")
    glance = page.split("## Commands at a glance", 1)[1].split("\n## ", 1)[0]
    missing = [name for name in MODULES if f"`skconsole {name}" not in glance]
    assert missing == [], f"missing from the commands at a glance: {missing}"


def test_the_bounds_table_says_the_bounds_the_options_enforce() -> None:
    from skconsole.cli.options import MAX_ENQUEUE_COUNT

    page = (DOCS / "reference" / "cli.md").read_text(encoding="utf-8")
    assert f"| `enqueue --count` | 1 to {MAX_ENQUEUE_COUNT:,} " in page
