"""dbt's incremental and snapshot suites against ``type: hoodpy``: keyed models are hoodpy tables."""

from __future__ import annotations

import pytest
from dbt.artifacts.schemas.results import RunStatus
from dbt.tests.adapter.basic.test_snapshot_check_cols import BaseSnapshotCheckCols
from dbt.tests.adapter.basic.test_snapshot_timestamp import BaseSnapshotTimestamp
from dbt.tests.adapter.incremental.test_incremental_merge_exclude_columns import BaseMergeExcludeColumns
from dbt.tests.adapter.incremental.test_incremental_microbatch import BaseMicrobatch
from dbt.tests.adapter.incremental.test_incremental_on_schema_change import BaseIncrementalOnSchemaChange
from dbt.tests.adapter.incremental.test_incremental_predicates import BaseIncrementalPredicates
from dbt.tests.adapter.incremental.test_incremental_unique_id import BaseIncrementalUniqueKey
from dbt.tests.util import run_dbt


def _first_build_fails_naming_the_column(model: str) -> None:
    run_dbt(["seed", "--select", "seed", "--full-refresh"])
    result = run_dbt(["run", "--select", model, "--full-refresh"], expect_pass=False).results[0]
    assert result.status == RunStatus.Error
    assert "thisisnotacolumn" in result.message.lower()
    assert "unique_key" in result.message and model in result.message


class TestIncrementalUniqueKeyHoodpy(BaseIncrementalUniqueKey):
    # dbt's two bad-key tests expect the first build of a model keyed by a missing column to succeed
    # (warehouses apply unique_key only when merging) and the second to fail. A hoodpy table is keyed from
    # its first write, so the first build already fails, naming the model and the column.
    def test__bad_unique_key(self, project):
        _first_build_fails_naming_the_column("not_found_unique_key")

    def test__bad_unique_key_list(self, project):
        _first_build_fails_naming_the_column("not_found_unique_key_list")


class TestIncrementalOnSchemaChangeHoodpy(BaseIncrementalOnSchemaChange):
    pass


class TestIncrementalPredicatesDeleteInsertHoodpy(BaseIncrementalPredicates):
    pass


class TestMergeExcludeColumnsHoodpy(BaseMergeExcludeColumns):
    pass


class TestMicrobatchHoodpy(BaseMicrobatch):
    pass


# The snapshot suites UPDATE their seeds, which Spark's parquet tables cannot do (dbt-spark runs them with
# delta seeds): here the seeds are hoodpy tables.
HOODPY_SEEDS = {"seeds": {"+file_format": "hoodpy", "+unique_key": "id"}}


class TestSnapshotCheckColsHoodpy(BaseSnapshotCheckCols):
    @pytest.fixture(scope="class")
    def project_config_update(self):
        return {"name": "snapshot_strategy_check_cols", **HOODPY_SEEDS}


class TestSnapshotTimestampHoodpy(BaseSnapshotTimestamp):
    @pytest.fixture(scope="class")
    def project_config_update(self):
        return {"name": "snapshot_strategy_timestamp", **HOODPY_SEEDS}
