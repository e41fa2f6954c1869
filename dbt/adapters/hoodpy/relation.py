"""Relations of ``type: hoodpy``: Spark relations that know whether they are hoodpy tables."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from dbt.adapters.spark.relation import SparkRelation

from sql_ext.catalog import BASE_PATH_PROPERTY


@dataclass(frozen=True, eq=False, repr=False)
class HoodpyRelation(SparkRelation):
    # A catalog table whose TBLPROPERTIES hold hoodie.base.path (what hoodpy's SQL layer registers).
    is_hoodpy: Optional[bool] = None

    @staticmethod
    def information_is_hoodpy(information: str) -> bool:
        return f"{BASE_PATH_PROPERTY}=" in (information or "")
