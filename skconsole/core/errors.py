"""Errors that reach a user as one clear line, never as a traceback.

Everything the CLI and the console can explain to a person derives from
:class:`SkconsoleError`; anything else is a bug and is reported as one.
"""

from typing import Any


class SkconsoleError(Exception):
    """An error with a message fit to show a person as it is; ``exit_code`` is the CLI's
    exit status when it ends a command, named where a subclass is declared
    (``class ConfigError(SkconsoleError, exit_code=2)``; else its base's)."""

    exit_code = 1

    def __init_subclass__(cls, exit_code: int | None = None, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if exit_code is not None:
            cls.exit_code = exit_code


class ConfigError(SkconsoleError, exit_code=2):
    """Bad command-line or configuration input (exit code 2, like usage errors)."""


class ConnectError(SkconsoleError, exit_code=3):
    """The server cannot be reached or refused us."""


class ServerUnreachable(ConnectError):
    """The server did not answer (refused, timed out, not resolvable, starting up,
    out of connection slots): trying again later may work, unlike a server that
    answered and refused us (a wrong password, no such database)."""


class PoolerError(ConnectError):
    """The server path is a connection pooler that does not keep sessions (transaction
    or statement pooling): session advisory locks, LISTEN, prepared statements and
    session settings would silently break behind it."""


class BusyError(SkconsoleError):
    """Another session is doing the same thing now (building the same index): refused
    rather than raced."""


class SchemaError(SkconsoleError, exit_code=4):
    """The schema is missing, or newer than this skconsole understands."""


class ReadOnlyError(SkconsoleError, exit_code=5):
    """A write was asked for in read-only mode."""


class InvalidJobError(SkconsoleError, exit_code=2):
    """A job that must not be posted: bad JSON, negative priority, empty type."""


class UnknownJobError(InvalidJobError):
    """A post's ``after=`` names a job that does not exist (nothing was written)."""


class FatalTaskError(Exception):
    """Raise from a handler to fail the job at once (6 Fatal), with no retry.

    Any other exception is treated as recoverable and retried with back-off,
    unless its type's ``retry_on=`` / ``fatal_on=`` options say otherwise.
    """


class Snooze(Exception):
    """Raise from a handler to run the job again ``seconds`` from now.

    Not a failure: the error count stays as it was (so snoozing never leads to
    5 Faulted), the job's snooze count goes up by one, and jobs the handler
    posted with ``ctx.post`` are not posted (only a success posts them).
    """

    def __init__(self, seconds: float) -> None:
        if isinstance(seconds, bool) or not isinstance(seconds, int | float):
            raise TypeError(f"Snooze takes a number of seconds, got {seconds!r}")
        if not 0 <= seconds <= 36_500 * 86_400:
            raise ValueError(f"Snooze seconds must be between 0 and 100 years, got {seconds!r}")
        super().__init__(f"snoozed for {seconds:g}s")
        self.seconds = float(seconds)


class PostInterrupted(SkconsoleError):
    """A streamed post stopped part-way: its earlier chunks are committed, the rest
    are not (post them again: jobs without keys would be posted twice)."""

    def __init__(self, jobs_committed: int, posted: int, cause: BaseException) -> None:
        self.jobs_committed = jobs_committed
        self.posted = posted
        super().__init__(
            f"the post stopped after {jobs_committed:,} job(s) were committed"
            f" ({posted:,} posted); the rest were not posted: {cause}"
        )


class MissingExtraError(ConfigError):
    """A command needs an optional part of skconsole that is not installed (exit code 2):
    the message names the extra and the line that installs it."""
