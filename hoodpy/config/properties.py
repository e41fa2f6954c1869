"""Read and write ``.hoodie/hoodie.properties`` the way Java's Properties.store does, with Hudi's checksum."""

from __future__ import annotations

import zlib
from collections.abc import Mapping
from datetime import datetime, timezone
from functools import lru_cache

from hoodpy.config.table import TableConfig

PROPERTIES_FILE = ".hoodie/hoodie.properties"
BACKUP_FILE = ".hoodie/hoodie.properties.backup"  # Java's copy while it rewrites hoodie.properties

_ESCAPES = {"\\": "\\\\", ":": "\\:", "=": "\\=", "#": "\\#", "!": "\\!",
            "\t": "\\t", "\n": "\\n", "\r": "\\r", "\f": "\\f"}
_UNESCAPES = {"t": "\t", "n": "\n", "r": "\r", "f": "\f"}


def _escape(text: str, *, is_key: bool) -> str:
    out = []
    for i, ch in enumerate(text):
        if ch == " " and (is_key or i == 0):
            out.append("\\ ")
        elif ch in _ESCAPES:
            out.append(_ESCAPES[ch])
        elif ord(ch) < 0x20 or ord(ch) > 0x7E:
            out.append(f"\\u{ord(ch):04X}")
        else:
            out.append(ch)
    return "".join(out)


def _unescape(text: str) -> str:
    out, i = [], 0
    while i < len(text):
        ch = text[i]
        if ch == "\\" and i + 1 < len(text):
            nxt = text[i + 1]
            if nxt == "u" and i + 6 <= len(text):
                out.append(chr(int(text[i + 2:i + 6], 16)))
                i += 6
                continue
            out.append(_UNESCAPES.get(nxt, nxt))
            i += 2
            continue
        out.append(ch)
        i += 1
    return "".join(out)


def _split_key_value(line: str) -> tuple[str, str]:
    # The key ends at the first unescaped '=', ':' or whitespace.
    i = 0
    while i < len(line):
        ch = line[i]
        if ch == "\\":
            i += 2
            continue
        if ch in "=: \t":
            break
        i += 1
    key, rest = line[:i], line[i:].lstrip(" \t")
    if rest[:1] in ("=", ":"):
        rest = rest[1:].lstrip(" \t")
    return _unescape(key), _unescape(rest)


def parse_properties(text: str) -> dict[str, str]:
    """Parse Java properties text (comments, escapes, line continuations)."""
    props: dict[str, str] = {}
    logical = ""
    for raw in text.splitlines():
        line = raw.lstrip(" \t\f") if not logical else raw.lstrip(" \t\f")
        if not logical and (not line or line[0] in "#!"):
            continue
        # A line ending in an odd number of backslashes continues on the next one.
        trailing = len(line) - len(line.rstrip("\\"))
        if trailing % 2 == 1:
            logical += line[:-1]
            continue
        logical += line
        key, value = _split_key_value(logical)
        props[key] = value
        logical = ""
    if logical:
        key, value = _split_key_value(logical)
        props[key] = value
    return props


def format_properties(props: Mapping[str, str], *, now: datetime | None = None) -> str:
    """Java Properties.store format with Hudi's header comment; the checksum is written last."""
    now = now or datetime.now(timezone.utc)
    lines = [
        f"#Properties saved on {now.strftime('%Y-%m-%dT%H:%M:%S.')}{now.microsecond // 1000:03d}Z",
        "#" + now.strftime("%a %b %d %H:%M:%S UTC %Y"),
    ]
    checksum_key = TableConfig.CHECKSUM.key
    for key in props:
        if key != checksum_key:
            lines.append(f"{_escape(key, is_key=True)}={_escape(str(props[key]), is_key=False)}")
    if checksum_key in props:
        lines.append(f"{checksum_key}={props[checksum_key]}")
    return "\n".join(lines) + "\n"


def table_checksum(database_name: str | None, table_name: str) -> int:
    """Hudi's hoodie.table.checksum: CRC32 of '<db>.<table>' (HoodieTableConfig.TABLE_CHECKSUM_FORMAT); a table
    without a database, such as a metadata table, has '.<table>'."""
    return zlib.crc32(f"{database_name or ''}.{table_name}".encode("utf-8"))


def load_table_properties(storage) -> dict[str, str] | None:
    """The table's properties, or None when there is no hoodie.properties.

    Java Hudi updates hoodie.properties by writing hoodie.properties.backup, deleting hoodie.properties and
    writing it anew; a Java writer that died in between leaves only the backup, which Java readers then read,
    and so does hoodpy.
    """
    for rel in (PROPERTIES_FILE, BACKUP_FILE):
        if storage.exists(rel):
            return dict(_parsed(storage.read_bytes(rel)))
    return None


@lru_cache(maxsize=32)
def _parsed(content: bytes) -> tuple[tuple[str, str], ...]:
    """The properties of a hoodie.properties file's ``content``, parsed once per content: one write reads the
    file a dozen times (SF 1 upsert: 12 reads, 0.18 s of parsing), each read still sees the file as it is now."""
    return tuple(parse_properties(content.decode("utf-8")).items())


def save_table_properties(storage, props: Mapping[str, str]) -> None:
    """Replace hoodie.properties in one atomic write (readers see the old file or the new one, never none, so
    hoodpy needs no backup file)."""
    storage.write_atomic(PROPERTIES_FILE, format_properties(props).encode("utf-8"))
