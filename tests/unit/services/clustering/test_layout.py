import datetime as dt
from decimal import Decimal
from itertools import product

import numpy as np
import pyarrow as pa
import pytest

from hoodpy.services.clustering.layout import (
    HILBERT,
    LINEAR,
    SAMPLE,
    ZORDER,
    LayoutSpec,
    assign_ranges,
    column_boundaries,
    direct_keys,
    hilbert_index,
    interleave_bits,
    order_indices,
    ordered_ranges,
    range_boundaries,
    range_members,
    sample_coordinates,
    sort_keys,
)


def _is_sorted_like(values, keys):
    """direct_keys must be non-decreasing along the values' natural order (nulls last)."""
    order = sorted(range(len(values)), key=lambda i: (values[i] is None, values[i] if values[i] is not None else 0))
    k = keys[order]
    return bool(np.all(k[:-1] <= k[1:]))


@pytest.mark.parametrize("values, typ", [
    ([5, -3, 0, None, -2**31, 2**31 - 1, 7], pa.int32()),
    ([5, -3, 0, None, -2**63, 2**63 - 1], pa.int64()),
    ([0, 255, 7, None], pa.uint8()),
    ([1.5, -0.0, 0.0, -1e300, 1e300, None, -2.5, float("inf"), float("-inf")], pa.float64()),
    ([1.5, -2.25, None, 0.1], pa.float32()),
    ([Decimal("1.10"), Decimal("-3.25"), None, Decimal("0.00")], pa.decimal128(10, 2)),
    ([dt.date(2024, 1, 2), dt.date(1960, 5, 1), None, dt.date(2024, 1, 1)], pa.date32()),
    ([dt.datetime(2024, 1, 2, 3), dt.datetime(1969, 12, 31, 23, 59), None], pa.timestamp("us", tz="UTC")),
    (["b", "a", "", None, "abcdefgh", "abcdefg", "ab", "é", "z" * 20], pa.string()),
    ([b"\x00\x01", b"\x00", None, b"\xff"], pa.binary()),
    ([True, False, None], pa.bool_()),
])
def test_direct_keys_preserve_order_and_put_nulls_last(values, typ):
    keys = direct_keys(pa.array(values, typ))
    assert keys.dtype == np.uint64
    if None in values:
        assert keys[values.index(None)] == np.uint64(2**64 - 1)
    if typ == pa.float64():
        values = [v if v is None else (0.0 if v == 0 else v) for v in values]
    assert _is_sorted_like(values, keys)


def test_direct_keys_of_strings_use_the_first_eight_bytes():
    keys = direct_keys(pa.array(["abcdefgh1", "abcdefgh2", "abcdefg"]))
    assert keys[0] == keys[1] > keys[2]
    assert keys[2] == int.from_bytes(b"abcdefg\x00", "big")
    sliced = pa.array(["zz", "ab", "cd"]).slice(1)
    assert list(direct_keys(sliced)) == [int.from_bytes(b"ab" + b"\x00" * 6, "big"),
                                         int.from_bytes(b"cd" + b"\x00" * 6, "big")]


def test_direct_keys_reject_nested_types():
    with pytest.raises(TypeError):
        direct_keys(pa.array([[1], [2]]))


def test_interleave_bits_is_z_order():
    x = np.array([0b11, 0b00, 0b01, 0b10], dtype=np.uint64)
    y = np.array([0b00, 0b11, 0b01, 0b10], dtype=np.uint64)
    z = interleave_bits([x, y], 2)
    assert z.shape == (4, 1)
    # x1 y1 x0 y0, left-aligned in the 64-bit word
    assert [int(v) >> 60 for v in z[:, 0]] == [0b1010, 0b0101, 0b0011, 0b1100]


