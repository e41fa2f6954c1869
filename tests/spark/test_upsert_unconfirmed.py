"""Copy-on-write upserts send a file the batch keys only its key range holds (no other file of the partition's,
the insert file's included) unconfirmed when its bloom filter passes them: the driver reads no key column for
them, and the file's merge task writes a key it lacks (a bloom false positive) as an insert into it and drops a
delete of one. Candidates another file's range holds too are confirmed as before; so are a file's candidates
when the inserts they may bring would not fit in it, and every candidate of a merge-on-read upsert."""

from __future__ import annotations

import pytest
from hoodpy_spark_helpers import TWO_FILES_DDL, by_key, latest_files, two_file_partition

from hoodpy.index import bloom
from hoodpy.index.bloom_filter import BloomFilter
from hoodpy.table import HoodieTable

pytestmark = pytest.mark.spark

DDL = TWO_FILES_DDL


def _two_files(spark, path: str, **create):
    """(table, X's file id, Y's file id): see two_file_partition. Keys "8", "60", "70" are in Y's range only;
    "2" in both."""
    return two_file_partition(spark, path, "unconfirmed_t", **create)


@pytest.fixture
def spied(monkeypatch):
    """(confirmed, unconfirmed): the file ids whose candidates the driver lookup confirms against the key column,
    and those it sends sole candidates unconfirmed to."""
    confirmed: list[str] = []
    sole: list[str] = []
    check, send = bloom._check_candidates, bloom._sole_candidates

    def spy_check(storage, bf, *args, **kwargs):
        confirmed.append(bf.file_id)
        return check(storage, bf, *args, **kwargs)

    def spy_sole(storage, bf, *args, **kwargs):
        sole.append(bf.file_id)
        return send(storage, bf, *args, **kwargs)

    monkeypatch.setattr(bloom, "_check_candidates", spy_check)
    monkeypatch.setattr(bloom, "_sole_candidates", spy_sole)
    return confirmed, sole


@pytest.fixture
def false_positives(monkeypatch):
    """Every bloom filter probed on the driver passes every key (a false positive for each key a file lacks)."""
    monkeypatch.setattr(BloomFilter, "might_contain_many", lambda self, keys: [True] * len(keys))


@pytest.fixture
def saturated(monkeypatch):
    """Every footer filter passes nearly every key, as Hudi's default filter of a multi-million-key file."""
    monkeypatch.setattr(BloomFilter, "false_positive_rate", lambda self: 1.0)


def _stats(result) -> dict[str, tuple[int, int, int]]:
    return {s.file_id: (s.num_update_writes, s.num_inserts, s.num_deletes) for s in result.metadata.write_stats}


def _file_of(t: HoodieTable) -> dict[str, str]:
    return {r[0]: r[1].split("_")[0] for r in t.read().select("_hoodie_record_key", "_hoodie_file_name").collect()}


def test_sole_candidates_are_not_confirmed_and_updates_stay_updates(spark, tmp_path, spied):
    confirmed, sole = spied
    t, x, y = _two_files(spark, str(tmp_path / "t"))
    result = t.upsert(spark.createDataFrame([(8, "a", 2, "y8"), (9, "a", 2, "y9"), (60, "a", 2, "new60")], DDL))
    # Y's bloom filter rules 60 out (an insert for the plan: X), passes 8 and 9, which Y's task finds.
    assert sole == [y] and y not in confirmed and x not in confirmed
    assert _stats(result) == {y: (2, 0, 0), x: (0, 1, 0)}
    assert (result.num_update_writes, result.num_inserts) == (2, 1)
    got = by_key(t.read(), "v")
    assert len(got) == 41 and got["8"] == ("y8",) and got["9"] == ("y9",) and got["60"] == ("new60",)
    assert _file_of(t)["60"] == x


