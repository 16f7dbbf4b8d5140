"""The ``tests/interop`` tier: skconsole beside an emulated Stakhanovise.NET application.

``dotnet_app`` replays the SQL and the rules of a Stakhanovise.NET process
(setup, post, dequeue, results, retries, metrics); the tests run it beside
skconsole's CLI and ``skconsole worker`` processes on one database (a fresh one
per test, on the session's PostgreSQL). Run it with
``.venv/bin/pytest -q tests/interop`` (about half a minute); every test is
marked ``interop``.
"""
