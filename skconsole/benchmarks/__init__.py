"""Benchmark scripts (run with ``python -m skconsole.benchmarks.NAME``); not tests."""
