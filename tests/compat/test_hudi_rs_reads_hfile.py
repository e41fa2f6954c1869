"""hudi-rs (the ``hudi`` 0.5.0 package) reads the HFiles hoodpy writes. Its Python API has no HFile reader of
its own, but it reads a metadata table's base HFile through a file-group reader on ``.hoodie/metadata``, and
a table's listing through the ``files`` partition (base HFile + HFile log blocks) when the metadata table is
enabled. The v9 sample table's metadata-table files are replaced by hoodpy's rewrites of them (full index
keys, hoodpy's creation time), plus a synthetic many-block base file, and hudi-rs must read the same."""

from __future__ import annotations

import pyarrow as pa
import pytest
from hudi import HudiFileGroupReader

import hudi_rs
from hoodpy.hfile import HFileReader, read_records, write_records
from hoodpy.timeline import log_format as lf
from java_samples import MDT_SAMPLES, unzip_sample

pytestmark = pytest.mark.compat


def _rewrite_hfile(data: bytes, **options) -> bytes:
    reader = HFileReader(data)
    return write_records([(r["key"], r) for r in read_records(reader)], reader.schema, **options)


def _mdt_rows(metadata: str, base_file: str) -> list[dict]:
    batch = HudiFileGroupReader(metadata).read_file_slice_from_paths(base_file, [])
    return pa.Table.from_batches([batch]).to_pylist()


def test_hudi_rs_reads_hoodpy_metadata_table_base_files(tmp_path):
    base = unzip_sample(MDT_SAMPLES[0], tmp_path)
    metadata = base / ".hoodie" / "metadata"
    checked = 0
    for path in sorted(metadata.glob("*/*.hfile")):
        relative = str(path.relative_to(metadata))
        java_rows = _mdt_rows(str(metadata), relative)
        path.write_bytes(_rewrite_hfile(path.read_bytes()))
        assert _mdt_rows(str(metadata), relative) == java_rows, relative
        checked += 1
    assert checked == 29
    # 3,000 records with 300-byte keys in many 4 KiB blocks (index key lengths take two-byte vlongs), under
    # the metadata table's own schema
    [files_base] = [p for p in metadata.glob("files/*.hfile") if "_13-170-402_" in p.name]
    template = next(r for r in read_records(HFileReader(files_base.read_bytes())) if r["type"] == 2)
    schema = HFileReader(files_base.read_bytes()).schema
    keys = [f"part={'x' * 290}{i:05d}" for i in range(3000)]
    records = [(k, {**template, "key": k, "filesystemMetadata": {f"f{i}.parquet": {"size": i, "isDeleted": False}}})
               for i, k in enumerate(keys)]
    data = write_records(records, schema, block_size=4096)
    assert len(HFileReader(data).data_block_index) > 50
    files_base.write_bytes(data)
    rows = _mdt_rows(str(metadata), str(files_base.relative_to(metadata)))
    assert [(r["key"], r["filesystemMetadata"]) for r in rows] == \
        [(k, [(f"f{i}.parquet", {"size": i, "isDeleted": False})]) for i, (k, _) in enumerate(records)]


def test_hudi_rs_lists_the_table_through_hoodpy_hfile_log_blocks(tmp_path):
    base = unzip_sample(MDT_SAMPLES[0], tmp_path)
    enabled = {"hoodie.metadata.enable": "true"}

    def listing_and_rows():
        table = hudi_rs.table(str(base), enabled)
        slices = sorted((s.partition_path, s.base_file_name) for s in table.get_file_slices())
        return slices, pa.Table.from_batches(table.read()).num_rows

    expected = listing_and_rows()
    logs = sorted((base / ".hoodie" / "metadata" / "files").glob(".files-0000-0_*.log.*"))
    rewritten = 0
    for log in logs:
        out = b""
        for block in lf.scan_blocks(log.read_bytes(), str(log)):
            if block.block_type == lf.HFILE_DATA_BLOCK:
                records = read_records(HFileReader(block.content))
                out += lf.hfile_data_block([(r["key"], r) for r in records], block.header[lf.SCHEMA],
                                           block.instant_time)
                rewritten += 1
            else:
                out += lf.encode_block(block.block_type, block.header, block.content, block.footer)
        log.write_bytes(out)
    assert rewritten == 12
    assert listing_and_rows() == expected
    # the check is live: hudi-rs reads these logs (a corrupt one fails the read rather than being skipped)
    logs[-1].write_bytes(b"not a log file")
    with pytest.raises(Exception, match="magic"):
        listing_and_rows()
