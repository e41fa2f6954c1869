"""The partition value TimestampBasedKeyGenerator makes of a field (Hudi's TimestampBasedAvroKeyGenerator):
the field read as a point in time, printed with the output date format.

How values read, as in Hudi's Avro path: integers, decimals and floating point numbers (truncated) count
units of the timestamp type (seconds for UNIX_TIMESTAMP, the scalar unit for SCALAR...); a date column
counts its epoch days in that unit and a timestamp column its epoch microseconds (Avro's
``timestamp-micros`` long); strings parse with the input date formats (DATE_STRING). A null value reads as
1 (one unit after the epoch; for DATE_STRING, 1 ms printed with the first input format and parsed back).
Without time zones the path is printed in UTC (Hudi: the JVM's zone) or, for a string with an offset, in
that offset.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import pyarrow as pa
import pyarrow.compute as pc

from hoodpy.config import HoodieConfig
from hoodpy.config.keygen import TIMESTAMP_TYPES
from hoodpy.config.keygen import KeyGeneratorConfig as K
from hoodpy.errors import InvalidConfigError, InvalidRecordError
from hoodpy.keygen import joda

DEFAULT_ZONE = "UTC"
_UNIT_MILLIS = {"NANOSECONDS": 1e-6, "MICROSECONDS": 1e-3, "MILLISECONDS": 1, "SECONDS": 1000,
                "MINUTES": 60_000, "HOURS": 3_600_000, "DAYS": 86_400_000}
_TYPE_UNIT = {"UNIX_TIMESTAMP": "SECONDS", "EPOCHMILLISECONDS": "MILLISECONDS",
              "EPOCHMICROSECONDS": "MICROSECONDS"}


@dataclass(frozen=True)
class TimestampFormat:
    timestamp_type: str
    time_unit: str | None  # None for DATE_STRING
    input_formats: tuple[str, ...]
    output_format: str
    input_zone: str | None
    output_zone: str | None

    @classmethod
    def from_config(cls, config: HoodieConfig) -> TimestampFormat | None:
        """The format the config describes; None when it names no timestamp type (Hudi 0.14 keeps these keys
        out of hoodie.properties: such a table reads, and writes once the writer gives them)."""
        ts_type = config.get(K.TIMESTAMP_TYPE)
        if ts_type is None:
            return None
        output_format = config.get(K.OUTPUT_DATE_FORMAT)
        if not output_format:
            raise InvalidConfigError(K.OUTPUT_DATE_FORMAT.key, output_format, "the partition path pattern is required")
        _check_pattern(K.OUTPUT_DATE_FORMAT.key, output_format)
        inputs: tuple[str, ...] = ()
        if ts_type == "DATE_STRING":
            delimiter = config.get(K.INPUT_DATE_FORMAT_DELIMITER).strip() or ","
            inputs = tuple(p.strip() for p in re.split(delimiter, config.get(K.INPUT_DATE_FORMAT)))
            if not any(inputs):
                raise InvalidConfigError(K.INPUT_DATE_FORMAT.key, config.get(K.INPUT_DATE_FORMAT),
                                         "DATE_STRING needs an input date format")
            for p in inputs:
                _check_pattern(K.INPUT_DATE_FORMAT.key, p)
        unit = config.get(K.SCALAR_TIME_UNIT) if ts_type == "SCALAR" else _TYPE_UNIT.get(ts_type)
        if config.is_set(K.TIMEZONE):  # Hudi: the shared key, when present, wins (empty: no zone)
            input_zone = output_zone = _zone(K.TIMEZONE.key, config.get(K.TIMEZONE))
        else:
            input_zone = _zone(K.INPUT_TIMEZONE.key, config.get(K.INPUT_TIMEZONE))
            output_zone = _zone(K.OUTPUT_TIMEZONE.key, config.get(K.OUTPUT_TIMEZONE))
        return cls(ts_type, unit, inputs, output_format, input_zone, output_zone)

    def values(self, column: pa.Array) -> pa.Array:
        """The partition value (before hive-style naming and escaping) of each value of ``column``."""
        column = column.combine_chunks() if isinstance(column, pa.ChunkedArray) else column
        t = column.type
        if pa.types.is_string(t) or pa.types.is_large_string(t):
            return self._from_strings(column.cast(pa.string()))
        if self.time_unit is None:
            raise InvalidRecordError(
                f"{K.TIMESTAMP_TYPE.key}=DATE_STRING reads string fields; this one is {t}")
        if pa.types.is_timestamp(t):
            amounts = pc.cast(column.cast(pa.timestamp("us", tz=t.tz)), pa.int64())
        elif pa.types.is_date(t):
            amounts = pc.cast(column.cast(pa.date32()), pa.int32()).cast(pa.int64())
        elif pa.types.is_integer(t):
            amounts = column.cast(pa.int64())
        elif pa.types.is_floating(t) or pa.types.is_decimal(t):
            amounts = pc.trunc(column.cast(pa.float64())).cast(pa.int64())
        else:
            raise InvalidRecordError(f"A time-based partition field cannot be of type {t}")
        amounts = pc.fill_null(amounts, 1)
        return joda.format_millis(self.output_format, self._to_millis(amounts), self.output_zone or DEFAULT_ZONE)

    def _to_millis(self, amounts: pa.Array) -> pa.Array:
        factor = _UNIT_MILLIS[self.time_unit]
        if factor >= 1:
            return pc.multiply(amounts, int(factor))
        # Java's TimeUnit.convert truncates toward zero.
        return pc.cast(pc.trunc(pc.multiply(amounts.cast(pa.float64()), factor)), pa.int64())

    def _default_string(self) -> str:
        zone = self.input_zone or self.output_zone or DEFAULT_ZONE
        return joda.format_millis(self.input_formats[0], pa.array([1], pa.int64()), zone)[0].as_py()

    def _from_strings(self, column: pa.Array) -> pa.Array:
        if self.time_unit is not None:
            # Java Hudi 1.1's SQL UPDATE declares a numeric time-based partition column a string in the table
            # schema (the v9 time-based samples) and keeps the rows' partition paths: a string holding the
            # number gives that path here. Other text needs DATE_STRING, as in Hudi.
            bad = pc.filter(column, pc.invert(pc.match_substring_regex(column, r"^-?\d{1,18}$")))
            if len(bad):
                raise InvalidRecordError(
                    f"A string field needs {K.TIMESTAMP_TYPE.key}=DATE_STRING and an input date format, "
                    f"not {self.timestamp_type} (value {bad[0].as_py()!r} is not a number)")
            return self.values(column.cast(pa.int64()))
        column = pc.fill_null(column, self._default_string()) if column.null_count else column
        distinct = pc.unique(column)
        millis, zones = [], []
        for text in distinct.to_pylist():
            try:
                ms, zone = joda.parse(self.input_formats, text, self.input_zone, DEFAULT_ZONE)
            except ValueError as e:
                raise InvalidRecordError(f"Unable to parse input partition field: {e}") from e
            millis.append(ms)
            zones.append(self.output_zone or zone)
        out = [None] * len(distinct)
        for zone in set(zones):
            idx = [i for i, z in enumerate(zones) if z == zone]
            printed = joda.format_millis(self.output_format, pa.array([millis[i] for i in idx], pa.int64()), zone)
            for i, s in zip(idx, printed.to_pylist(), strict=True):
                out[i] = s
        return pa.array(out, pa.string()).take(pc.index_in(column, value_set=distinct))


def missing_format_error() -> InvalidConfigError:
    return InvalidConfigError(K.TIMESTAMP_TYPE.key, None,
                              "a time-based partition field needs one of " + ", ".join(TIMESTAMP_TYPES)
                              + " (and the hoodie.keygen.timebased.* keys that go with it)")


def _check_pattern(key: str, pattern: str) -> None:
    try:
        joda.tokens(pattern)
    except ValueError as e:
        raise InvalidConfigError(key, pattern, str(e)) from e


def _zone(key: str, name: str | None) -> str | None:
    if name is None or not name.strip():
        return None
    try:
        return joda.zone_id(name)
    except ValueError as e:
        raise InvalidConfigError(key, name, str(e)) from e
