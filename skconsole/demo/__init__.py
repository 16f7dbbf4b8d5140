"""The demo: task handlers that behave like a real service's (``--tasks skconsole.demo``),
the scenario that fills a queue with a realistic backlog, and ``skconsole demo``."""

from skconsole.demo.handlers import tasks

__all__ = ["tasks"]
