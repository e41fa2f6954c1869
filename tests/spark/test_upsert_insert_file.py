"""The BLOOM index's driver lookup leaves out each partition's insert file (copy-on-write): the smallest small file,
which the insert plan fills first. When the plan puts all of the partition's inserts there, every batch key
found in no other file goes to it, and its merge task tells updates of its rows from inserts; targets, rows,
write stats and CDC images are those of looking the keys up in it too. When the plan spreads the inserts
further, or the batch deletes a key no other file holds, the insert file is looked up as before."""

from __future__ import annotations

import json

import pytest
from hoodpy_spark_helpers import TWO_FILES_DDL, by_key, latest_files, two_file_partition

from hoodpy.index import bloom
from hoodpy.timeline.instant import EARLIEST_INSTANT

pytestmark = pytest.mark.spark

DDL = TWO_FILES_DDL
NEW_GROUP = {"hoodie.parquet.small.file.limit": "0"}  # each insert starts its own file group


def _two_files(spark, path: str, **create):
    """(table, X's file id, Y's file id): see two_file_partition. Keys "8", "60", "70" are in Y's range only;
    "2" in both."""
    return two_file_partition(spark, path, "insert_file_t", **create)


@pytest.fixture
def checked(monkeypatch):
    """File ids whose keys the driver lookup checks, per upsert."""
    seen: list[str] = []
    original = bloom._check_candidates

    def spy(storage, bf, *args, **kwargs):
        seen.append(bf.file_id)
        return original(storage, bf, *args, **kwargs)

    monkeypatch.setattr(bloom, "_check_candidates", spy)
    return seen


def _per_file(result) -> dict[str, tuple[int, int]]:
    return {s.file_id: (s.num_update_writes, s.num_inserts) for s in result.metadata.write_stats}


def test_updates_and_inserts_reach_the_insert_file_unchecked(spark, tmp_path, checked):
    t, x, y = _two_files(spark, str(tmp_path / "t"),
                         table_properties={"hoodie.table.cdc.enabled": "true",
                                           "hoodie.table.cdc.supplemental.logging.mode": "data_before_after"})
    result = t.upsert(spark.createDataFrame([(2, "a", 2, "x2"), (4, "a", 2, "x4"), (8, "a", 2, "y8"),
                                             (50, "a", 2, "new50"), (51, "a", 2, "new51")], DDL))
    assert y in checked and x not in checked
    # X takes its updates and the inserts (its merge task tells them apart), Y its update.
    assert _per_file(result) == {x: (2, 2), y: (1, 0)}
    assert (result.num_update_writes, result.num_inserts, result.files_updated, result.files_added) == (3, 2, 2, 0)
    rows = t.read().select("_hoodie_record_key", "_hoodie_file_name", "v").collect()
    assert len(rows) == 42
    placed = {r[0]: r[1].split("_")[0] for r in rows}
    assert {k: placed[k] for k in ("2", "4", "50", "51")} == dict.fromkeys(("2", "4", "50", "51"), x)
    assert placed["8"] == y and placed["7"] == y
    assert {r[0]: r[2] for r in rows if r[0] in ("2", "4", "8", "50", "51")} == {
        "2": "x2", "4": "x4", "8": "y8", "50": "new50", "51": "new51"}
    # Before images for the true updates only; the inserts are inserts.
    changes = {}
    for r in t.read_cdc(EARLIEST_INSTANT, result.instant_time).filter(f"ts_ms = '{result.instant_time}'").collect():
        changes[json.loads(r.after)["id"]] = (r.op, json.loads(r.before)["v"] if r.before else None)
    assert changes == {2: ("u", "v2"), 4: ("u", "v4"), 8: ("u", "v8" * 20), 50: ("i", None), 51: ("i", None)}


def test_a_batch_touching_only_other_files_leaves_the_insert_file_alone(spark, tmp_path, checked):
    t, x, y = _two_files(spark, str(tmp_path / "t"))
    before = latest_files(t)
    result = t.upsert(spark.createDataFrame([(8, "a", 2, "y8"), (9, "a", 2, "y9")], DDL))
    assert x not in checked
    assert _per_file(result) == {y: (2, 0)}
    assert {k: v for k, v in latest_files(t).items() if k[1] == x} == {k: v for k, v in before.items() if k[1] == x}


def test_a_delete_of_a_key_no_other_file_holds_looks_up_the_insert_file(spark, tmp_path, checked):
    t, x, y = _two_files(spark, str(tmp_path / "t"))
    ddl = DDL + ", _hoodie_is_deleted boolean"
    result = t.upsert(spark.createDataFrame([(3, "a", 2, None, True), (8, "a", 2, "y8", False),
                                             (60, "a", 2, "new60", False)], ddl))
    assert x in checked and y in checked
    assert {s.file_id: (s.num_update_writes, s.num_inserts, s.num_deletes) for s in result.metadata.write_stats} \
        == {x: (0, 1, 1), y: (1, 0, 0)}
    got = by_key(t.read(), "v")
    assert "3" not in got and got["8"] == ("y8",) and got["60"] == ("new60",) and len(got) == 40


def test_inserts_spread_past_the_insert_file_look_it_up(spark, tmp_path, checked):
    """X can take few more records (hoodie.parquet.max.file.size just past it): the plan sends the rest to a new
    file group, so X is looked up and its update stays an update there."""
    t, x, y = _two_files(spark, str(tmp_path / "t"))
    sizes = {bf.file_id: bf.size for bf in t.file_system_view().latest_base_files()}
    opts = {"hoodie.parquet.max.file.size": str(sizes[x] + 100), "hoodie.copyonwrite.record.size.estimate": "100",
            "hoodie.record.size.estimation.threshold": "1000000"}
    result = t.upsert(spark.createDataFrame([(2, "a", 2, "x2")] + [(100 + i, "a", 2, f"n{i}") for i in range(5)],
                                            DDL), options=opts)
    assert x in checked
    stats = _per_file(result)
    assert stats[x][0] == 1 and 0 < stats[x][1] < 5 and sum(i for _, i in stats.values()) == 5
    assert result.files_added >= 1
    assert by_key(t.read(), "v")["2"] == ("x2",)


def test_without_small_files_every_file_is_looked_up(spark, tmp_path, checked):
    """hoodie.parquet.small.file.limit=0: no file takes inserts, so none is left out; updates stay updates."""
    t, x, y = _two_files(spark, str(tmp_path / "t"))
    result = t.upsert(spark.createDataFrame([(2, "a", 2, "x2"), (8, "a", 2, "y8"), (70, "a", 2, "new70")], DDL),
                      options=NEW_GROUP)
    assert set(checked) == {x, y}
    stats = _per_file(result)
    assert stats[x] == (1, 0) and stats[y] == (1, 0) and result.files_added == 1 and result.num_inserts == 1
    got = by_key(t.read(), "v")
    assert len(got) == 41 and got["2"] == ("x2",) and got["8"] == ("y8",) and got["70"] == ("new70",)
