"""Keys located on the driver reach the merge: an update whose key the lookup finds in a later base file,
while earlier files it checked hold none of the batch's keys, must still update its row.

Regression: pyspark 4.0's createDataFrame(pa.Table) returns no rows when the table's leading chunks are
empty, which is how the per-file lookup results were concatenated; the update silently vanished.
"""

from __future__ import annotations

import pytest
from hoodpy_spark_helpers import SMALL_BLOOM, by_key

from sql_ext.table import HoodieTable

pytestmark = pytest.mark.spark

DDL = "id int, p string, ts long, v string"


def test_update_found_after_files_without_batch_keys_is_applied(spark, tmp_path):
    t = HoodieTable.create(spark, str(tmp_path / "t"), table_name="lookup_t", record_key_fields=["id"],
                           partition_fields=["p"], precombine_field="ts", options=SMALL_BLOOM)
    t.upsert(spark.createDataFrame([(1, "a", 1, "a1"), (5, "a", 1, "a5"), (2, "b", 1, "b2"), (4, "b", 1, "b4")], DDL))
    # Key 3 is new but inside partition a's file key range ("1".."5"), so that file is checked and holds
    # nothing; key 4 is found in partition b's file.
    result = t.upsert(spark.createDataFrame([(3, "a", 2, "a3"), (4, "b", 2, "b4-new")], DDL))
    assert (result.num_inserts, result.num_update_writes) == (1, 1)
    assert by_key(t.read(), "p", "v") == {"1": ("a", "a1"), "2": ("b", "b2"), "3": ("a", "a3"),
                                          "4": ("b", "b4-new"), "5": ("a", "a5")}
