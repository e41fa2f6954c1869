"""dbt adapter ``type: hoodpy``: dbt-spark's session method with every statement routed through hoodpy's
SQL layer, and hoodpy (Apache Hudi copy-on-write) tables as the storage of tables and incremental models."""

from dbt.adapters.base import AdapterPlugin

from dbt.adapters.hoodpy.connections import HoodpyConnectionManager  # noqa: F401
from dbt.adapters.hoodpy.credentials import HoodpyCredentials
from dbt.adapters.hoodpy.impl import HoodpyAdapter
from dbt.include import hoodpy

Plugin = AdapterPlugin(
    adapter=HoodpyAdapter,  # type: ignore[arg-type]
    credentials=HoodpyCredentials,
    include_path=hoodpy.PACKAGE_PATH,
    dependencies=["spark"],
)
