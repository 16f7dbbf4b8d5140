"""Copying text out of the console: the clipboard, and a file for when it is not there.

Textual's ``copy_to_clipboard`` writes an OSC 52 sequence, which many terminals
ignore (or only allow over a setting, or lose inside tmux or ssh) without any
way to know. So every copy is also written to a file of the user's own, named in
the toast: a terminal that ignores OSC 52 still gets it. The file is the user's
alone (0600, in a 0700 directory, never through a symlink) and holds the text
made printable (``cat`` of a hostile payload cannot drive the terminal). Writing
a small local file is quick; no database is involved.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from textual.app import App

from skconsole.core.text import printable

#: the directory of the copies, under the user's state directory
COPIES_DIR = "copies"


def copies_dir() -> Path:
    """Where copies are saved: ``$XDG_STATE_HOME/skconsole/copies`` (on Linux,
    ``~/.local/state/skconsole/copies`` by default)."""
    import platformdirs

    return platformdirs.user_state_path("skconsole") / COPIES_DIR


@dataclass(frozen=True)
class Copied:
    """What a copy did: the clipboard was asked (OSC 52), and the file it saved (None:
    it could not, ``error`` says why)."""

    characters: int
    path: Path | None
    error: str | None = None

    def where(self) -> str:
        """The toast's part about the file: "also saved to PATH"."""
        if self.path is not None:
            return f"also saved to {printable(str(self.path))}"
        return f"not saved to a file: {printable(self.error or 'unknown error')}"


def save(text: str, name: str, directory: Path | None = None) -> Path:
    """``text`` (made printable) in ``directory``/``name``, readable by the user alone."""
    folder = directory if directory is not None else copies_dir()
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    path = folder / re.sub(r"[^A-Za-z0-9._-]", "_", name)
    flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_NOFOLLOW", 0)
    fd = os.open(path, flags, 0o600)
    try:
        os.fchmod(fd, 0o600)  # an older copy may have been made with other permissions
        with os.fdopen(fd, "w", encoding="utf-8", closefd=False) as f:
            f.write(printable(text, keep_newlines=True))
            if not text.endswith("\n"):
                f.write("\n")
    finally:
        os.close(fd)
    return path


def copy(app: App[Any], text: str, name: str, directory: Path | None = None) -> Copied:
    """``text`` to the terminal's clipboard (OSC 52) and to the file ``name``."""
    app.copy_to_clipboard(text)
    try:
        return Copied(len(text), save(text, name, directory))
    except OSError as exc:
        return Copied(len(text), None, exc.strerror or str(exc))


def copy_connection(app: App[Any], dsn: str) -> str:
    """The console's connection string (its password already masked) to the clipboard;
    returns the toast that shows it: the CLI reaches the same queue with ``--dsn``."""
    app.copy_to_clipboard(dsn)
    return f"{printable(dsn)}\ncopied (password masked); the CLI takes it as --dsn '...'"
