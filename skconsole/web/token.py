"""The secret of ``skconsole serve``: every request shows it, or no console starts.

A token is either generated for one run (``secrets.token_urlsafe``: printed in
the URL) or read from a file the operator keeps, which is checked the way ssh
checks a key file: it must exist, hold one token, and not be readable by every
user of the machine. Its characters are URL-safe so the same string travels in
a query (``?token=``) and a cookie without quoting. Who holds it is its name:
the file's base name, or ``serve-token`` for a generated one; the audit rows
of a session name it unless ``--user`` says otherwise.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
import stat
from dataclasses import dataclass, field
from pathlib import Path

from skconsole.core.errors import ConfigError
from skconsole.core.text import quoted

#: a token's name when it was generated for this run
GENERATED_NAME = "serve-token"
#: the shortest token a file may hold (a generated one has 43 characters)
MIN_LENGTH = 16
#: RFC 3986's unreserved characters: the same in a URL and in a cookie
_TOKEN = re.compile(r"[A-Za-z0-9._~-]+")
_HOW = "python3 -c 'import secrets; print(secrets.token_urlsafe(32))'"


@dataclass(frozen=True)
class Token:
    """The secret (never in ``repr``) and the name of whoever holds it."""

    value: str = field(repr=False)
    name: str
    from_file: bool = False

    @classmethod
    def generate(cls) -> Token:
        return cls(secrets.token_urlsafe(32), GENERATED_NAME)

    @classmethod
    def read(cls, path: Path) -> Token:
        """The token in ``path``, or a ConfigError saying what is wrong with the file."""
        where = f"--token-file {quoted(str(path))}"
        try:
            mode = path.stat().st_mode
            text = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            raise ConfigError(f"{where}: no such file") from None
        except UnicodeDecodeError:
            raise ConfigError(f"{where}: not UTF-8 text") from None
        except OSError as exc:
            raise ConfigError(f"{where}: {exc.strerror or exc}") from None
        if not stat.S_ISREG(mode):
            raise ConfigError(f"{where}: not a regular file")
        if mode & (stat.S_IROTH | stat.S_IWOTH | stat.S_IWGRP):
            who = "readable by every user" if mode & stat.S_IROTH else "writable by others"
            raise ConfigError(f"{where} is {who} (mode {stat.S_IMODE(mode):o}): chmod 600 {path}")
        value = text.strip()
        if not value:
            raise ConfigError(f"{where} is empty: write a token into it, e.g. {_HOW}")
        if len(value) < MIN_LENGTH or not _TOKEN.fullmatch(value):
            raise ConfigError(
                f"{where}: the token must be one line of at least {MIN_LENGTH} characters"
                f" of A-Z a-z 0-9 . _ ~ -, e.g. {_HOW}"
            )
        return cls(value, path.name, from_file=True)

    def matches(self, given: str | None) -> bool:
        """Whether ``given`` is this token, compared in constant time."""
        if not given:
            return False
        return hmac.compare_digest(given.encode("utf-8"), self.value.encode("utf-8"))

    @property
    def cookie_name(self) -> str:
        """The cookie a browser keeps the token in. Cookies do not tell ports apart, so
        two servers on one host (two tokens) must not overwrite each other's."""
        digest = hashlib.sha256(self.value.encode("utf-8")).hexdigest()[:12]
        return f"skconsole_{digest}"