def test_a_bloom_false_positive_ends_as_an_insert_into_its_file(spark, tmp_path, spied, false_positives):
    confirmed, sole = spied
    t, x, y = _two_files(spark, str(tmp_path / "t"))
    commits = len(t.timeline.completed_commits())
    result = t.upsert(spark.createDataFrame([(2, "a", 2, "x2"), (8, "a", 2, "y8"), (60, "a", 2, "new60")], DDL))
    # "2" is in X's range too: confirmed against Y's keys (not there), then X's task updates it. "60" passes Y's
    # filter falsely: Y's task, which holds no such key, writes it as an insert; the write stats count it so.
    assert sole == [y] and confirmed == [y]
    assert _stats(result) == {x: (1, 0, 0), y: (1, 1, 0)}
    assert (result.num_update_writes, result.num_inserts, result.files_updated, result.files_added) == (2, 1, 2, 0)
    got = by_key(t.read(), "v")  # no key twice
    assert len(got) == 41 and got["2"] == ("x2",) and got["8"] == ("y8",) and got["60"] == ("new60",)
    placed = _file_of(t)
    assert placed["60"] == y and placed["8"] == y and placed["2"] == x
    assert len(t.timeline.completed_commits()) == commits + 1
    assert t.timeline.completed_commits()[-1].timestamp == result.instant_time


def test_a_delete_of_a_key_its_file_lacks_is_dropped(spark, tmp_path, spied, false_positives):
    confirmed, sole = spied
    t, x, y = _two_files(spark, str(tmp_path / "t"))
    before = latest_files(t)
    ddl = DDL + ", _hoodie_is_deleted boolean"
    result = t.upsert(spark.createDataFrame([(70, "a", 2, None, True), (9, "a", 2, None, True),
                                             (8, "a", 2, "y8", False)], ddl))
    assert sole == [y] and not confirmed
    assert _stats(result) == {y: (1, 0, 1)}  # 9 deleted, 70 (absent) dropped, X untouched
    got = by_key(t.read(), "v")
    assert len(got) == 39 and "9" not in got and "70" not in got and got["8"] == ("y8",)
    assert {k: v for k, v in latest_files(t).items() if k[1] == x} == {k: v for k, v in before.items() if k[1] == x}


def test_candidates_whose_inserts_would_not_fit_are_confirmed(spark, tmp_path, spied, saturated):
    """A saturated filter and hoodie.parquet.max.file.size just past Y's size: the candidates it passes, were they
    inserts into Y, would outgrow it, so Y's candidates are confirmed and 60 is an insert for the plan."""
    confirmed, sole = spied
    t, x, y = _two_files(spark, str(tmp_path / "t"))
    sizes = {bf.file_id: bf.size for bf in t.file_system_view().latest_base_files()}
    result = t.upsert(spark.createDataFrame([(8, "a", 2, "y8"), (60, "a", 2, "new60")], DDL),
                      options={"hoodie.parquet.max.file.size": str(sizes[y] + 10)})
    assert sole == [y] and confirmed == [y]
    assert _stats(result)[y] == (1, 0, 0) and result.num_inserts == 1
    assert _file_of(t)["60"] != y
    assert by_key(t.read(), "v")["60"] == ("new60",)


def test_repeated_keys_without_combining_each_reach_the_file(spark, tmp_path, spied):
    """hoodie.combine.before.upsert=false and a batch naming a key twice: both records go to the key's file."""
    confirmed, sole = spied
    t, x, y = _two_files(spark, str(tmp_path / "t"))
    result = t.upsert(spark.createDataFrame([(8, "a", 2, "y8a"), (8, "a", 3, "y8b"), (9, "a", 2, "y9")], DDL),
                      options={"hoodie.combine.before.upsert": "false"})
    assert sole == [y] and not confirmed
    assert set(_stats(result)) == {y} and result.num_inserts == 0
    got = t.read().select("_hoodie_record_key", "v").collect()
    assert len(got) == 40 and {r[1] for r in got if r[0] == "9"} == {"y9"}
    assert {r[1] for r in got if r[0] == "8"} <= {"y8a", "y8b"}


def test_merge_on_read_confirms_every_candidate(spark, tmp_path, spied, false_positives):
    """A merge-on-read update appended to a log must be one: nothing is sent unconfirmed."""
    confirmed, sole = spied
    t, x, y = _two_files(spark, str(tmp_path / "t"), table_type="MERGE_ON_READ")
    t.upsert(spark.createDataFrame([(8, "a", 2, "y8"), (60, "a", 2, "new60")], DDL))
    assert not sole and y in confirmed
    got = by_key(t.read(), "v")
    assert len(got) == 41 and got["8"] == ("y8",) and got["60"] == ("new60",)
