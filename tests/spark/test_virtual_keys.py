"""Tables with virtual keys (``hoodie.populate.meta.fields=false``): files written as Java Hudi writes them
(the five meta columns present, null but for the file name; no bloom filter or key range in the footer),
keys computed from the key fields for updates and deletes with either index, reads without meta columns
(as hudi-rs and Hudi's schema resolver return them), and hudi-rs reads the rows."""

from __future__ import annotations

import pyarrow.parquet as pq
import pytest
from hoodpy_spark_helpers import latest_files, rows

from hoodpy.config.clustering import ClusteringConfig
from hoodpy.errors import InvalidConfigError
from hoodpy.meta_fields import META_COLUMNS
from hoodpy.table import HoodieTable
from tests.compat.hudi_rs import schema
from tests.compat.hudi_rs import snapshot_tuples as hudi_rs

pytestmark = pytest.mark.spark

DDL = "id int, name string, ts long, city string"
DATA = ("id", "name", "ts", "city")


@pytest.mark.parametrize(("index", "first_write"), [("BLOOM", "insert"), ("SIMPLE", "bulk_insert")])
def test_virtual_key_table_round_trip(spark, tmp_path, index, first_write):
    path = str(tmp_path / "vk")
    t = HoodieTable.create(spark, path, table_name="vk", record_key_fields=["id"], partition_fields=["city"],
                           precombine_field="ts", hive_style_partitioning=True,
                           table_properties={"hoodie.populate.meta.fields": "false"},
                           options={"hoodie.index.type": index})
    assert t.properties["hoodie.populate.meta.fields"] == "false"
    getattr(t, first_write)(spark.createDataFrame([(1, "a", 1, "sf"), (2, "b", 1, "sf"), (3, "c", 1, "la")], DDL))

    files = latest_files(t)
    for rel in files.values():
        f = pq.ParquetFile(t.storage.full_path(rel))
        assert f.schema_arrow.names[:5] == list(META_COLUMNS)
        stored = f.read()
        for c in META_COLUMNS[:4]:
            assert stored.column(c).null_count == stored.num_rows, c
        assert set(stored.column("_hoodie_file_name").to_pylist()) == {rel.rsplit("/", 1)[-1]}
        assert not {b"org.apache.hudi.bloomfilter", b"hoodie_min_record_key"} & set(f.metadata.metadata or {})

    assert t.read().columns == list(DATA)
    result = t.upsert(spark.createDataFrame([(1, "A", 2, "sf"), (3, "C", 2, "la"), (4, "d", 2, "la")], DDL))
    assert (result.num_update_writes, result.num_inserts) == (2, 1)
    assert set(latest_files(t)) == set(files)  # updated in place: the same file groups
    t.delete(spark.createDataFrame([(2, None, 3, "sf")], DDL))
    expected = [(1, "A", 2, "sf"), (3, "C", 2, "la"), (4, "d", 2, "la")]
    assert rows(HoodieTable.for_path(spark, path).read(), *DATA) == expected
    assert hudi_rs(path, DATA) == expected
    # Clustering rewrites the rows as virtual-key files too.
    done = t.clustering.run({ClusteringConfig.SMALL_FILE_LIMIT.key: 10**9}, sort_columns=["name"])
    assert len(done) == 1
    for stat in done[0].metadata.write_stats:
        stored = pq.read_table(t.storage.full_path(stat.path))
        assert stored.column("_hoodie_record_key").null_count == stored.num_rows
    assert rows(t.read(), *DATA) == expected
    assert hudi_rs(path, DATA) == expected
    assert not set(META_COLUMNS) & set(schema(path).names)  # hudi-rs returns no meta columns either
    with pytest.raises(InvalidConfigError, match="populate.meta.fields"):
        t.read_incremental("000")
    with pytest.raises(InvalidConfigError, match="the table has hoodie.populate.meta.fields=false"):
        t.upsert(spark.createDataFrame([(9, "z", 9, "sf")], DDL), options={"hoodie.populate.meta.fields": "true"})
