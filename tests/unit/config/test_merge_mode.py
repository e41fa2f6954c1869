"""The merge-mode rule writes and merge-on-read reads share."""

import pytest

from hoodpy.config import HoodieConfig
from hoodpy.config.write import event_time_ordering_field


@pytest.mark.parametrize("options,expected", [
    ({"hoodie.table.precombine.field": "ts"}, "ts"),  # event time by default with an ordering field
    ({}, None),  # commit time without one
    ({"hoodie.table.precombine.field": "ts", "hoodie.write.record.merge.mode": "COMMIT_TIME_ORDERING"}, None),
    ({"hoodie.datasource.write.precombine.field": "ts", "hoodie.record.merge.mode": "event_time_ordering"}, "ts"),
    ({"hoodie.write.record.merge.mode": "EVENT_TIME_ORDERING"}, None),  # nothing to order by
])
def test_event_time_ordering_field(options, expected):
    assert event_time_ordering_field(HoodieConfig.of(options)) == expected
