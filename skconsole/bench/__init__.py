"""Benchmark scripts (``python -m skconsole.bench.NAME``) and ``skconsole bench``; not tests."""