def _reference_interleave(coords, bits, row):
    text = "".join(format(int(coords[d][row]), f"0{bits}b")[i] for i in range(bits) for d in range(len(coords)))
    words = -(-len(text) // 64)
    text = text.ljust(64 * words, "0")
    return [int(text[64 * w: 64 * (w + 1)], 2) for w in range(words)]


@pytest.mark.parametrize("n, bits", [(2, 64), (3, 64), (5, 32), (9, 8), (2, 7)])
def test_interleave_bits_matches_a_bit_by_bit_reference(n, bits):
    rng = np.random.default_rng(n * bits)
    coords = [rng.integers(0, 2 ** min(bits, 63), 40, dtype=np.uint64) for _ in range(n)]
    if bits == 64:
        coords = [c * np.uint64(2) + np.uint64(1) for c in coords]  # use the top bit too
    out = interleave_bits(coords, bits)
    for row in range(40):
        assert [int(v) for v in out[row]] == _reference_interleave(coords, bits, row)


def test_hilbert_index_visits_neighbours_in_turn():
    for bits, n in ((3, 2), (2, 3)):
        side = 1 << bits
        points = np.array(list(product(range(side), repeat=n)), dtype=np.uint64)
        index = hilbert_index([points[:, d] for d in range(n)], bits)
        assert index.shape[1] == 1
        order = np.argsort(index[:, 0], kind="stable")
        assert len(set(index[:, 0].tolist())) == side ** n  # a bijection
        path = points[order].astype(np.int64)
        steps = np.abs(np.diff(path, axis=0)).sum(axis=1)
        assert np.all(steps == 1)  # consecutive curve positions are adjacent cells
        assert tuple(path[0]) == (0,) * n


def test_hilbert_index_with_64_bit_coordinates_is_deterministic_and_ordered_per_quadrant():
    x = np.array([0, 2**63, 0, 2**64 - 1], dtype=np.uint64)
    y = np.array([0, 0, 2**63, 2**64 - 1], dtype=np.uint64)
    idx = hilbert_index([x, y], 64)
    assert idx.shape == (4, 2)
    assert int(idx[0, 0]) == 0 and int(idx[0, 1]) == 0
    assert len({tuple(map(int, r)) for r in idx}) == 4


def test_sample_coordinates_spread_every_column_over_its_own_range():
    small = np.arange(10, dtype=np.uint64)  # values differing only in their low bits
    huge = (np.arange(10, dtype=np.uint64) << np.uint64(40))
    for keys in (small, huge):
        bounds = column_boundaries(keys, 100)
        coords = sample_coordinates(keys, bounds)
        assert coords.max() >= np.uint64(2**31)  # uses the top bit
        assert np.all(np.diff(coords.astype(np.float64)) > 0)
    assert list(column_boundaries(np.array([3, 3, 3], dtype=np.uint64), 10)) == [3]


def test_direct_zorder_degenerates_on_mismatched_ranges_and_sample_does_not():
    rng = np.random.default_rng(0)
    n = 4096
    t = pa.table({"day": pa.array(rng.integers(0, 2**40, n), pa.int64()),  # epoch-ms-like
                  "part": pa.array(rng.integers(0, 1000, n), pa.int32())})

    def overlap_on_part(spec):
        keys = sort_keys(t, spec)
        order = order_indices(keys)
        files = np.array_split(order, 16)
        parts = t.column("part").to_numpy()
        # files whose [min, max] of `part` intersects part < 62 (about 1/16 of the range)
        return sum(int(parts[f].min() < 62) for f in files)

    direct = overlap_on_part(LayoutSpec(ZORDER, ("day", "part")))
    keys = [direct_keys(t.column(c)) for c in ("day", "part")]
    bounds = tuple(column_boundaries(k, 1000) for k in keys)
    sampled = overlap_on_part(LayoutSpec(ZORDER, ("day", "part"), SAMPLE, bounds))
    assert direct == 16
    assert sampled <= 6


def test_sort_keys_linear_and_curve_shapes():
    t = pa.table({"a": [2, 1, 2], "s": pa.array([{"x": 3}, {"x": 1}, {"x": 2}]), "k": ["k0", "k1", "k2"]})
    lin = sort_keys(t, LayoutSpec(LINEAR, ("a", "s.x"), tiebreak="k"))
    assert lin.column_names == ["__hoodpy_key_c0", "__hoodpy_key_c1", "__hoodpy_key_tiebreak"]
    assert order_indices(lin).tolist() == [1, 2, 0]
    single = LayoutSpec(HILBERT, ("a",))
    assert not single.uses_curve  # one column: a linear sort, as in Hudi
    curve = sort_keys(t, LayoutSpec(HILBERT, ("a", "s.x")))
    assert curve.schema.types == [pa.uint64(), pa.uint64()]


def test_range_boundaries_and_assign_ranges_cut_into_equal_contiguous_ranges():
    rng = np.random.default_rng(3)
    t = pa.table({"v": pa.array(rng.integers(0, 50, 1000)), "k": [f"k{i:04d}" for i in range(1000)]})
    spec = LayoutSpec(LINEAR, ("v",), tiebreak="k")
    keys = sort_keys(t, spec)
    bounds = range_boundaries(keys, 7)
    ranges = assign_ranges(keys, bounds)
    counts = np.bincount(ranges, minlength=7)
    assert counts.max() - counts.min() <= 1 and counts.sum() == 1000
    order = order_indices(keys)
    assert np.all(np.diff(ranges[order]) >= 0)  # ranges follow the sort order
    # the same cut applies to rows seen in any batch split
    again = np.concatenate([assign_ranges(sort_keys(t.slice(i, 100), spec), bounds) for i in range(0, 1000, 100)])
    assert np.array_equal(again, ranges)


def test_assign_ranges_with_curve_keys_and_nulls():
    t = pa.table({"x": pa.array([1, None, 3, 2]), "y": pa.array([None, 1, 2, 3]), "k": ["a", "b", "c", "d"]})
    spec = LayoutSpec(ZORDER, ("x", "y"), tiebreak="k")
    keys = sort_keys(t, spec)
    ranges = assign_ranges(keys, range_boundaries(keys, 2))
    assert sorted(np.bincount(ranges).tolist()) == [2, 2]
    assert assign_ranges(keys, range_boundaries(keys, 1)).tolist() == [0, 0, 0, 0]


def test_cell_aligned_cuts_keep_z_order_files_in_their_quadrants():
    rng = np.random.default_rng(5)
    n = 20000
    t = pa.table({"x": pa.array(rng.integers(0, 2**16, n)), "y": pa.array(rng.integers(0, 2**16, n)),
                  "k": [f"k{i:05d}" for i in range(n)]})
    spec = LayoutSpec(ZORDER, ("x", "y"), tiebreak="k")
    keys = sort_keys(t, spec)
    y = t.column("y").to_numpy()

    def boxes_hit(snap):
        ranges = assign_ranges(keys, range_boundaries(keys, 16, snap=snap))
        counts = np.bincount(ranges, minlength=16)
        hit = sum(int(y[ranges == r].min() < 2**12) for r in range(16))  # y in the lowest 1/16
        return hit, counts

    exact_hit, exact_counts = boxes_hit(0.0)
    snapped_hit, snapped_counts = boxes_hit(0.1)
    assert exact_counts.max() - exact_counts.min() <= 1
    assert snapped_hit == 4 < exact_hit  # one row of the 4 x 4 grid of quadrant cells
    assert snapped_counts.min() >= 0.85 * n / 16 and snapped_counts.max() <= 1.15 * n / 16
    linear = LayoutSpec(LINEAR, ("x",), tiebreak="k")
    lk = sort_keys(t, linear)
    assert range_boundaries(lk, 4, snap=0.1).equals(range_boundaries(lk, 4))  # snapping is for curves only


def test_direct_keys_map_dates_timestamps_and_decimals_as_hudis_direct_build():
    """SpaceCurveSortingHelper: Date/Timestamp.getTime() (epoch milliseconds), BigDecimal.longValue()."""
    sign = 1 << 63
    assert direct_keys(pa.array([dt.date(1970, 1, 2)], pa.date32()))[0] == np.uint64(86_400_000 ^ sign)
    stamp = pa.array([dt.datetime(1970, 1, 1, 0, 0, 1, 999)], pa.timestamp("us"))
    assert direct_keys(stamp)[0] == np.uint64(1000 ^ sign)
    assert direct_keys(pa.array([3], pa.timestamp("s")))[0] == np.uint64(3000 ^ sign)
    decimals = direct_keys(pa.array([Decimal("-1.75"), Decimal("2.99")], pa.decimal128(5, 2)))
    assert decimals.tolist() == [(-1 + 2**64) ^ sign, 2 ^ sign]


def test_the_default_build_method_prunes_both_sort_columns_where_direct_does_not():
    """Dates as epoch milliseconds next to part numbers: Hudi's DIRECT curve is a sort by date; SAMPLE (hoodpy's
    default) spreads both columns, so a 5% range on either one skips most of 16 files."""
    from hoodpy.config import HoodieConfig
    from hoodpy.config.clustering import ClusteringConfig

    assert HoodieConfig({}).get(ClusteringConfig.CURVE_BUILD_METHOD) == SAMPLE
    rng = np.random.default_rng(5)
    n = 32_000
    t = pa.table({"day": pa.array(rng.integers(8000, 10_500, n), pa.int32()).cast(pa.date32()),
                  "part": pa.array(rng.integers(1, 200_000, n), pa.int64())})

    def files_scanned(spec):
        files = np.array_split(order_indices(sort_keys(t, spec)), 16)
        out = {}
        for c in ("day", "part"):
            v = direct_keys(t.column(c)).astype(np.float64)
            lo, hi = v.min(), v.max()
            a = lo + 0.3 * (hi - lo)
            b = a + 0.05 * (hi - lo)
            out[c] = sum(int(v[f].max() >= a and v[f].min() < b) for f in files)
        return out

    direct = files_scanned(LayoutSpec(HILBERT, ("day", "part")))
    bounds = tuple(column_boundaries(direct_keys(t.column(c)), 1000) for c in ("day", "part"))
    sampled = files_scanned(LayoutSpec(HILBERT, ("day", "part"), SAMPLE, bounds))
    assert direct["part"] == 16 and direct["day"] <= 2
    assert sampled["day"] <= 6 and sampled["part"] <= 6, sampled


def _reference_ranges(keys, boundaries):
    """The rows' order and ranges by one sort of rows and boundaries together (the former ordered_ranges)."""
    from hoodpy.services.clustering.layout import _sorted_ranges

    return _sorted_ranges(keys, boundaries.cast(keys.schema))


def _tied_table(n: int, seed: int) -> pa.Table:
    """Few distinct sort values (many ties on the curve), repeated record keys, some nulls in ``z``."""
    rng = np.random.default_rng(seed)
    z = rng.integers(0, 6, n)
    return pa.table({"x": pa.array(rng.integers(0, 8, n), pa.int32()),
                     "y": pa.array(rng.integers(0, 5, n)).cast(pa.int32()).cast(pa.date32()),
                     "z": pa.array(np.where(z == 0, None, z).tolist(), pa.int64()),
                     "s": pa.array([f"s{v}" for v in rng.integers(0, 9, n)]),
                     "k": pa.array([f"k{v:03d}" for v in rng.integers(0, n // 3, n)])})


def _specs(t: pa.Table) -> list[LayoutSpec]:
    bounds = tuple(column_boundaries(direct_keys(t.column(c)), 3) for c in ("x", "y"))
    return [LayoutSpec(ZORDER, ("x", "y"), SAMPLE, bounds, "k"), LayoutSpec(HILBERT, ("x", "y"), tiebreak="k"),
            LayoutSpec(ZORDER, ("x", "y", "z"), tiebreak="k"), LayoutSpec(LINEAR, ("y", "x"), tiebreak="k"),
            LayoutSpec(LINEAR, ("z", "x"), tiebreak="k"), LayoutSpec(LINEAR, ("s", "x"), tiebreak="k"),
            LayoutSpec(LINEAR, ("x",))]


@pytest.mark.parametrize("seed", range(4))
def test_assign_ranges_and_ordered_ranges_match_one_sort_of_rows_and_boundaries(seed):
    """Ranges found without sorting the rows, and the order built range by range, are the one-sort result:
    curve words, dates and integers take the binary search (ties on the first column included), nulls and
    strings the sort; boundaries cut inside runs of equal keys, at snapped cell starts, or are fewer than
    the outputs."""
    t = _tied_table(600, seed)
    sample = t.take(pa.array(np.random.default_rng(seed).choice(600, 150, replace=False)))
    for spec in _specs(t):
        keys = sort_keys(t, spec)
        for cuts, snap in ((2, 0.0), (7, 0.0), (7, 0.3), (40, 0.0)):
            bounds = range_boundaries(sort_keys(sample, spec), cuts, snap=snap)
            order, ranges = _reference_ranges(keys, bounds)
            expected = np.empty(len(ranges), dtype=np.int64)
            expected[order] = ranges
            assert assign_ranges(keys, bounds).tolist() == expected.tolist(), (spec, cuts, snap)
            got_order, got_ranges = ordered_ranges(keys, bounds)
            assert got_order.tolist() == order.tolist() and got_ranges.tolist() == ranges.tolist(), (spec, cuts)
    # A boundary equal to rows on every key column: those rows start its range.
    keys = sort_keys(t, LayoutSpec(LINEAR, ("x",)))
    bounds = keys.take(pa.array([int(np.argmax(t.column("x").to_numpy() == 3))]))
    assert np.array_equal(assign_ranges(keys, bounds), (t.column("x").to_numpy() >= 3).astype(np.int64))


def test_range_members_bucket_rows_stably():
    ranges = np.array([2, 0, 2, 1, 0, 2, 4])
    members = range_members(ranges, 5)
    assert [m.tolist() for m in members] == [[1, 4], [3], [0, 2, 5], [], [6]]


@pytest.mark.parametrize("strategy", [ZORDER, HILBERT])
def test_curve_keys_computed_in_parallel_slices_equal_one_pass(strategy):
    from concurrent.futures import ThreadPoolExecutor

    rng = np.random.default_rng(9)
    n = 200_003
    t = pa.table({"x": pa.array(rng.integers(0, 10**6, n)), "y": pa.array(rng.integers(-50, 50, n), pa.int32()),
                  "k": pa.array(rng.integers(0, 10**9, n)).cast(pa.string())})
    bounds = tuple(column_boundaries(direct_keys(t.column(c)), 4096) for c in ("x", "y"))
    for spec in (LayoutSpec(strategy, ("x", "y"), SAMPLE, bounds, "k"), LayoutSpec(strategy, ("x", "y"), tiebreak="k")):
        with ThreadPoolExecutor(3) as pool:
            assert sort_keys(t, spec, pool, 3).equals(sort_keys(t, spec))
