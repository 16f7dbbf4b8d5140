"""MkDocs hooks (``hooks:`` in mkdocs.yml).

- The CLI reference is generated when the site is built, from the Typer app
  itself, by Typer's own generator (``typer.cli.get_docs_for_click``: what
  ``typer skconsole.cli utils docs`` prints), so it says what ``--help`` says and
  is never copied by hand. Typer's generator, not mkdocs-click or mkdocs-typer2:
  Typer 0.29 ships its own copy of Click, whose options mkdocs-click 0.9 leaves out
  (it looks for ``click.Option``) and on which mkdocs-typer2 0.4's native engine
  fails (``TyperOption`` has no ``type``).
- The changelog page is the repository's CHANGELOG.md (docs/changelog.md holds only
  its marker), so there is one changelog, kept beside the code.
- The docstrings' Sphinx roles (``:class:`~skconsole.Producer```) read as plain code
  (``Producer``).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

#: where docs/reference/cli.md wants the generated reference
MARKER = "<!-- skconsole:cli-reference -->"
#: where docs/changelog.md wants CHANGELOG.md
CHANGELOG_MARKER = "<!-- skconsole:changelog -->"
CHANGELOG = Path(__file__).resolve().parent.parent / "CHANGELOG.md"
_ROLE = re.compile(r":(?:class|meth|func|mod|attr|data|exc|obj):(?=<code>)")
_SHORT = re.compile(r"<code>~(?:\w+\.)*(\w+)</code>")  # Sphinx's ~a.b.C reads as C


def cli_reference() -> str:
    """Every command and option of ``skconsole``, as Markdown (its headings from ##)."""
    import typer
    import typer.main
    from typer.cli import get_docs_for_click
    from typer.core import MARKUP_MODE_KEY

    from skconsole.cli import full_app

    app = full_app()
    command = typer.main.get_command(app)
    ctx = typer.Context(command, info_name="skconsole")
    ctx.obj = {MARKUP_MODE_KEY: app.rich_markup_mode}
    return get_docs_for_click(obj=command, ctx=ctx, indent=1, name="skconsole")


def on_page_markdown(markdown: str, **_: Any) -> str:
    if CHANGELOG_MARKER in markdown:
        # its own links point into docs/ from the repository's top
        text = CHANGELOG.read_text(encoding="utf-8").replace("](docs/", "](")
        return markdown.replace(CHANGELOG_MARKER, text)
    return markdown.replace(MARKER, cli_reference()) if MARKER in markdown else markdown


def on_page_content(html: str, **_: Any) -> str:
    return _SHORT.sub(r"<code>\1</code>", _ROLE.sub("", html))
