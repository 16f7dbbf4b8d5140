"""Names a package loads on first use (PEP 562), said once for every package that does.

A package whose import must stay cheap (``skconsole`` itself, which the command line
imports before ``--help`` can answer; ``skconsole.testing``, which pytest imports in
every session) names where each of its public names comes from and takes its
``__getattr__`` and ``__dir__`` from :func:`lazy_names`::

    __getattr__, __dir__ = lazy_names(__name__, {"Producer": "skconsole.producer"})
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping
from typing import Any


def lazy_names(
    package: str, exports: Mapping[str, str]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """The ``__getattr__`` and ``__dir__`` of ``package``, whose public names are the
    keys of ``exports``, each imported from its module (the value) when first looked
    up, then kept in the package so that the next lookup is a plain attribute."""
    namespace = sys.modules[package].__dict__

    def __getattr__(name: str) -> Any:
        module = exports.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module), name)
        namespace[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted({*namespace, *exports})

    return __getattr__, __dir__
