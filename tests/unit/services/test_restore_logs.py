"""Restore on merge-on-read log files without Spark: which log files go, which slices get a rollback command
block, and the block's bytes equal the one Java's rollback wrote into the v6_nonpartitioned_rollback sample."""

from __future__ import annotations

import zipfile

import pytest

from java_samples import MOR_V6, SAMPLES_DIR
from hoodpy.file_group.fs_view import list_group_files
from hoodpy.services.restore_logs import plan_log_rollback, write_rollback_block
from hoodpy.storage import Storage
from hoodpy.timeline import log_format

ROLLBACK_LOG = ".0712b9f9-d2d5-4cae-bcf4-8fd7146af503-0_20250126040823628.log.2_1-0-1"
FID = "aaaaaaaa-0000-0000-0000-000000000001-0"
T1, T2, T3, T4 = "20240101000000000", "20240101010000000", "20240101020000000", "20240101030000000"


def test_rollback_block_bytes_are_javas():
    with zipfile.ZipFile(SAMPLES_DIR / f"{MOR_V6}/v6_nonpartitioned_rollback.zip") as z:
        java = z.read(f"v6_nonpartitioned_rollback/{ROLLBACK_LOG}")
    assert log_format.rollback_command_block("20250126040936578", "20250126040826878") == java


def data_block(instant: str) -> bytes:
    return log_format.encode_block(log_format.AVRO_DATA_BLOCK, {log_format.INSTANT_TIME: instant,
                                                                log_format.SCHEMA: "{}"}, b"\0\0\0\2\0\0\0\0")


@pytest.fixture
def storage(tmp_path):
    s = Storage(str(tmp_path))
    s.write_bytes(f"p/.{FID}_{T1}.log.1_0-1-1", data_block(T2) + data_block(T3))  # mixed: T2 kept, T3 not
    s.write_bytes(f"p/.{FID}_{T1}.log.2_0-1-1", data_block(T4))  # written by T4 alone
    s.write_bytes(f"p/.{FID}_{T3}.log.1_0-1-1", data_block(T4))  # a slice whose base instant goes
    return s


def test_whole_files_go_and_mixed_ones_get_a_rollback_block(storage):
    logs = [f for f in list_group_files(storage) if not f.file_name.endswith(".parquet")]
    plan = plan_log_rollback(storage, logs, {T3, T4})
    assert {t: sorted(f.file_name for f in files) for t, files in plan.deletes.items()} == {
        T4: [f".{FID}_{T1}.log.2_0-1-1", f".{FID}_{T3}.log.1_0-1-1"]}
    assert plan.rollback_blocks == {T3: [("p", FID, T1)]}
    rel, size = write_rollback_block(storage, plan, ("p", FID, T1), T4 + "1", T3)
    assert rel == f"p/.{FID}_{T1}.log.3_1-0-1" and size == len(storage.read_bytes(rel))
    [block] = log_format.read_blocks(storage.read_bytes(rel))
    assert (block.block_type, block.header[log_format.TARGET_INSTANT_TIME]) == (log_format.COMMAND_BLOCK, T3)
    # A rerun (after a crash) finds the block and writes none again.
    again = plan_log_rollback(storage, [f for f in list_group_files(storage) if ".log." in f.file_name], {T3, T4})
    assert again.rollback_blocks == {}
