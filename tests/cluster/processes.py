"""Child processes for the beyond-one-machine tests: a Spark Connect server and a standalone cluster
(master + workers), all on 127.0.0.1 on free ports, started with pyspark's own launch scripts and always
stopped (process group killed) when the ``with`` block ends."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pyspark

SPARK_HOME = Path(pyspark.__file__).parent
CONNECT_SERVER = "org.apache.spark.sql.connect.service.SparkConnectServer"
# Short-lived test JVMs on a small machine: the C1 compiler only and one GC thread start them faster.
QUICK_JVM = "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def spark_env(**extra: str) -> dict[str, str]:
    env = {**os.environ, "SPARK_HOME": str(SPARK_HOME), "PYSPARK_PYTHON": sys.executable,
           "PYSPARK_DRIVER_PYTHON": sys.executable, "SPARK_LOCAL_IP": "127.0.0.1",
           "SPARK_LOCAL_HOSTNAME": "127.0.0.1", "SPARK_NO_DAEMONIZE": "1"}
    env.update(extra)
    return env


def _wait_for_port(port: int, proc: subprocess.Popen, log: Path, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"process exited with {proc.returncode}: {log.read_text()[-3000:]}")
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=1):
            return
        time.sleep(0.5)
    raise TimeoutError(f"nothing listens on 127.0.0.1:{port} after {timeout} s: {log.read_text()[-3000:]}")


def _stop(procs: list[subprocess.Popen]) -> None:
    for p in procs:
        if p.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(p.pid, signal.SIGTERM)
    for p in procs:
        try:
            p.wait(timeout=30)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(p.pid, signal.SIGKILL)
            p.wait(timeout=30)


def _start(cmd: list[str], log: Path, env: dict[str, str]) -> subprocess.Popen:
    with open(log, "w") as out:
        # A new session: stopping kills the JVM with whatever it started (Python workers, executors).
        return subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, env=env, start_new_session=True)


@contextlib.contextmanager
def connect_server(work: Path, *, timeout: float = 600) -> Iterator[str]:
    """A Spark Connect server (local[2]) in a child process; yields its ``sc://`` URL."""
    port = free_port()
    log = work / "connect-server.log"
    cmd = [str(SPARK_HOME / "bin" / "spark-submit"), "--class", CONNECT_SERVER, "--master", "local[2]",
           "--conf", f"spark.connect.grpc.binding.port={port}",
           "--conf", "spark.connect.grpc.binding.address=127.0.0.1",
           "--conf", "spark.ui.enabled=false", "--conf", "spark.sql.shuffle.partitions=2",
           "--conf", "spark.sql.session.timeZone=UTC", "--conf", f"spark.sql.warehouse.dir={work / 'warehouse'}",
           "--conf", f"spark.driver.extraJavaOptions=-Dderby.system.home={work / 'derby'}"]
    proc = _start(cmd, log, spark_env())
    try:
        _wait_for_port(port, proc, log, timeout)
        yield f"sc://127.0.0.1:{port}"
    finally:
        _stop([proc])


@contextlib.contextmanager
def standalone_cluster(work: Path, *, workers: int = 2, cores: int = 1, memory: str = "512m",
                       timeout: float = 600) -> Iterator[str]:
    """A standalone master and ``workers`` workers on 127.0.0.1; yields the ``spark://`` master URL."""
    port, ui = free_port(), free_port()
    env = spark_env(SPARK_WORKER_DIR=str(work / "worker-dirs"), SPARK_LOG_DIR=str(work / "logs"),
                    SPARK_DAEMON_JAVA_OPTS=QUICK_JVM)
    procs: list[subprocess.Popen] = []
    spark_class = str(SPARK_HOME / "bin" / "spark-class")
    try:
        log = work / "master.log"
        procs.append(_start([spark_class, "org.apache.spark.deploy.master.Master", "--host", "127.0.0.1",
                             "--port", str(port), "--webui-port", str(ui)], log, env))
        _wait_for_port(port, procs[0], log, timeout)
        url = f"spark://127.0.0.1:{port}"
        # Workers start side by side (their JVM starts dominate), then each must listen.
        started = []
        for i in range(workers):
            wport, wui = free_port(), free_port()
            wlog = work / f"worker-{i}.log"
            procs.append(_start([spark_class, "org.apache.spark.deploy.worker.Worker", "--host", "127.0.0.1",
                                 "--port", str(wport), "--webui-port", str(wui), "--cores", str(cores),
                                 "--memory", memory, "--work-dir", str(work / f"worker-{i}"), url], wlog, env))
            started.append((wport, procs[-1], wlog))
        for wport, proc, wlog in started:
            _wait_for_port(wport, proc, wlog, timeout)
        yield url
    finally:
        _stop(procs)
