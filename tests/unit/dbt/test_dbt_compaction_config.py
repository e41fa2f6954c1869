"""dbt's compaction model config -> hoodie.compact* options, and the run_compaction CALL the macro emits."""

from __future__ import annotations

import pytest

from dbt.adapters.hoodpy.model_config import table_spec
from dbt.adapters.hoodpy.services import procedure_args
from hoodpy.errors import InvalidConfigError


def test_compaction_config_becomes_table_options():
    spec = table_spec("rides", {"unique_key": "id", "compaction": {"inline": True, "max_delta_commits": 5}})
    assert spec.compaction is not None and spec.compaction.inline
    assert spec.options == {"hoodie.compact.inline": "true", "hoodie.compact.inline.max.delta.commits": "5"}
    full = table_spec("rides", {"unique_key": "id", "compaction": {
        "inline": False, "max_delta_commits": 3, "max_delta_seconds": 60, "trigger_strategy": "num_or_time",
        "target_io": 1024, "logfile_size_threshold": 0}})
    assert full.options == {
        "hoodie.compact.inline": "false", "hoodie.compact.inline.trigger.strategy": "NUM_OR_TIME",
        "hoodie.compact.inline.max.delta.commits": "3", "hoodie.compact.inline.max.delta.seconds": "60",
        "hoodie.compaction.target.io": "1024", "hoodie.compaction.logfile.size.threshold": "0"}
    # inline defaults to true, as clustering's does.
    assert table_spec("m", {"unique_key": "id", "compaction": {}}).options == {"hoodie.compact.inline": "true"}


@pytest.mark.parametrize(("config", "key"), [
    ({"unique_key": "id", "compaction": {"every": 3}}, "compaction.every"),
    ({"unique_key": "id", "compaction": {"max_delta_commits": -1}}, "compaction.max_delta_commits"),
    ({"unique_key": "id", "compaction": {"max_delta_commits": 0}}, "hoodie.compact.inline.max.delta.commits"),
    ({"unique_key": "id", "compaction": {"trigger_strategy": "SOMETIMES"}}, "compaction.trigger_strategy"),
    ({"unique_key": "id", "compaction": {"inline": "maybe"}}, "compaction.inline"),
    ({"unique_key": "id", "compaction": "inline"}, "compaction"),
    ({"compaction": {"inline": True}}, "compaction"),  # not a hoodpy table
])
def test_bad_compaction_config_names_model_and_key(config, key):
    with pytest.raises(InvalidConfigError) as info:
        table_spec("m", config)
    assert info.value.key == key and "'m'" in str(info.value)


def test_run_compaction_call_arguments():
    spec = table_spec("m", {"unique_key": "id", "compaction": {"target_io": 100},
                            "hoodie_options": {"hoodie.compaction.logfile.size.threshold": 10}})
    assert procedure_args(spec, "compaction", {}) == (
        "op => 'run', options => 'hoodie.compaction.logfile.size.threshold=10,hoodie.compaction.target.io=100'")
    assert procedure_args(spec, "compaction", {"op": "schedule", "options": {"hoodie.compaction.target.io": 5}}) == (
        "op => 'schedule', options => 'hoodie.compaction.logfile.size.threshold=10,hoodie.compaction.target.io=5'")
    assert procedure_args(table_spec("m", {"unique_key": "id"}), "compaction", {}) == "op => 'run'"
    with pytest.raises(InvalidConfigError, match="op"):
        procedure_args(spec, "compaction", {"op": "compact"})
    with pytest.raises(InvalidConfigError, match="order"):
        procedure_args(spec, "compaction", {"order": ["a"]})
