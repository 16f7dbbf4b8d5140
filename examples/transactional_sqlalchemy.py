"""Post a job in the same transaction as your SQLAlchemy writes.

    python examples/transactional_sqlalchemy.py postgresql://app@db/app

An order row and its "orders.confirm" job commit together, or neither exists:
a worker never runs the job of an order that was rolled back, and never
misses the job of one that was committed. The skconsole schema must exist
(``skconsole --dsn DSN setup``); the example creates its own table,
``example_sqlalchemy_orders``, and exits with status 1 if what it shows does
not hold.
"""

from __future__ import annotations

import sys
import uuid
from typing import Any

import psycopg
from sqlalchemy import create_engine
from sqlalchemy.orm import DeclarativeBase, Mapped, Session, mapped_column

from skconsole import Producer
from skconsole.read import job


class Base(DeclarativeBase):
    pass


class Order(Base):
    __tablename__ = "example_sqlalchemy_orders"

    id: Mapped[int] = mapped_column(primary_key=True)
    item: Mapped[str]


class PaymentDeclined(Exception):
    pass


def engine_url(dsn: str) -> str:
    """SQLAlchemy's URL for psycopg 3: the DSN's scheme becomes postgresql+psycopg."""
    scheme, sep, rest = dsn.partition("://")
    if not sep or scheme not in ("postgresql", "postgres"):
        raise SystemExit("give the database as a URL: postgresql://user@host/db")
    return f"postgresql+psycopg://{rest}"


def main(dsn: str) -> int:
    engine = create_engine(engine_url(dsn))
    Base.metadata.create_all(engine)
    with Producer(dsn) as producer:
        # 1. committed: the order and its job
        with Session(engine) as session, session.begin():
            order = Order(item="teapot")
            session.add(order)
            session.flush()  # the order's id, for the job's payload
            job_id = producer.post(
                "orders.confirm",
                {"order_id": order.id},
                connection=session.connection().connection.driver_connection,
            )
            kept = order.id, job_id

        # 2. rolled back: an error after the post, before the commit, undoes both
        try:
            with Session(engine) as session, session.begin():
                order = Order(item="kettle")
                session.add(order)
                session.flush()
                job_id = producer.post(
                    "orders.confirm",
                    {"order_id": order.id},
                    connection=session.connection().connection.driver_connection,
                )
                lost = order.id, job_id
                raise PaymentDeclined("card declined")
        except PaymentDeclined:
            pass
    engine.dispose()

    with psycopg.connect(dsn, autocommit=True) as check:  # another session: what workers see
        committed = _exists(check, *kept)
        rolled_back = _exists(check, *lost)
    print(f"commit:   order {kept[0]}, job {kept[1]}: {_say(committed)}")
    print(f"rollback: order {lost[0]}, job {lost[1]}: {_say(rolled_back)}")
    return 0 if committed == (True, True) and rolled_back == (False, False) else 1


def _exists(conn: psycopg.Connection[Any], order_id: int, job_id: uuid.UUID) -> tuple[bool, bool]:
    """Whether the order row exists, and whether its job waits in the queue."""
    row = conn.execute("SELECT 1 FROM example_sqlalchemy_orders WHERE id = %s", (order_id,))
    detail = job(conn, job_id)
    return row.fetchone() is not None, detail is not None and detail.queued


def _say(found: tuple[bool, bool]) -> str:
    order, queued = found
    return f"order {'exists' if order else 'absent'}, job {'queued' if queued else 'absent'}"


if __name__ == "__main__":
    if len(sys.argv) != 2:
        raise SystemExit(f"usage: python {sys.argv[0]} DSN")
    sys.exit(main(sys.argv[1]))
