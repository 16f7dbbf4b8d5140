"""Which version of the application's code a worker runs, so an operator can see
that a failure was "first seen in v1.8.3" (workers, attempts, failure factors).

Decided once, when the worker starts, in this order: ``--app-version`` as given;
else the environment variable ``SKCONSOLE_APP_VERSION``; else the version of the
installed distribution that provides the tasks module's top-level package
(``myapp.tasks`` → the distribution that installs ``myapp``, read from its
metadata, without importing anything); else none (stored as NULL, shown as "-").
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from importlib import metadata

from skconsole.core.errors import ConfigError

ENV_VAR = "SKCONSOLE_APP_VERSION"
#: the column's width (sk_workers_t.worker_app_version, sk_attempts_t.app_version)
MAX_LENGTH = 100


@dataclass(frozen=True)
class AppVersion:
    """The version (None: unknown) and where it came from: "option", "environment",
    "distribution <name>" or "none"."""

    value: str | None
    source: str


def checked(value: str, where: str) -> str:
    """``value`` as a version may be stored: one short line of printable text."""
    text = value.strip()
    if not text or len(text) > MAX_LENGTH or not text.isprintable():
        raise ConfigError(
            f"{where}: an application version is 1 to {MAX_LENGTH} printable characters"
            f" on one line, got {text[:MAX_LENGTH]!r}"
        )
    return text


def distribution_version(tasks: str) -> AppVersion | None:
    """The installed distribution providing ``tasks``' top-level package, if exactly
    one does and it says its version."""
    top = tasks.split(":", 1)[0].split(".", 1)[0]
    name = _provider(top)
    if name is None:
        return None
    try:
        version = metadata.version(name)
    except metadata.PackageNotFoundError:
        return None
    if not version or len(version) > MAX_LENGTH or not version.isprintable():
        return None
    return AppVersion(version, f"distribution {name}")


def _provider(top: str) -> str | None:
    """The one distribution that installs the top-level package ``top``.

    First the distribution named like the package, read alone (a few milliseconds):
    it provides the package when its metadata lists it, or when it lists no package
    at all (an editable install: the project itself). Else every installed
    distribution's metadata, each RECORD read (~0.1 s with a hundred installed, at
    every worker start: only when the names differ, as PyYAML's ``yaml``)."""
    try:
        named = metadata.distribution(top)
    except metadata.PackageNotFoundError:
        named = None
    if named is not None:
        tops = _top_levels(named)
        if top in tops or not tops:
            return str(named.metadata["Name"])
    names = metadata.packages_distributions().get(top, [])
    return names[0] if len(set(names)) == 1 else None


def _top_levels(dist: metadata.Distribution) -> set[str]:
    """The importable top-level names ``dist`` installs (its top_level.txt, else its
    files' first parts, as :func:`importlib.metadata.packages_distributions` reads them)."""
    listed = dist.read_text("top_level.txt")
    if listed:
        return set(listed.split())
    return {
        f.parts[0].removesuffix(".py")
        for f in dist.files or ()
        if len(f.parts) > 1 or f.suffix == ".py"
        if not f.parts[0].endswith((".dist-info", ".egg-info")) and f.parts[0] != ".."
    }


def resolve_app_version(
    tasks: str, given: str | None, environ: Mapping[str, str] | None = None
) -> AppVersion:
    """The worker's code version, by the order in the module's docstring."""
    env: Mapping[str, str] = os.environ if environ is None else environ
    if given is not None:
        return AppVersion(checked(given, "--app-version"), "option")
    from_env = env.get(ENV_VAR)
    if from_env:
        return AppVersion(checked(from_env, ENV_VAR), "environment")
    return distribution_version(tasks) or AppVersion(None, "none")
