"""``skconsole exporter``'s engine side: the read models as Prometheus metrics.

- :mod:`.sources`: what a cycle reads (:data:`~.sources.SOURCES`, the one list to
  extend) and how each read model becomes metric families;
- :mod:`.collector`: the :class:`~.collector.Exporter`, which reads them once
  per interval on a thread of its own into an immutable snapshot that every
  scrape renders without touching the database.

No UI library here: the command itself is :mod:`skconsole.cli.exporter`.
"""

from skconsole.exporter.collector import Exporter, QueueExporters, Snapshot
from skconsole.exporter.sources import MAX_FAILURE_GROUPS, SOURCES

__all__ = ["MAX_FAILURE_GROUPS", "SOURCES", "Exporter", "QueueExporters", "Snapshot"]
