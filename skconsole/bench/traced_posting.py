"""Single posts inside a trace against the same posts outside one, same server.

``python -m skconsole.bench.traced_posting --dsn DSN [--posts 2000] [--rounds 3]``

What tracing costs a producer: inside an active span (OpenTelemetry's SDK
tracer provider, no exporter) each post captures the W3C context and stores it
with the job (post_jobs.sql instead of the one-statement post). The two are
interleaved round by round and the ratio reported per round. Needs
``skconsole[otel]`` and opentelemetry-sdk.
"""

from __future__ import annotations

from skconsole.bench.interleave import arguments, interleave
from skconsole.bench.posting import clean, producer, server_version
from skconsole.db.connect import Database


def main() -> None:
    args = arguments(__doc__, size="--posts", default=2000).parse_args()
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

    def traced() -> float:
        with tracer.start_as_current_span("request"):
            return producer(db, args.posts)

    print(f"server {server_version(args.dsn)}; {args.posts:,} posts a side per round")
    interleave(
        args.rounds,
        ("outside a span", lambda: producer(db, args.posts)),
        ("inside one", traced),
        unit="/s",
        reset=lambda: clean(db),
    )
    clean(db)


if __name__ == "__main__":
    main()
