"""Which table versions hoodpy opens, writes and creates, and what it says about the others."""

import pytest

from hoodpy.config.table import check_supported, check_version_writable
from hoodpy.config.table_version import versioned_properties
from hoodpy.errors import InvalidConfigError, UnsupportedServiceError, UnsupportedTableVersionError


def _props(version, layout=None, **extra):
    props = {"hoodie.table.name": "t", "hoodie.table.version": str(version)}
    if layout is not None:
        props["hoodie.timeline.layout.version"] = str(layout)
    return {**props, **extra}


@pytest.mark.parametrize("version, layout", [(5, None), (6, 1), (6, None), (8, 2), (9, 2)])
def test_supported_versions_open(version, layout):
    check_supported("/t", _props(version, layout))


@pytest.mark.parametrize("version, layout, says", [
    (10, 2, "table version 10 / timeline layout 2 (newer than the newest version hoodpy knows, 9)"),
    (4, 1, "table version 4 / timeline layout 1 (written by a Hudi older than 0.12"),
    (7, 1, "table version 7 / timeline layout 1"),
    (8, 1, "table version 8 / timeline layout 1"),  # mid-upgrade: layout 1 with version 8
    (6, 2, "table version 6 / timeline layout 2"),
])
def test_other_versions_are_refused_naming_them(version, layout, says):
    with pytest.raises(UnsupportedTableVersionError) as e:
        check_supported("/t", _props(version, layout))
    assert says in str(e.value)


def test_a_custom_timeline_path_is_refused():
    with pytest.raises(UnsupportedTableVersionError, match=r"its timeline in .hoodie/tl"):
        check_supported("/t", _props(8, 2, **{"hoodie.timeline.path": "tl"}))


def test_version_5_is_read_only():
    with pytest.raises(UnsupportedServiceError, match="Writing is not supported on table version 5 at '/t'"):
        check_version_writable("/t", 5)
    for version in (6, 8, 9):
        check_version_writable("/t", version)


def test_version_8_properties_of_a_new_table():
    base = {"hoodie.table.version": "6", "hoodie.timeline.layout.version": "1",
            "hoodie.table.keygenerator.class": "org.apache.hudi.keygen.ComplexKeyGenerator"}
    assert versioned_properties(base, 6) == base
    v8 = versioned_properties(base, 8, key_generator_type="COMPLEX")
    assert v8 == {**base, "hoodie.table.version": "8", "hoodie.timeline.layout.version": "2",
                  "hoodie.table.initial.version": "8", "hoodie.timeline.path": "timeline",
                  "hoodie.timeline.history.path": "history", "hoodie.record.merge.mode": "COMMIT_TIME_ORDERING",
                  "hoodie.record.merge.strategy.id": "ce9acb64-bde0-424c-9b91-f6ebba25356d",
                  "hoodie.table.keygenerator.type": "COMPLEX"}
    ordered = versioned_properties({**base, "hoodie.table.precombine.field": "ts"}, 8)
    assert ordered["hoodie.record.merge.mode"] == "EVENT_TIME_ORDERING"
    assert ordered["hoodie.record.merge.strategy.id"] == "eeb8d96f-b1e4-49fd-bbf8-28ac514178e5"
    with pytest.raises(InvalidConfigError, match="hoodie.write.table.version"):
        versioned_properties(base, 7)


def test_merge_on_read_opens_at_versions_6_8_and_9():
    for version, layout in ((6, 1), (8, 2), (9, 2)):
        check_supported("/t", _props(version, layout, **{"hoodie.table.type": "MERGE_ON_READ"}))
    with pytest.raises(UnsupportedTableVersionError, match="table type MERGE_OF_READ"):
        check_supported("/t", _props(9, 2, **{"hoodie.table.type": "MERGE_OF_READ"}))
