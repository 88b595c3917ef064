"""The one clock of the store: slugs, ISO timestamps, week folders, durations."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta, timezone

import pytest
from dokoro_store import FrozenClock
from dokoro_store.clock import Clock, format_duration, iso, iso_week_dir, parse_iso, slug

TOKYO = timezone(timedelta(hours=9))


def test_the_real_clock_speaks_utc():
    assert Clock().now().tzinfo == UTC


def test_a_frozen_clock_stands_still_until_moved():
    clock = FrozenClock(datetime(2026, 6, 10, 22, 23, 15, tzinfo=TOKYO))

    assert clock.now() == datetime(2026, 6, 10, 13, 23, 15, tzinfo=UTC)
    assert clock.now().tzinfo == UTC
    clock.advance(timedelta(minutes=61))
    assert clock.now() == datetime(2026, 6, 10, 14, 24, 15, tzinfo=UTC)
    clock.set(datetime(2027, 1, 1, tzinfo=UTC))
    assert clock.now() == datetime(2027, 1, 1, tzinfo=UTC)


def test_slug_is_the_utc_minute_and_weekday():
    assert slug(datetime(2026, 6, 10, 22, 23, 59, tzinfo=UTC)) == "2026-06-10-22h23-wednesday"


def test_slug_converts_other_time_zones_to_utc_first():
    # Thursday 07:05 in Tokyo is still Wednesday in UTC.
    assert slug(datetime(2026, 6, 11, 7, 5, tzinfo=TOKYO)) == "2026-06-10-22h05-wednesday"


def test_iso_is_utc_with_a_z_and_whole_seconds():
    assert iso(datetime(2026, 6, 10, 22, 23, 15, 999_999, tzinfo=UTC)) == "2026-06-10T22:23:15Z"
    assert iso(datetime(2026, 6, 11, 7, 23, 15, tzinfo=TOKYO)) == "2026-06-10T22:23:15Z"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2026-05-12", datetime(2026, 5, 12, tzinfo=UTC)),
        ("2026-05-12T14:32:00Z", datetime(2026, 5, 12, 14, 32, tzinfo=UTC)),
        ("2026-05-12T14:32:00z", datetime(2026, 5, 12, 14, 32, tzinfo=UTC)),
        ("2026-05-12 14:32:00", datetime(2026, 5, 12, 14, 32, tzinfo=UTC)),
        ("2026-05-12T14:32:00.250Z", datetime(2026, 5, 12, 14, 32, 0, 250_000, tzinfo=UTC)),
        ("2026-05-12T23:32:00+09:00", datetime(2026, 5, 12, 14, 32, tzinfo=UTC)),
        ("  2026-05-12T14:32:00Z  ", datetime(2026, 5, 12, 14, 32, tzinfo=UTC)),
    ],
)
def test_parse_iso_reads_dates_and_date_times_as_utc(text, expected):
    parsed = parse_iso(text)

    assert parsed == expected
    assert parsed.tzinfo == UTC


@pytest.mark.parametrize("text", ["", "yesterday", "2026-13-01", "12/05/2026", "2026-05-12T25:00:00Z"])
def test_parse_iso_refuses_what_is_not_a_date_and_names_the_format(text):
    with pytest.raises(ValueError, match="YYYY-MM-DD or YYYY-MM-DDTHH:MM:SSZ"):
        parse_iso(text)


def test_iso_and_parse_iso_round_trip():
    moment = datetime(2026, 6, 10, 22, 23, 15, tzinfo=UTC)

    assert parse_iso(iso(moment)) == moment


@pytest.mark.parametrize(
    ("day", "expected"),
    [
        (date(2026, 6, 10), "2026-W24"),
        (date(2024, 12, 30), "2025-W01"),  # Monday of the week holding 2 January: next year's week 1
        (date(2021, 1, 1), "2020-W53"),  # Friday of the last week of 2020
        (date(2026, 1, 1), "2026-W01"),  # Thursday: the first week of its own year
        (date(2027, 1, 3), "2026-W53"),  # Sunday before the first Thursday of 2027
    ],
)
def test_iso_week_dir_uses_the_iso_week_year(day, expected):
    assert iso_week_dir(day) == expected


@pytest.mark.parametrize(
    ("minutes", "expected"), [(0, "0m"), (45, "45m"), (60, "1h"), (90, "1h 30m"), (125, "2h 5m"), (-3, "0m")]
)
def test_format_duration(minutes, expected):
    assert format_duration(minutes) == expected
