"""Key generator keys (Hudi's KeyGeneratorOptions, TimestampKeyGeneratorConfig): which generator makes record
keys and partition paths, and how the time-based one turns a field into a date path.

Hudi 1.x records the ``hoodie.keygen.timebased.*`` keys in hoodie.properties; hoodpy does so at every table
version, since a table's partition paths depend on them.
"""

from __future__ import annotations

from hoodpy.config import ConfigKey, parse_enum

_TIMEBASED = "hoodie.keygen.timebased."
_OLD_TIMEBASED = "hoodie.deltastreamer.keygen.timebased."


def _timebased(name: str, default, doc: str, parse=str) -> ConfigKey:
    return ConfigKey(_TIMEBASED + name, default, parse, doc=doc, aliases=(_OLD_TIMEBASED + name,))


TIMESTAMP_TYPES = ("UNIX_TIMESTAMP", "DATE_STRING", "EPOCHMILLISECONDS", "EPOCHMICROSECONDS", "SCALAR")
TIME_UNITS = ("NANOSECONDS", "MICROSECONDS", "MILLISECONDS", "SECONDS", "MINUTES", "HOURS", "DAYS")


class KeyGeneratorConfig:
    TYPE = ConfigKey(
        "hoodie.table.keygenerator.type", None,
        doc="Key generator by type (SIMPLE, COMPLEX, TIMESTAMP, CUSTOM, NON_PARTITION, GLOBAL_DELETE; Hudi 1.x "
        "records this instead of the class); the class wins when both are set.",
        aliases=("hoodie.datasource.write.keygenerator.type",),
    )
    WRITE_PARTITION_FIELDS = ConfigKey(
        "hoodie.datasource.write.partitionpath.field", None,
        doc="Partition fields as the writer gives them; for CustomKeyGenerator each as field:SIMPLE or "
        "field:TIMESTAMP (recorded in hoodie.properties so later writes keep the types).",
    )
    TIMESTAMP_TYPE = _timebased(
        "timestamp.type", None,
        "How the time-based partition field reads: UNIX_TIMESTAMP (seconds), EPOCHMILLISECONDS, "
        "EPOCHMICROSECONDS, SCALAR (in timestamp.scalar.time.unit) or DATE_STRING (input.dateformat).",
        parse_enum(*TIMESTAMP_TYPES))
    SCALAR_TIME_UNIT = _timebased(
        "timestamp.scalar.time.unit", "SECONDS", "Unit of a SCALAR timestamp field.", parse_enum(*TIME_UNITS))
    INPUT_DATE_FORMAT = _timebased(
        "input.dateformat", "",
        "Joda date pattern(s) of a DATE_STRING field; several separated by input.dateformat.list.delimiter.regex.")
    INPUT_DATE_FORMAT_DELIMITER = _timebased(
        "input.dateformat.list.delimiter.regex", ",", "Regex separating the input date formats.")
    OUTPUT_DATE_FORMAT = _timebased("output.dateformat", "", "Joda date pattern of the partition path.")
    TIMEZONE = _timebased(
        "timezone", None, "Time zone of both input and output (set, it overrides the two below).")
    INPUT_TIMEZONE = _timebased(
        "input.timezone", "",
        "Time zone of DATE_STRING values without an offset (unset: the parsed offset, else UTC).")
    OUTPUT_TIMEZONE = _timebased(
        "output.timezone", "",
        "Time zone the partition path is printed in (unset: a DATE_STRING value's own zone, else UTC).")
