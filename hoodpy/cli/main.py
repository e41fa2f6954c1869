"""The ``hoodpy`` command line: parse, open the table, run the command, print; errors become one line on
stderr and an exit code (2: usage, or the path is not a table hoodpy reads; 1: any other hoodpy error)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from hoodpy.cli import layout
from hoodpy.cli.commands import COMMANDS, Command
from hoodpy.cli.output import emit
from hoodpy.cli.table import open_table
from hoodpy.errors import HoodieError, TableNotFoundError, UnsupportedStorageError, UnsupportedTableVersionError

EXIT_ERROR, EXIT_USAGE = 1, 2
_NOT_A_TABLE = (TableNotFoundError, UnsupportedTableVersionError, UnsupportedStorageError)
_LAYOUT = Command("layout", "draw each file's min/max of a column before and after clustering (PNG, matplotlib)",
                  layout.configure, layout.run)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="hoodpy",
        description="Inspect a Hudi copy-on-write table (table version 6) without Spark: commits, timeline, "
                    "files, statistics, pending plans, column layout.")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for command in (*COMMANDS, _LAYOUT):
        p = commands.add_parser(command.name, help=command.help, description=command.help)
        p.add_argument("path", help="table base path (local, file://, s3://, gs://, abfs://, hdfs://)")
        p.add_argument("--json", action="store_true", help="print the rows as JSON instead of tables")
        command.configure(p)
        p.set_defaults(run=command.run)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        results = args.run(open_table(args.path), args)
        emit(results, as_json=args.json)
    except _NOT_A_TABLE as e:
        print(f"hoodpy {args.command}: error: {e}", file=sys.stderr)
        return EXIT_USAGE
    except HoodieError as e:
        print(f"hoodpy {args.command}: error: {e}", file=sys.stderr)
        return EXIT_ERROR
    except BrokenPipeError:  # `hoodpy ... | head` closed the pipe: not an error
        return 0
    return 0
