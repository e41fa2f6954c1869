"""The snapshot cache's table state: reused while ``.hoodie/`` is unchanged, rebuilt after any change there
(no Spark: state() only lists and parses)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from hoodpy.read.cache import SnapshotCache
from hoodpy.storage import Storage


@dataclass
class Table:
    base_path: str

    @property
    def storage(self) -> Storage:
        return Storage(self.base_path)

    @property
    def properties(self) -> dict[str, str]:
        return {}  # table version 6: the timeline is .hoodie/


def test_state_is_reused_until_the_timeline_folder_changes(tmp_path: Path):
    hoodie = tmp_path / ".hoodie"
    hoodie.mkdir()
    (hoodie / "hoodie.properties").write_text("hoodie.table.name=t\n")
    (hoodie / "20240101000000000.commit").write_text("{}")
    table, cache = Table(str(tmp_path)), SnapshotCache()
    first = cache.state(table)
    assert cache.state(table) is first
    assert [i.timestamp for i in first.timeline.completed_commits()] == ["20240101000000000"]

    (hoodie / "20240102000000000.commit.requested").write_text("")   # another writer starts
    second = cache.state(table)
    assert second is not first and cache.state(table) is second
    (hoodie / "hoodie.properties").write_text("hoodie.table.name=t\nhoodie.x=1\n")  # rewritten in place
    assert cache.state(table) is not second


def test_the_cache_is_bounded(tmp_path: Path):
    cache = SnapshotCache(max_tables=1)
    tables = []
    for name in ("a", "b"):
        (tmp_path / name / ".hoodie").mkdir(parents=True)
        tables.append(Table(str(tmp_path / name)))
    a = cache.state(tables[0])
    cache.state(tables[1])
    assert cache.state(tables[0]) is not a  # evicted by b, rebuilt
