"""``skconsole exporter``: the read models as Prometheus metrics on ``/metrics``.

The database is read once per ``--interval`` on a thread of its own, whatever
the number of scrapers (:mod:`skconsole.exporter`); sessions are read-only, so
it runs under ``--read-only`` and with a read-only role alike, and never sets up
the schema. An unreachable server is not fatal: the exporter serves
``skconsole_exporter_up 0`` and tries again each interval, as Prometheus
expects of an exporter. So is one that stops answering: ``--timeout`` bounds
each cycle end to end, even through a network partition that drops packets
silently, and past it the exporter serves ``up 0`` without queue figures and
logs what timed out.

With several queues (``--dsn`` repeated, ``--queues``) each queue is read on a thread
of its own and every sample carries a ``queue`` label, ``skconsole_exporter_up``
included: a queue that cannot be reached is its own ``up 0``, the others unaffected.
"""

from __future__ import annotations

import signal
import sys
from typing import Annotated

import typer
from psycopg import ProgrammingError, conninfo
from rich.markup import escape

from skconsole.check.verdict import READ_TIMEOUT_BOUNDS_S, READ_TIMEOUT_S
from skconsole.cli.app import app
from skconsole.cli.options import HostOpt, PortOpt, check_range, options_of, read_timeout
from skconsole.cli.output import out
from skconsole.core.durations import format_limit, parse_duration
from skconsole.core.errors import ConfigError, SkconsoleError
from skconsole.core.extras import require_extra
from skconsole.core.text import printable
from skconsole.db.connect import Database

#: --interval bounds: below a second the read models would load the server for
#: nothing (Prometheus scrapes every 15 s or so); above an hour nothing is current
INTERVAL_BOUNDS_S = (1.0, 3600.0)
DEFAULT_PORT = 9187


@app.command()
def exporter(
    ctx: typer.Context,
    port: PortOpt = DEFAULT_PORT,
    host: HostOpt = "127.0.0.1",
    interval: Annotated[
        str,
        typer.Option(
            "--interval",
            help="How often the database is read, whatever the scrapes (1s to 1h)",
        ),
    ] = "15s",
    timeout: Annotated[
        str,
        typer.Option(
            "--timeout",
            help="How long one cycle of reads may take, connecting included; past it"
            " (a hung server, a silent network partition) /metrics says"
            " skconsole_exporter_up 0 and serves no queue figures"
            f" ({format_limit(READ_TIMEOUT_BOUNDS_S[0])} to"
            f" {format_limit(READ_TIMEOUT_BOUNDS_S[1])})",
        ),
    ] = format_limit(READ_TIMEOUT_S),
) -> None:
    """Serve the queue's metrics for Prometheus on /metrics (read-only)."""
    require_extra("exporter", "skconsole exporter")
    check_range("--port", port, 0, 65535)
    interval_s = parse_duration(
        interval, option="--interval", minimum=INTERVAL_BOUNDS_S[0], maximum=INTERVAL_BOUNDS_S[1]
    )
    timeout_s = read_timeout(timeout)
    # here, not at the top: every other command would pay for importing them
    from prometheus_client import CollectorRegistry, start_http_server

    from skconsole.exporter import Exporter, QueueExporters

    opts = options_of(ctx, several=True)
    for queue in opts.queues:
        try:  # a DSN that can never work is an input error, not a server that is down
            conninfo.conninfo_to_dict(queue.dsn)
        except ProgrammingError as exc:
            first = (str(exc).strip().splitlines() or ["unparseable"])[0]
            raise ConfigError(f"invalid --dsn: {first}") from None
    engine: Exporter | QueueExporters
    if opts.several:
        engine = QueueExporters(
            [
                (
                    q.name,
                    Exporter(
                        Database(q.dsn, read_only=True, application_name="skconsole-exporter"),
                        interval_s,
                        timeout_s=timeout_s,
                        layout=q.mapping,
                        name=q.name,
                    ),
                )
                for q in opts.queues
            ]
        )
        reading = f"{len(opts.queues)} queues ({', '.join(q.name for q in opts.queues)})"
    else:
        db = opts.database("skconsole-exporter", read_only=True, reads=True)
        engine = Exporter(db, interval_s, timeout_s=timeout_s)
        reading = db.description
    registry = CollectorRegistry(auto_describe=False)
    registry.register(engine)
    try:
        httpd, _ = start_http_server(port, addr=host, registry=registry)
    except OSError as exc:
        reason = exc.strerror or str(exc)
        raise SkconsoleError(f"cannot listen on {host}:{port}: {reason}") from None

    from skconsole.worker.run import configure_logging

    configure_logging()
    bound_host, bound_port = httpd.server_address[:2]
    engine.start()
    out.print(
        f"serving http://{escape(str(bound_host))}:{bound_port}/metrics;"
        f" reading {escape(printable(reading))} every {format_limit(interval_s)} (read-only)",
        soft_wrap=True,
    )
    sys.stdout.flush()
    try:
        while True:
            signal.pause()
    finally:
        httpd.shutdown()
        engine.stop(timeout=timeout_s)
