"""Imports point down: every module of the engine (hoodpy), the Spark SQL layer (sql_ext) and the dbt adapter
imports only modules of its own layer or of layers below it.

Imports are read with ``ast``, at module level and inside functions (a function-local import that would point
up only hides a circle); blocks under ``if TYPE_CHECKING:`` are skipped, since they never run.
"""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SOURCE_ROOTS = ("hoodpy", "sql_ext", "dbt/adapters/hoodpy")

# Bottom first. Each layer is a group of module prefixes (a prefix covers its submodules); a module belongs
# to the layer of its longest matching prefix, so a module can sit apart from its package.
LAYERS: list[tuple[str, tuple[str, ...]]] = [
    # The exception types every layer raises, and Arrow's memory pool settings for the process.
    ("errors", ("hoodpy.errors", "hoodpy.arrow_pool")),
    # Typed hoodie.* options and hoodie.properties.
    ("config", ("hoodpy.config",)),
    # File systems and paths under a table's base URI (file system options come from config).
    ("storage", ("hoodpy.storage",)),
    # Hudi's binary file formats that need no table: the HFile (metadata-table base files and log blocks).
    ("file formats", ("hoodpy.hfile",)),
    # What a row is, with no I/O: the meta field names, the Avro / Arrow schema, key generation, and the
    # Arrow row helpers (align, meta columns, write stats) that file scans, merges and clustering share.
    ("rows", ("hoodpy.meta_fields", "hoodpy.schema", "hoodpy.keygen", "hoodpy.arrow_rows")),
    # Instants, the active timeline and the metadata its files hold.
    ("timeline", ("hoodpy.timeline",)),
    # Base file names, file groups, log files.
    ("file groups", ("hoodpy.file_group",)),
    # The metadata table read: its files partition merged into the data table's file listing (HFile base file
    # plus log blocks, as of the data timeline). Below the view, which lists through it.
    ("metadata table reads", ("hoodpy.metadata_table",)),
    # The file-system view: a timeline plus a listing (storage's, or the metadata table's).
    ("file-system view", ("hoodpy.file_group.fs_view",)),
    # Base files into a Spark DataFrame: the scan that the SIMPLE index, reads, writes and clustering use;
    # merge-on-read file slices (base rows merged with log records) beside it.
    ("file scan", ("hoodpy.read.file_scan", "hoodpy.read.slice_merge", "hoodpy.read.slice_parts",
                   "hoodpy.read.slice_scan")),
    # Locating record keys in base files: footer bloom filters and key ranges, the BLOOM and SIMPLE indexes.
    ("index", ("hoodpy.index",)),
    # Snapshot, time-travel and incremental reads: filters, partition / key-range / column-stats pruning.
    ("read", ("hoodpy.read",)),
    # Keeping the metadata table in step: building it, a deltacommit per data instant completed, compaction.
    # Above the index (its base files carry bloom filters), below the transaction (rollback completes through it).
    ("metadata table writes", ("hoodpy.metadata_table.writer", "hoodpy.metadata_table.changes",
                               "hoodpy.metadata_table.record_index_writer", "hoodpy.metadata_table.cleaner")),
    # Locks, heartbeats, conflict detection and the write transaction; rollback sits here because the write
    # transaction rolls back failed writes before each write (its procedures and table API are above), and
    # with it the table-service contract (ServiceContext, TableService) that rollback and every service share.
    ("transaction", ("hoodpy.transaction", "hoodpy.services.rollback", "hoodpy.services.table_service")),
    # The write path: incoming records, index tagging, file sizing, merge, bulk insert, commit.
    ("write", ("hoodpy.write",)),
    # Table services that plan and run on top of writes: clustering, cleaning, savepoints, archival.
    ("services", ("hoodpy.services",)),
    # Read-only views of a table for people: the rows behind the show_* / stats procedures and the command
    # line (commits, timeline, file slices, pending plans, per-file column ranges). No Spark.
    ("inspect", ("hoodpy.inspect",)),
    # The facade over all of the engine: HoodieTable, the package itself (it exports HoodieTable), Spark
    # worker setup, and the SQL layer's snapshot cache (it plans through HoodieTable's schemas and the
    # cleaner's retention rule). A new hoodpy module no prefix above names lands here.
    ("facade", ("hoodpy", "hoodpy.table", "hoodpy.spark_worker", "hoodpy.read.cache")),
    # The command line (``hoodpy ...``, ``python -m hoodpy``): inspect's rows printed or drawn, Spark-free.
    ("cli", ("hoodpy.cli", "hoodpy.__main__")),
    # The Spark SQL layer: enable(spark), the catalog, DDL / DML, CALL procedures.
    ("sql", ("sql_ext",)),
    # The dbt adapter, on top of the engine and the SQL layer.
    ("dbt", ("dbt.adapters.hoodpy",)),
]


def layer_of(module: str) -> int | None:
    """Index in LAYERS of the longest prefix naming ``module``; None for modules outside the project."""
    best, best_len = None, -1
    for index, (_, prefixes) in enumerate(LAYERS):
        for prefix in prefixes:
            if (module == prefix or module.startswith(prefix + ".")) and len(prefix) > best_len:
                best, best_len = index, len(prefix)
    return best


