"""Peers benchmark: skconsole, PgQueuer, Procrastinate and Oban through one harness, one server.

    python -m skconsole.bench.peers [--dsn postgresql://postgres@127.0.0.1:5432/postgres]
        [--jobs 20000] [--single 2000] [--pickup 300] [--rounds 1]
        [--only skconsole,pgqueuer,procrastinate,oban] [--concurrency N] [--prefix peers] [--json]

The peers come with ``pip install 'skconsole[bench]'``; one that is missing is
skipped with a one-line note. Oban (``oban``, Oban's Python port) needs Python
3.12 or later, so the extra installs it on 3.12 only and on 3.11 the run skips
it; all four run from a 3.12 virtual environment, in the repository:

    /path/to/python3.12 -m venv .venv312
    .venv312/bin/pip install -c constraints.txt -e '.[dev,bench]'
    .venv312/bin/python -m skconsole.bench.peers --dsn postgresql://postgres@127.0.0.1:5432/postgres Each library gets a database of its own on the
server (``<prefix>_<library>``), dropped and created afresh for every round and
dropped at the end, its schema installed by the library's own API. Rounds
interleave the libraries (round 1: each library, round 2: each again, ...), so a
drift of the machine spreads over all of them; a round of one library is:

1. bulk post: ``--jobs`` no-op jobs in chunks of 1,000 through the library's bulk
   call (skconsole ``AsyncProducer.post_many``, PgQueuer ``Queries.enqueue`` with
   lists, Procrastinate ``batch_defer_async``, Oban ``Oban.enqueue_many``, which is
   one INSERT per job in one transaction), timed from the first call to the last
   return;
2. drain with 1 worker process, then post ``--jobs`` again (not timed) and drain
   with 2 worker processes;
3. pickup latency with one idle worker process;
4. single post: ``--single`` posts one at a time (``post`` / ``enqueue`` /
   ``defer_async`` / ``Oban.enqueue``), no worker running.

Posts go through each library's async API, its connection (Procrastinate's:
pool) opened and used once before any timing. Workers run each library's own
worker with its own defaults (``--concurrency`` sets skconsole's): ``skconsole
worker``, ``procrastinate worker``, for PgQueuer what ``pgqueuer run`` runs
(``pgqueuer.run``, see ``pgqueuer_peer``), and ``python -m oban start --queues
default:10`` (Oban's CLI runs no queue unless told; 10 is its default queue
limit; see ``oban_peer``). Each worker is a process in a process
group of its own, stopped (SIGTERM, then SIGKILL) when its step ends, on
Ctrl-C, on SIGTERM and on any error.

Drain rate: the harness counts the library's unfinished jobs (waiting or
running) every 50 ms from the moment the workers are started. The rate is the
unfinished count at the first poll that shows progress, divided by the time
from that poll to the first poll that shows none left. Worker start-up
(interpreter, imports, connecting, schema checks) is thus left out for every
library alike. A job is finished once the library records it so (skconsole: a
final result status; PgQueuer: its queue row gone, which it batches;
Procrastinate: a final status; Oban: a final state, written with the
producer's next fetch, so batched too). The resolution is one poll (50 ms), so
``--jobs`` should make a drain last seconds.

Pickup latency: each probe job carries the wall-clock time taken just before
the post call; the no-op handler writes ``now - that`` to a file as the first
thing it does. So it is post call -> handler start, the post itself included.
Probes go one at a time: the next is posted 25 ms after the previous one is
recorded, so the worker is idle and waiting each time; three warm-up probes
(the first also waits for the worker to start) are not counted.

With more than one round, the table shows the median of the rounds' rates and
the percentiles over all rounds' pickup samples; ``--json`` gives every round.
A second table gives skconsole's figure over each library's, per metric: for a
rate, the median of the ratios of the rounds both completed (a round of one
and the same round of the other met the same machine), so above 1 is
skconsole faster; for pickup, the ratio of the percentiles, so below 1 is
skconsole sooner (``--json``: ``skconsole_over_library``).
Before each drain the library's database is vacuumed and analyzed.
"""
