"""hoodpy's key generators against tables Java Hudi wrote (1.1, table version 9): for every row of every base
file, the record key and partition path hoodpy computes from the data columns equal the meta columns Java
wrote, and the file sits in that partition's folder. The tables are read with pyarrow only (their versions
are another matter); the table's own hoodie.properties configures the key generator."""

from __future__ import annotations

import zipfile
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from hoodpy.config import HoodieConfig
from hoodpy.config.properties import parse_properties
from hoodpy.keygen import TIMESTAMP, KeyGenerator, virtual_keys
from hoodpy.keygen.stored import stored_record_keys
from hoodpy.meta_fields import FILE_NAME, META_COLUMNS, PARTITION_PATH, RECORD_KEY
from tests.java_samples import SAMPLES_DIR

TIMEBASED = [
    ("hudi-rs/sample_table/cow/v9_timebasedkeygen_epochmillis", {"2024/01/15/09", "2024/01/16/01"}),
    ("hudi-rs/sample_table/cow/v9_timebasedkeygen_unixtimestamp", {"2024/01/15", "2024/01/17"}),
    ("hudi-rs/sample_table/cow/v9_timebasedkeygen_nonhivestyle", {"2024/01/15/10", "2024/01/18/16"}),
    ("hudi-rs/sample_table/mor/avro/v9_timebasedkeygen_nonhivestyle", {"2024/01/15/16"}),
]
OTHERS = [
    "hudi-rs/sample_table/cow/v9_txns_complex_nometa",
    "hudi-rs/sample_table/cow/v9_txns_simple_nometa",
    "hudi-rs/sample_table/cow/v9_txns_nonpart_nometa",
]


def _table(name: str, tmp_path: Path) -> Path:
    zip_path = SAMPLES_DIR / f"{name}.zip"
    if not zip_path.exists():
        pytest.skip(f"sample {zip_path} not available")
    with zipfile.ZipFile(zip_path) as z:
        z.extractall(tmp_path, [m for m in z.namelist() if not m.startswith("__MACOSX")])
    return tmp_path / name.rsplit("/", 1)[-1]


def _check(base: Path) -> set[str]:
    props = parse_properties((base / ".hoodie" / "hoodie.properties").read_text())
    keygen = KeyGenerator.from_config(HoodieConfig.of(props))
    seen = set()
    files = sorted((f for f in base.rglob("*.parquet") if ".hoodie" not in f.parts), key=lambda f: f.name[-26:])
    assert files
    first_types = {f: pq.read_schema(files[0]).field(f).type for f in keygen.partition_fields}
    for f in files:
        rows = pq.read_table(f)
        if not rows.num_rows:  # a file group whose last rows were deleted
            continue
        if any(rows.schema.field(f).type != first_types[f] for f in keygen.partition_fields):
            # Hudi 1.1's SQL UPDATE / DELETE rewrote these files with the time-based partition column as a
            # string ('1705367700' under a LONG column); the rows kept their stored location, no key
            # generator ran on that string (Hudi's own refuses one without an input format).
            continue
        folder = "" if f.parent == base else str(f.parent.relative_to(base))
        expected = rows.column(PARTITION_PATH).to_pylist()
        assert keygen.partition_paths_of(rows).to_pylist() == expected, f
        assert set(expected) == {folder}, f
        assert keygen.record_keys_of(rows).to_pylist() == rows.column(RECORD_KEY).to_pylist(), f
        seen.update(expected)
    return seen


@pytest.mark.parametrize(("name", "some_partitions"), TIMEBASED, ids=[n.rsplit("/", 2)[-1] for n, _ in TIMEBASED])
def test_timestamp_based_partition_paths_equal_java(tmp_path, name, some_partitions):
    base = _table(name, tmp_path)
    props = parse_properties((base / ".hoodie" / "hoodie.properties").read_text())
    assert KeyGenerator.from_config(HoodieConfig.of(props)).partition_types == (TIMESTAMP,)
    assert some_partitions <= _check(base)


@pytest.mark.parametrize("name", OTHERS, ids=[n.rsplit("/", 1)[-1] for n in OTHERS])
def test_simple_complex_nonpartitioned_keys_equal_java(tmp_path, name):
    _check(_table(name, tmp_path))


VIRTUAL = ["hudi-rs/sample_table/mor/parquet/v6_simplekeygen_hivestyle_no_metafields",
           "hudi-rs/sample_table/cow/v8_simplekeygen_hivestyle_no_metafields"]


@pytest.mark.parametrize("name", VIRTUAL, ids=[n.rsplit("/", 2)[-2] for n in VIRTUAL])
def test_virtual_keys_of_java_files(tmp_path, name):
    """Java Hudi's base files of a table without meta fields (0.14 MOR, 1.0 COW): the meta columns are there,
    null but for the file name, the footer has no bloom filter or key range, and the keys hoodpy computes
    from the key field are the record ids, in folders its partition paths name."""
    base = _table(name, tmp_path)
    props = parse_properties((base / ".hoodie" / "hoodie.properties").read_text())
    config = HoodieConfig.of(props)
    keygen = virtual_keys(config)
    assert keygen is not None
    for f in (f for f in base.rglob("*.parquet") if ".hoodie" not in f.parts):
        pf = pq.ParquetFile(f)
        rows = pf.read()
        assert rows.schema.names[:5] == list(META_COLUMNS)
        assert all(rows.column(c).null_count == rows.num_rows for c in META_COLUMNS[:4])
        assert set(rows.column(FILE_NAME).to_pylist()) == {f.name}
        assert not {b"org.apache.hudi.bloomfilter", b"hoodie_min_record_key"} & set(pf.metadata.metadata or {})
        assert stored_record_keys(pf, keygen).to_pylist() == [str(i) for i in rows.column("id").to_pylist()]
        assert set(keygen.partition_paths_of(rows).to_pylist()) == {str(f.parent.relative_to(base))}
