"""HFile (version 3), the file format of the metadata table's base files and of HFile log blocks, read and
written in Python as Hudi's own hudi-io reader and writer lay it out (no HBase, no JVM).

``[data block]* [meta block]* | [root data index] ([leaf / intermediate index]*) [meta index] [file info] |
trailer (4096 bytes)``; all integers big-endian.

Modules, one concept each:

- :mod:`~hoodpy.hfile.encoding`: protobuf varints and Hadoop vlongs;
- :mod:`~hoodpy.hfile.block`: block header, magics, GZ / NONE compression, checksum bytes;
- :mod:`~hoodpy.hfile.cell`: cells (HBase KeyValues) and their keys;
- :mod:`~hoodpy.hfile.index`: root, leaf and intermediate index entries;
- :mod:`~hoodpy.hfile.file_info`: the file info block and its keys;
- :mod:`~hoodpy.hfile.trailer`: the trailer;
- :mod:`~hoodpy.hfile.reader` / :mod:`~hoodpy.hfile.writer`: :class:`HFileReader`, :class:`HFileWriter`;
- :mod:`~hoodpy.hfile.records`: HFiles whose values are Avro records (metadata table files, log blocks).

Readers accept files of Hudi's native writer (1.x) and of HBase (Hudi 0.x): full or bare index keys, HBase's
shortened "fake" index keys, multi-level data indexes, CRC checksums (not verified, as Hudi does not).
"""

from hoodpy.hfile.block import Compression
from hoodpy.hfile.reader import HFileReader
from hoodpy.hfile.records import decode_record, parsed_schema, read_records, write_records
from hoodpy.hfile.writer import DEFAULT_BLOCK_SIZE, HFileWriter

__all__ = [
    "DEFAULT_BLOCK_SIZE",
    "Compression",
    "HFileReader",
    "HFileWriter",
    "decode_record",
    "parsed_schema",
    "read_records",
    "write_records",
]
