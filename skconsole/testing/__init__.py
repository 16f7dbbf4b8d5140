"""Testing helpers for code that posts skconsole jobs or handles them.

- :func:`run_until_idle` / :func:`arun_until_idle`: run a registry's handlers
  on the real engine until the queue is idle; a :class:`RunReport` of every
  job that ran, read from the database;
- :func:`posted`, :func:`assert_posted`, :func:`assert_not_posted`: what was
  posted, matched by type, payload subset and status; :func:`make_due`: skip a
  delay or a back-off;
- :class:`ScratchServer` / :class:`ScratchQueue`: a fresh queue in a database of
  its own; the pytest plugin (:mod:`skconsole.testing.pytest_plugin`) gives one
  to each test that asks for ``skconsole_queue``.

The names are loaded on first use (PEP 562): pytest imports this package in
every session to load the plugin, and that must not pull in the engine.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from skconsole.core.lazy import lazy_names

if TYPE_CHECKING:
    from skconsole.testing.asserts import (
        assert_not_posted,
        assert_posted,
        make_due,
        payload_matches,
        posted,
    )
    from skconsole.testing.queue import ScratchQueue, ScratchServer
    from skconsole.testing.results import JobResult, RunReport
    from skconsole.testing.run import IdleTimeout, arun_until_idle, run_until_idle

#: each public name and the module it comes from
_EXPORTS = {
    "IdleTimeout": "skconsole.testing.run",
    "JobResult": "skconsole.testing.results",
    "RunReport": "skconsole.testing.results",
    "ScratchQueue": "skconsole.testing.queue",
    "ScratchServer": "skconsole.testing.queue",
    "arun_until_idle": "skconsole.testing.run",
    "assert_not_posted": "skconsole.testing.asserts",
    "assert_posted": "skconsole.testing.asserts",
    "make_due": "skconsole.testing.asserts",
    "payload_matches": "skconsole.testing.asserts",
    "posted": "skconsole.testing.asserts",
    "run_until_idle": "skconsole.testing.run",
}

__all__ = [
    "IdleTimeout",
    "JobResult",
    "RunReport",
    "ScratchQueue",
    "ScratchServer",
    "arun_until_idle",
    "assert_not_posted",
    "assert_posted",
    "make_due",
    "payload_matches",
    "posted",
    "run_until_idle",
]


__getattr__, __dir__ = lazy_names(__name__, _EXPORTS)
