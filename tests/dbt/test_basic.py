"""dbt's shared adapter suites (dbt-tests-adapter) against ``type: hoodpy``.

Models without a unique_key are plain Spark (parquet) tables unless they set file_format='hoodpy'; where a suite's
models have a natural key, the subclasses below set ``+unique_key`` so that they run on hoodpy tables.
"""

from __future__ import annotations

import pytest
from dbt.tests.adapter.basic import expected_catalog
from dbt.tests.adapter.basic.test_adapter_methods import BaseAdapterMethod
from dbt.tests.adapter.basic.test_base import BaseSimpleMaterializations
from dbt.tests.adapter.basic.test_docs_generate import BaseDocsGenerate
from dbt.tests.adapter.basic.test_empty import BaseEmpty
from dbt.tests.adapter.basic.test_ephemeral import BaseEphemeral
from dbt.tests.adapter.basic.test_generic_tests import BaseGenericTests
from dbt.tests.adapter.basic.test_incremental import BaseIncremental, BaseIncrementalNotSchemaChange
from dbt.tests.adapter.basic.test_singular_tests import BaseSingularTests
from dbt.tests.adapter.basic.test_validate_connection import BaseValidateConnection


class TestSimpleMaterializationsHoodpy(BaseSimpleMaterializations):
    pass


class TestEmptyHoodpy(BaseEmpty):
    pass


class TestEphemeralHoodpy(BaseEphemeral):
    pass


class TestIncrementalHoodpy(BaseIncremental):
    pass


class TestIncrementalNotSchemaChangeHoodpy(BaseIncrementalNotSchemaChange):
    pass


class TestGenericTestsHoodpy(BaseGenericTests):
    pass


class TestSingularTestsHoodpy(BaseSingularTests):
    pass


class TestAdapterMethodHoodpy(BaseAdapterMethod):
    pass


class TestValidateConnectionHoodpy(BaseValidateConnection):
    pass


class TestDocsGenerateHoodpy(BaseDocsGenerate):
    @pytest.fixture(scope="class")
    def expected_catalog(self, project):
        # Spark's type names (as its schema tree prints them: long, string) and relation types; the session
        # catalog of the test session records no owner.
        return expected_catalog.base_expected_catalog(
            project, role=None, id_type="long", text_type="string", time_type="timestamp",
            view_type="view", table_type="table", model_stats=expected_catalog.no_stats(),
        )
