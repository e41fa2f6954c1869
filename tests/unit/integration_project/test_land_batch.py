"""The landing step: a batch's files appear whole under the stream directories the raw tables read."""

from __future__ import annotations

import pytest

from integration_project.scripts import generate_batches as gen
from integration_project.scripts.land_batch import BatchNotGeneratedError, land


def test_landing_copies_each_stream_file_once(tmp_path):
    gen.write(gen.generate(), tmp_path / "data")
    first = land(1, tmp_path / "data", tmp_path / "landing")
    land(2, tmp_path / "data", tmp_path / "landing")
    land(1, tmp_path / "data", tmp_path / "landing")  # landing again replaces, never duplicates
    assert [p.relative_to(tmp_path / "landing").as_posix() for p in first] == \
        ["ride_events/batch_001.jsonl", "assignment_events/batch_001.csv"]
    for stream in ("ride_events", "assignment_events"):
        # Only whole files, no leftovers of the dot-named copies Spark would skip anyway.
        assert sorted(p.name for p in (tmp_path / "landing" / stream).iterdir()) == \
            [f"batch_001.{'jsonl' if stream == 'ride_events' else 'csv'}",
             f"batch_002.{'jsonl' if stream == 'ride_events' else 'csv'}"]
    assert (tmp_path / "landing" / "ride_events" / "batch_002.jsonl").read_bytes() == \
        (tmp_path / "data" / "batch_002" / "ride_events.jsonl").read_bytes()


def test_landing_a_batch_never_generated_names_it(tmp_path):
    gen.write(gen.generate(batches=1), tmp_path / "data")
    with pytest.raises(BatchNotGeneratedError, match="batch 3 is not in"):
        land(3, tmp_path / "data", tmp_path / "landing")
    assert not (tmp_path / "landing").exists()
