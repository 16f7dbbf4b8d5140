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
    names = metadata.packages_distributions().get(top, [])
    if len(set(names)) != 1:
        return None
    name = names[0]
    try:
        version = metadata.version(name)
    except metadata.PackageNotFoundError:
        return None
    if not version or len(version) > MAX_LENGTH or not version.isprintable():
        return None
    return AppVersion(version, f"distribution {name}")


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
