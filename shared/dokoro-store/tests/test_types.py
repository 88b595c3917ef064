"""UtcDateTime: aware UTC datetimes in, aware UTC datetimes out, on both backends."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest
from dokoro_store.db.types import UtcDateTime
from sqlalchemy import Column, Integer, MetaData, Table, insert, select
from sqlalchemy.exc import StatementError

TOKYO = timezone(timedelta(hours=9))


@pytest.fixture
def moments(any_store):
    """A scratch table with one UtcDateTime column, on the store's database."""
    metadata = MetaData()
    table = Table("utc_moments", metadata, Column("id", Integer, primary_key=True), Column("at", UtcDateTime()))
    metadata.create_all(any_store.db.engine)
    yield any_store.db.engine, table
    metadata.drop_all(any_store.db.engine)


def test_an_aware_datetime_comes_back_as_the_same_instant_in_utc(moments):
    engine, table = moments
    written = datetime(2026, 6, 11, 7, 23, 15, 123_456, tzinfo=TOKYO)

    with engine.begin() as connection:
        connection.execute(insert(table).values(id=1, at=written))
        read = connection.execute(select(table.c.at)).scalar_one()

    assert read == written
    assert read.tzinfo == UTC
    assert read == datetime(2026, 6, 10, 22, 23, 15, 123_456, tzinfo=UTC)


def test_none_round_trips(moments):
    engine, table = moments

    with engine.begin() as connection:
        connection.execute(insert(table).values(id=1, at=None))
        assert connection.execute(select(table.c.at)).scalar_one() is None


def test_a_naive_datetime_is_refused(moments):
    engine, table = moments

    with pytest.raises(StatementError, match="naive datetime"), engine.begin() as connection:
        connection.execute(insert(table).values(id=1, at=datetime(2026, 6, 10, 22, 23, 15)))


def test_comparisons_follow_time_order_across_time_zones(moments):
    engine, table = moments
    base = datetime(2026, 6, 10, 22, 0, tzinfo=UTC)
    with engine.begin() as connection:
        for n, at in enumerate([base, base + timedelta(minutes=30), base + timedelta(days=1, seconds=1)]):
            connection.execute(insert(table).values(id=n, at=at))
        # 07:15 in Tokyo is 22:15 UTC: only the later two rows are at or after it.
        bound = datetime(2026, 6, 11, 7, 15, tzinfo=TOKYO)
        later = connection.execute(select(table.c.id).where(table.c.at >= bound).order_by(table.c.at)).scalars()

        assert list(later) == [1, 2]


def test_sqlite_stores_fixed_width_iso_text(store):
    metadata = MetaData()
    table = Table("utc_text", metadata, Column("id", Integer, primary_key=True), Column("at", UtcDateTime()))
    metadata.create_all(store.db.engine)
    with store.db.engine.begin() as connection:
        connection.execute(insert(table).values(id=1, at=datetime(2026, 6, 10, 22, 23, 15, tzinfo=UTC)))
        raw = connection.exec_driver_sql("SELECT at FROM utc_text").scalar_one()

    assert raw == "2026-06-10T22:23:15.000000Z"
