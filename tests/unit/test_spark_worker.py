"""hoodpy's PySpark daemon drops Spark's jar / zip archives from the workers' path only when pyspark and py4j
import without them."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

from hoodpy.spark_worker import DAEMON_MODULE_CONF, drop_archives_from_path, spark_conf


def test_spark_conf_names_this_daemon_module():
    assert spark_conf() == {DAEMON_MODULE_CONF: "hoodpy.spark_worker"}


def test_archives_are_dropped_when_pyspark_imports_without_them(tmp_path, monkeypatch):
    jar = tmp_path / "spark-core_2.13-4.0.5.jar"
    with zipfile.ZipFile(jar, "w") as z:
        z.writestr("org/apache/spark/Dummy.class", b"\xca\xfe")
    stdlib_zip = f"{sys.prefix}/lib/python{sys.version_info[0]}{sys.version_info[1]}.zip"
    monkeypatch.setattr(sys, "path", [str(jar), stdlib_zip, *sys.path])
    assert drop_archives_from_path() == [str(jar)]
    assert str(jar) not in sys.path and str(jar) not in sys.path_importer_cache
    assert stdlib_zip in sys.path  # the standard library's own zip stays


def test_path_is_kept_when_pyspark_lives_only_in_the_archive(tmp_path):
    # A fresh interpreter whose only pyspark / py4j are inside a zip (as on a worker without pyspark installed).
    archive = tmp_path / "pyspark.zip"
    with zipfile.ZipFile(archive, "w") as z:
        z.writestr("pyspark/__init__.py", "")
        z.writestr("py4j/__init__.py", "")
    code = ("import sys; sys.path[:] = [p for p in sys.path if 'site-packages' not in p]; "
            f"sys.path.insert(0, {str(archive)!r}); "
            "from hoodpy.spark_worker import drop_archives_from_path; "
            f"print(drop_archives_from_path(), {str(archive)!r} in sys.path)")
    repo = str(Path(__file__).resolve().parents[2])
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=repo, check=True)
    assert out.stdout.strip() == "[] True", out.stderr
