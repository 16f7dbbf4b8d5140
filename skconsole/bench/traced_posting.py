"""Single posts inside a trace against the same posts outside one, same server.

``python -m skconsole.bench.traced_posting --dsn DSN [--posts 2000] [--rounds 3]``

What tracing costs a producer: inside an active span (OpenTelemetry's SDK
tracer provider, no exporter) each post captures the W3C context and stores it
with the job (post_jobs.sql instead of the one-statement post). The two are
interleaved round by round and the ratio reported per round. Needs
``skconsole[otel]`` and opentelemetry-sdk.
"""

from __future__ import annotations

import argparse

from skconsole.bench.posting import clean, producer, server_version
from skconsole.db.connect import Database


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--dsn", required=True)
    parser.add_argument("--posts", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    try:
        from opentelemetry import trace
        from opentelemetry.sdk.trace import TracerProvider
    except ImportError:
        raise SystemExit(
            "needs OpenTelemetry: pip install 'skconsole[otel]' opentelemetry-sdk"
        ) from None
    trace.set_tracer_provider(TracerProvider())
    tracer = trace.get_tracer("skconsole.bench")
    db = Database(args.dsn)
    print(f"server {server_version(args.dsn)}; {args.posts:,} posts a side per round")
    for n in range(1, args.rounds + 1):
        clean(db)
        plain = producer(db, args.posts)
        clean(db)
        with tracer.start_as_current_span("request"):
            traced = producer(db, args.posts)
        print(
            f"round {n}: outside a span {plain:,.0f}/s, inside one {traced:,.0f}/s,"
            f" ratio {traced / plain:.2f}",
            flush=True,
        )
    clean(db)


if __name__ == "__main__":
    main()
