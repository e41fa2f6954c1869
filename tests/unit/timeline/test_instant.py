from datetime import datetime, timezone

import pytest

from hoodpy.errors import InvalidInstantError
from hoodpy.timeline.instant import (
    Action,
    Instant,
    State,
    instant_time_of,
    new_instant_time,
    parse_instant_file_name,
    parse_instant_time,
    validate_instant_time,
)

NAMES = [
    ("20240418173213674.commit.requested", Action.COMMIT, State.REQUESTED),
    ("20240418173213674.inflight", Action.COMMIT, State.INFLIGHT),
    ("20240418173213674.commit", Action.COMMIT, State.COMPLETED),
    ("20240707001303088.replacecommit.requested", Action.REPLACECOMMIT, State.REQUESTED),
    ("20240707001303088.replacecommit.inflight", Action.REPLACECOMMIT, State.INFLIGHT),
    ("20240707001303088.replacecommit", Action.REPLACECOMMIT, State.COMPLETED),
    ("20240707001303088.clean.requested", Action.CLEAN, State.REQUESTED),
    ("20240707001303088.clean", Action.CLEAN, State.COMPLETED),
    ("20240707001303088.rollback.inflight", Action.ROLLBACK, State.INFLIGHT),
    ("20240707001303088.savepoint.inflight", Action.SAVEPOINT, State.INFLIGHT),
    ("20240707001303088.savepoint", Action.SAVEPOINT, State.COMPLETED),
]


@pytest.mark.parametrize("name,action,state", NAMES)
def test_file_names_round_trip(name, action, state):
    instant = parse_instant_file_name(name)
    assert instant == Instant(name.split(".")[0], action, state)
    assert instant.file_name == name


@pytest.mark.parametrize("name", ["hoodie.properties", "20240418.commit", "20240418173213674.bogus",
                                  ".20240418173213674.commit.tmp", "archived"])
def test_non_instant_files_are_ignored(name):
    assert parse_instant_file_name(name) is None


def test_compaction_completes_as_commit():
    assert Instant("20240101000000000", Action.COMPACTION).file_name == "20240101000000000.commit"


def test_instant_time_format_is_utc_milliseconds():
    moment = datetime(2024, 4, 18, 17, 32, 13, 674000, tzinfo=timezone.utc)
    assert instant_time_of(moment) == "20240418173213674"
    assert parse_instant_time("20240418173213674") == moment


def test_new_instant_times_are_strictly_increasing_and_after_the_floor(monkeypatch):
    from hoodpy.timeline import instant

    # The last issued time is process-wide: restored afterwards, or every later test would write in year 3000.
    monkeypatch.setattr(instant, "_last_issued", instant._last_issued)
    floor = "29991231235959998"
    first = new_instant_time(after=floor)
    second = new_instant_time()
    assert first == "29991231235959999"
    assert second > first
    assert len(second) == 17


@pytest.mark.parametrize("bad", ["2024", "2024041817321367x", "", None, "202404181732136745"])
def test_invalid_instant_times_are_rejected(bad):
    with pytest.raises(InvalidInstantError, match="yyyyMMddHHmmssSSS"):
        validate_instant_time(bad)
