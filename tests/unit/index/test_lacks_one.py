"""hoodpy.index.bloom.lacks_one: a file's footer bloom filter proves a key absent (it has no false negatives), so
the driver need not read the file's keys to know the batch holds an insert there."""

from __future__ import annotations

import pyarrow as pa

from hoodpy.index import bloom
from hoodpy.index.bloom import lacks_one
from hoodpy.storage import Storage
from tests.unit.index.test_arrow_keys import _write


def test_a_key_the_filter_rejects_proves_the_file_lacks_one(tmp_path):
    storage = Storage(str(tmp_path))
    f = _write(storage, "", [f"k{i:03d}" for i in range(50)])
    assert not lacks_one(storage, f, pa.array([f"k{i:03d}" for i in range(0, 50, 3)], pa.string()))
    assert lacks_one(storage, f, pa.array(["k001", "k010x", "k020"], pa.string()))
    assert not lacks_one(storage, f, pa.array(["", None], pa.string()))  # nothing the filter can take
    assert not lacks_one(storage, f, pa.array([], pa.large_string()))


def test_only_a_sample_is_probed_and_a_saturated_filter_proves_nothing(tmp_path, monkeypatch):
    storage = Storage(str(tmp_path))
    f = _write(storage, "", [f"k{i:03d}" for i in range(50)])
    present = [f"k{i:03d}" for i in range(50)] * 3
    monkeypatch.setattr(bloom, "_PROVES_ABSENT_SAMPLE", 20)
    # The absent key falls between the sampled positions (0, 7, 15, ...): not found, the caller looks it up.
    assert not lacks_one(storage, f, pa.array(present[:148] + ["zzz"] + present[148:], pa.string()))
    assert lacks_one(storage, f, pa.array(["zzz"] + present, pa.string()))
    monkeypatch.setattr(bloom, "_PROVES_ABSENT_MAX_FPR", -1.0)  # every filter counts as saturated
    assert not lacks_one(storage, f, pa.array(["zzz"] + present, pa.string()))
