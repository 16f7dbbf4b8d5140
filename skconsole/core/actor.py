"""Who acts: what every audit row records of a person or process that changed the queue."""

from __future__ import annotations

import getpass
import os
import socket
from dataclasses import dataclass


@dataclass(frozen=True)
class Actor:
    """Who acts, for the audit table: the OS user and host."""

    user: str
    host: str

    @classmethod
    def current(cls) -> Actor:
        try:
            user = getpass.getuser()
        except (KeyError, OSError):
            user = f"uid {os.getuid()}"
        return cls(user=user, host=socket.gethostname())