def module_name(path: Path) -> str:
    parts = list(path.relative_to(REPO).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def project_modules() -> dict[str, Path]:
    return {module_name(p): p for root in SOURCE_ROOTS for p in sorted((REPO / root).rglob("*.py"))}


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _import_nodes(node: ast.AST) -> Iterator[ast.Import | ast.ImportFrom]:
    """Every import statement that can run: module level and nested, minus ``if TYPE_CHECKING:`` bodies."""
    if isinstance(node, (ast.Import, ast.ImportFrom)):
        yield node
    elif isinstance(node, ast.If) and _is_type_checking(node.test):
        for child in node.orelse:
            yield from _import_nodes(child)
        return
    for child in ast.iter_child_nodes(node):
        yield from _import_nodes(child)


def imported_modules(module: str, source: str, *, is_package: bool, known: set[str],
                     ) -> Iterator[tuple[int, str]]:
    """(line, imported module) of each import in ``source``; ``from pkg import name`` counts as importing
    ``pkg.name`` when that is a module in ``known``, else ``pkg``."""
    for node in _import_nodes(ast.parse(source)):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name
            continue
        if node.level:
            package = module.split(".") if is_package else module.split(".")[:-1]
            base = ".".join(package[:len(package) - node.level + 1] + ([node.module] if node.module else []))
        else:
            base = node.module or ""
        for alias in node.names:
            candidate = f"{base}.{alias.name}"
            yield node.lineno, candidate if candidate in known else base


def upward_imports(module: str, source: str, *, is_package: bool = False, known: set[str] = frozenset(),
                   ) -> list[str]:
    """One message per import of ``source`` (the text of ``module``) that points to a higher layer."""
    own = layer_of(module)
    problems = []
    for line, target in dict.fromkeys(imported_modules(module, source, is_package=is_package, known=known)):
        theirs = layer_of(target)
        if own is not None and theirs is not None and theirs > own:
            problems.append(f"{module}:{line} imports {target}, of layer {LAYERS[theirs][0]!r} above its own "
                            f"layer {LAYERS[own][0]!r}")
    return problems


def test_every_import_points_down():
    modules = project_modules()
    known = set(modules)
    problems = [problem for name, path in modules.items()
                for problem in upward_imports(name, path.read_text(), is_package=path.name == "__init__.py",
                                              known=known)]
    assert not problems, "imports of higher layers:\n" + "\n".join(problems)


def import_graph(modules: dict[str, Path]) -> dict[str, set[str]]:
    """module -> the project modules it imports (a ``pkg.name`` import of a non-module counts as ``pkg``)."""
    known = set(modules)
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        graph[name] = set()
        for _, target in imported_modules(name, path.read_text(), is_package=path.name == "__init__.py",
                                          known=known):
            while target and target not in known:
                target = target.rpartition(".")[0]
            if target and target != name:
                graph[name].add(target)
    return graph


def import_circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected groups of more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    circles: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                group.append(w)
                if w == v:
                    break
            if len(group) > 1:
                circles.append(sorted(group))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return circles


def test_no_import_circles():
    # Also within a layer: a circle hidden by a function-local import is still a circle.
    circles = import_circles(import_graph(project_modules()))
    assert not circles, "modules that import each other (directly or round a loop):\n" + "\n".join(
        " -> ".join(c) for c in circles)


def test_a_circle_is_found():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": set()}
    assert import_circles(graph) == [["a", "b", "c"]]
    assert import_circles({"a": {"b"}, "b": set()}) == []


def test_the_scan_sees_every_layer():
    modules = project_modules()
    assert {"hoodpy.table", "hoodpy.write.writer", "sql_ext.session", "dbt.adapters.hoodpy.impl"} <= set(modules)
    assert all(layer_of(name) is not None for name in modules)
    # Every prefix names an existing module or package: a renamed module cannot leave a stale layer behind.
    for _, prefixes in LAYERS:
        for prefix in prefixes:
            assert any(name == prefix or name.startswith(prefix + ".") for name in modules), prefix


def test_an_upward_import_is_reported_with_module_line_and_target():
    source = (
        "from typing import TYPE_CHECKING\n"
        "from hoodpy.config import HoodieConfig\n"          # down: fine
        "from . import errors\n"                            # hoodpy.errors, down: fine
        "if TYPE_CHECKING:\n"
        "    from hoodpy.table import HoodieTable\n"        # annotations only: never runs
        "def open_table(path):\n"
        "    from hoodpy.table import HoodieTable\n"        # function-local, up: reported
        "    return HoodieTable\n"
        "import sql_ext.catalog\n"                          # module level, up: reported
    )
    assert upward_imports("hoodpy.storage", source, known={"hoodpy.errors"}) == [
        "hoodpy.storage:7 imports hoodpy.table, of layer 'facade' above its own layer 'storage'",
        "hoodpy.storage:9 imports sql_ext.catalog, of layer 'sql' above its own layer 'storage'",
    ]
    # Within one layer either direction is allowed; a module apart from its package takes its own layer.
    assert upward_imports("hoodpy.index.simple", "from hoodpy.index.base import tag\n") == []
    assert upward_imports("hoodpy.index.simple", "from hoodpy.read.file_scan import read_parquet_files\n") == []
    assert upward_imports("hoodpy.read.file_scan", "from hoodpy.index.base import tag\n") != []


def test_importing_the_engine_loads_neither_the_sql_layer_nor_dbt():
    code = ("import sys, hoodpy, hoodpy.table\n"
            "print(sorted(m for m in sys.modules if m.split('.')[0] == 'sql_ext' or m.startswith('dbt.')"
            " or m == 'dbt'))")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")])}
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO, env=env, capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == "[]", out.stdout
