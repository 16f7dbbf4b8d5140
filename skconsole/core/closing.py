"""A base for what holds a resource until :meth:`~Closing.close`: ``with`` closes it.

The producers and the test helpers' scratch servers and queues all end the
same way; one base says it once.
"""

from __future__ import annotations

from typing import Self


class Closing:
    """Closed by :meth:`close`, or at the end of a ``with`` block (which gives itself)."""

    def close(self) -> None:
        raise NotImplementedError

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
