"""hoodpy reads Hudi 1.x copy-on-write tables (table versions 8 and 9, timeline layout 2) as hudi-rs does.

The fixtures are the hudi-rs sample tables in ../shared/hudi-samples/hudi-rs/sample_table/cow/ (Hudi 1.0 and
1.1 wrote them). For each: the snapshot, time travel as of every commit's completion time and incremental
windows between completion times equal hudi-rs's. (hudi-rs compares ``as_of`` and window bounds with
instant times while hoodpy, like Hudi 1.x, uses completion times; these tables were written by one writer,
so instant ``i+1`` starts after instant ``i`` completes and a completion time selects the same commits in
both.) Tables without meta fields are compared on the columns hudi-rs returns.
"""

from __future__ import annotations

import zipfile
from pathlib import Path

import pytest

import hudi_rs
from java_samples import SAMPLES_DIR
from hoodpy.table import HoodieTable

pytestmark = [pytest.mark.compat, pytest.mark.spark]

COW_DIR = "hudi-rs/sample_table/cow"
# Readable today. The TimestampBasedKeyGenerator fixtures (v9_timebasedkeygen_epochmillis / _unixtimestamp)
# declare their long partition column as a string in the table schema, which the parquet files do not
# match; they wait for the key generator work (see the module docstring of the report).
READABLE = [
    "v8_complexkeygen_hivestyle", "v8_nonpartitioned", "v8_simplekeygen_hivestyle_no_metafields",
    "v9_timebasedkeygen_nonhivestyle", "v9_txns_complex_meta", "v9_txns_complex_nometa",
    "v9_txns_nonpart_meta", "v9_txns_nonpart_nometa", "v9_txns_simple_meta", "v9_txns_simple_nometa",
    "v9_txns_simple_overwrite",
]


def unzip_v1x(name: str, dest: Path) -> str:
    zip_path = SAMPLES_DIR / COW_DIR / f"{name}.zip"
    if not zip_path.exists():
        pytest.skip(f"sample {zip_path} not available")
    with zipfile.ZipFile(zip_path) as z:
        z.extractall(dest, [m for m in z.namelist() if not m.startswith("__MACOSX") and ".DS_Store" not in m])
    return str(dest / name)


@pytest.fixture(scope="module")
def samples_dir(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("v1x_samples")


@pytest.fixture(scope="module", params=READABLE)
def sample(request, samples_dir) -> str:
    return unzip_v1x(request.param, samples_dir)


def ours_like_theirs(df, theirs: list[dict]) -> list[dict]:
    """hoodpy's rows, on the columns hudi-rs returned (it leaves out absent meta columns)."""
    ours = hudi_rs.df_rows(df)
    return hudi_rs.project(ours, list(theirs[0])) if theirs else ours


def test_snapshot_matches_hudi_rs(spark, sample):
    theirs = hudi_rs.snapshot(sample)
    assert theirs, "the sample has rows"
    assert ours_like_theirs(HoodieTable.for_path(spark, sample).read(), theirs) == theirs


def test_time_travel_and_incremental_match_hudi_rs(spark, sample):
    table = HoodieTable.for_path(spark, sample)
    commits = table.timeline.completed_commits()
    assert [i.timestamp for i in commits] == hudi_rs.completed_instants(sample)
    completions = [i.completion_time for i in commits]
    assert all(c is not None and c > i.timestamp for c, i in zip(completions, commits))
    for at in completions:
        theirs = hudi_rs.snapshot(sample, as_of=at)
        assert ours_like_theirs(table.read(as_of=at), theirs) == theirs, at
    for start, end in zip(completions, completions[1:]):
        theirs = hudi_rs.incremental(sample, start, end)
        assert ours_like_theirs(table.read_incremental(start, end), theirs) == theirs, (start, end)
