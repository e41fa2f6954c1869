"""The suite's own layout: pytest imports test modules by basename (rootdir-relative, no packages), so two
test files with one name anywhere under tests/ stop the whole run at collection, while a run of one folder
does not notice. This keeps that failure in the fast tier."""

from collections import defaultdict
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]


def test_test_module_basenames_are_unique():
    where = defaultdict(list)
    for path in TESTS.rglob("test_*.py"):
        where[path.name].append(str(path.relative_to(TESTS)))
    assert {name: paths for name, paths in where.items() if len(paths) > 1} == {}
