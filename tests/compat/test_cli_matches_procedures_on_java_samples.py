"""The command line on the Java Hudi 0.14 samples prints what the SQL procedures return for them."""

from __future__ import annotations

import pytest

from cli_procedures import assert_cli_matches_procedures
from java_samples import unzip_sample
from sql_ext import disable, enable

pytestmark = [pytest.mark.compat, pytest.mark.spark]

# (sample, a completed commit to look at in detail)
SAMPLES = [
    ("v6_nonpartitioned", "20240418173551906"),
    ("v6_complexkeygen_hivestyle", "20240418173235694"),
    ("v6_simplekeygen_nonhivestyle_overwritetable", "20240707001303088"),  # a replacecommit
    ("v6_empty", None),
]


@pytest.fixture(scope="module")
def sql_spark(spark):
    enable(spark)
    yield spark
    disable(spark)


@pytest.mark.parametrize(("name", "instant"), SAMPLES, ids=[s for s, _ in SAMPLES])
def test_cli_matches_procedures_on_java_samples(sql_spark, capsys, tmp_path, name, instant):
    path = str(unzip_sample(name, tmp_path))
    compared = assert_cli_matches_procedures(sql_spark, capsys, path, instant)
    assert compared >= (10 if instant else 1)  # the empty table still has the stats ALL / Total rows
