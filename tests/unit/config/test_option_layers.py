"""Options merged over table properties win under whichever of a key's names either side uses: a user's alias
is honoured (or refused by name where it would change the table's files), never hidden behind the table's
property."""

from __future__ import annotations

import pytest

from hoodpy.config import HoodieConfig
from hoodpy.config.table import TableConfig, check_ordering_field_kept
from hoodpy.errors import InvalidConfigError

TABLE = {"hoodie.table.precombine.field": "ts", "hoodie.table.recordkey.fields": "id"}


@pytest.mark.parametrize("alias", ["hoodie.datasource.write.precombine.field", "hoodie.table.ordering.fields"])
def test_a_later_layer_wins_under_an_alias(alias):
    config = HoodieConfig.of(TABLE, {alias: "seq"})
    assert config.get(TableConfig.PRECOMBINE_FIELD) == "seq"
    assert "hoodie.table.precombine.field" not in config.options


def test_names_within_one_layer_keep_their_precedence():
    config = HoodieConfig.of({"hoodie.table.precombine.field": "ts", "hoodie.datasource.write.precombine.field": "x"})
    assert config.get(TableConfig.PRECOMBINE_FIELD) == "ts"  # the key itself before its aliases, as before


def test_a_write_naming_another_ordering_field_is_refused_by_the_name_given():
    recorded = HoodieConfig.of(TABLE)
    with pytest.raises(InvalidConfigError, match="Invalid value 'seq' for hoodie.datasource.write.precombine.field: "
                                                 "the table has ordering field 'ts'"):
        check_ordering_field_kept(recorded, {"hoodie.datasource.write.precombine.field": "seq"})
    check_ordering_field_kept(recorded, {"hoodie.datasource.write.precombine.field": "ts"})  # agrees: fine
    check_ordering_field_kept(HoodieConfig.of({}), {"hoodie.datasource.write.precombine.field": "seq"})  # none yet
