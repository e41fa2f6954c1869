from hoodpy.file_group.file_group import BaseFile
from hoodpy.file_group.naming import parse_base_file_name
from hoodpy.write.bucket_assignment import HASH_SPACE, SizingConfig, hash_ranges, plan_insert_buckets


def _bf(partition, fid, size):
    return BaseFile(partition, parse_base_file_name(f"{fid}_0-1-1_20240101000000001.parquet"), size)


def test_small_files_fill_first_then_new_groups_at_max_size():
    sizing = SizingConfig(max_file_size=1000, small_file_limit=600, record_size=10)
    small = {"p": [_bf("p", "big-0", 900), _bf("p", "small-0", 500)]}
    buckets = plan_insert_buckets({"p": 250}, small, sizing)
    # small-0 takes (1000-500)/10 = 50; big-0 is above the small-file limit; 200 left -> 100 + 100.
    assert [(b.file_id, b.records) for b in buckets][0] == ("small-0", 50)
    assert [b.records for b in buckets[1:]] == [100, 100]
    assert all(b.small_file is None for b in buckets[1:])


def test_merge_on_read_offers_only_the_candidates_limit_smallest_small_files():
    """SparkUpsertDeltaCommitPartitioner: the smallest base-file-only slices below the limit, at most
    hoodie.merge.small.file.group.candidates.limit of them per partition; the rest of the inserts start new groups."""
    small = {"p": [_bf("p", "s-700", 700), _bf("p", "s-500", 500), _bf("p", "s-600", 600), _bf("p", "big", 950)],
             "q": [_bf("q", "q-800", 800)]}
    every = plan_insert_buckets({"p": 100, "q": 5}, small, SizingConfig(1000, 900, 10))  # copy-on-write: all
    assert [(b.file_id, b.records) for b in every if b.small_file] == [("s-500", 50), ("s-600", 40), ("s-700", 10),
                                                                         ("q-800", 5)]
    one = plan_insert_buckets({"p": 100, "q": 5}, small, SizingConfig(1000, 900, 10, small_file_candidates=1))
    assert [(b.file_id, b.records) for b in one if b.small_file] == [("s-500", 50), ("q-800", 5)]
    assert [(b.partition_path, b.records) for b in one if not b.small_file] == [("p", 50)]
    two = plan_insert_buckets({"p": 100}, small, SizingConfig(1000, 900, 10, small_file_candidates=2))
    assert [(b.file_id, b.records) for b in two if b.small_file] == [("s-500", 50), ("s-600", 40)]
    assert sum(b.records for b in two) == 100
    none = plan_insert_buckets({"p": 100}, small, SizingConfig(1000, 900, 10, small_file_candidates=0))
    assert not any(b.small_file for b in none) and sum(b.records for b in none) == 100


def test_small_file_limit_zero_forces_new_groups():
    sizing = SizingConfig(max_file_size=1000, small_file_limit=0, record_size=10)
    buckets = plan_insert_buckets({"p": 30}, {"p": [_bf("p", "small-0", 10)]}, sizing)
    assert len(buckets) == 1 and buckets[0].file_id != "small-0" and buckets[0].records == 30


def test_hash_ranges_cover_the_space_per_partition_in_proportion():
    sizing = SizingConfig(max_file_size=1000, small_file_limit=0, record_size=10)
    buckets = plan_insert_buckets({"a": 150, "b": 10}, {}, sizing)
    ranges = hash_ranges(buckets)
    for partition in ("a", "b"):
        mine = sorted((lo, hi) for p, _, lo, hi in ranges if p == partition)
        assert mine[0][0] == 0 and mine[-1][1] == HASH_SPACE
        assert all(a[1] == b[0] for a, b in zip(mine, mine[1:]))
    a_sizes = [hi - lo for p, _, lo, hi in ranges if p == "a"]
    assert abs(a_sizes[0] / HASH_SPACE - 100 / 150) < 0.01


def test_new_files_leave_room_for_the_bloom_filter_as_it_grows():
    # 10 bytes a record; the filter takes 300 bytes up to 50 records, then 600.
    steps = ((50, 300), (None, 600))
    assert SizingConfig(1000, 0, 10, file_overhead=steps).records_per_new_file == 50  # 50*10 + 300 <= 1000
    assert SizingConfig(1000, 0, 10).records_per_new_file == 100  # a measured average includes the filter
    assert SizingConfig(2000, 0, 10, file_overhead=steps).records_per_new_file == 140  # 140*10 + 600
    # A filter larger than the target cannot be met: the records alone are sized to it.
    assert SizingConfig(250, 0, 10, file_overhead=steps).records_per_new_file == 25


def test_average_record_size_needs_a_representative_commit():
    from types import SimpleNamespace

    from hoodpy.write.bucket_assignment import average_record_size

    def stat(size, n, log=False):
        return SimpleNamespace(total_write_bytes=size, num_writes=n, is_log_write=log)

    # "3" is a deltacommit whose log files are large: they do not count, and alone they are too little.
    commits = {"1": [stat(5000, 100)], "2": [stat(100, 10)], "3": [stat(200, 10), stat(90000, 10, log=True)]}
    timeline = SimpleNamespace(completed_commits=lambda: ["1", "2", "3"],
                               commit_metadata=lambda i: SimpleNamespace(write_stats=commits[i]))
    assert average_record_size(timeline, small_file_limit=1000, threshold=1.0) == 50  # "2" wrote too little
    assert average_record_size(timeline, small_file_limit=10000, threshold=1.0) is None
