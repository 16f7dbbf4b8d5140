"""Post a job in the same transaction as your Django writes (psycopg 3 backend).

    python examples/transactional_django.py postgresql://app@db/app

An order row and its "orders.confirm" job commit together, or neither exists:
a worker never runs the job of an order that was rolled back, and never
misses the job of one that was committed. Django's ``postgresql`` backend
uses psycopg 3 when it is installed; ``django.db.connection.connection`` is
then the psycopg connection inside ``transaction.atomic()``.

No project needed: the example configures Django from the DSN itself and
creates its own table, ``example_django_orders``, with a raw cursor (no
migrations). The skconsole schema must exist (``skconsole --dsn DSN setup``).
It exits with status 1 if what it shows does not hold.
"""

from __future__ import annotations

import sys
import uuid
from typing import Any

import django
import psycopg
from django.conf import settings
from django.db import connection, models, transaction
from psycopg.conninfo import conninfo_to_dict

from skconsole import Producer
from skconsole.read import job


def configure(dsn: str) -> None:
    """Django settings with one database, the DSN's (URL or key=value)."""
    params: dict[str, Any] = conninfo_to_dict(dsn)
    database = {
        "ENGINE": "django.db.backends.postgresql",
        "NAME": params.pop("dbname", None) or params.get("user") or "postgres",
        "USER": params.pop("user", ""),
        "PASSWORD": params.pop("password", ""),
        "HOST": params.pop("host", ""),
        "PORT": params.pop("port", ""),
        "OPTIONS": params,  # anything else (sslmode, options, ...) as libpq takes it
    }
    settings.configure(DATABASES={"default": database}, USE_TZ=True)
    django.setup()


if len(sys.argv) != 2:
    raise SystemExit(f"usage: python {sys.argv[0]} DSN")
configure(sys.argv[1])  # before any model class is defined, as Django requires


def psycopg_connection() -> psycopg.Connection[Any]:
    """The psycopg 3 connection under Django's (None until Django connects: connect first)."""
    connection.ensure_connection()
    return connection.connection  # type: ignore[no-any-return]


class Order(models.Model):
    item = models.CharField(max_length=100)

    class Meta:
        app_label = "example"
        db_table = "example_django_orders"


class PaymentDeclined(Exception):
    pass


def main(dsn: str) -> int:
    with connection.cursor() as cur:  # autocommit outside atomic(): committed at once
        cur.execute(
            "CREATE TABLE IF NOT EXISTS example_django_orders"
            " (id bigserial PRIMARY KEY, item varchar(100) NOT NULL)"
        )
    with Producer(dsn) as producer:
        # 1. committed: the order and its job
        with transaction.atomic():
            order = Order.objects.create(item="teapot")
            job_id = producer.post(
                "orders.confirm", {"order_id": order.id}, connection=psycopg_connection()
            )
            kept = order.id, job_id

        # 2. rolled back: an error after the post, before the commit, undoes both
        try:
            with transaction.atomic():
                order = Order.objects.create(item="kettle")
                job_id = producer.post(
                    "orders.confirm", {"order_id": order.id}, connection=psycopg_connection()
                )
                lost = order.id, job_id
                raise PaymentDeclined("card declined")
        except PaymentDeclined:
            pass
    connection.close()

    with psycopg.connect(dsn, autocommit=True) as check:  # another session: what workers see
        committed = _exists(check, *kept)
        rolled_back = _exists(check, *lost)
    print(f"commit:   order {kept[0]}, job {kept[1]}: {_say(committed)}")
    print(f"rollback: order {lost[0]}, job {lost[1]}: {_say(rolled_back)}")
    return 0 if committed == (True, True) and rolled_back == (False, False) else 1


def _exists(conn: psycopg.Connection[Any], order_id: int, job_id: uuid.UUID) -> tuple[bool, bool]:
    """Whether the order row exists, and whether its job waits in the queue."""
    row = conn.execute("SELECT 1 FROM example_django_orders WHERE id = %s", (order_id,))
    detail = job(conn, job_id)
    return row.fetchone() is not None, detail is not None and detail.queued


def _say(found: tuple[bool, bool]) -> str:
    order, queued = found
    return f"order {'exists' if order else 'absent'}, job {'queued' if queued else 'absent'}"


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
