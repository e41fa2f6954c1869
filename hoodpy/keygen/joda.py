"""Joda-Time date patterns (``yyyy/MM/dd``, ``yyyy-MM-dd'T'HH:mm:ss.SSSZ``) and time zone ids, as Hudi's
TimestampBasedKeyGenerator reads them: formatting epoch milliseconds (vectorized, pyarrow) and parsing
strings (per distinct value).

Letters follow Joda's DateTimeFormat, not Python's strftime nor Spark's patterns: ``Z`` prints ``+0000``
(``ZZ`` ``+00:00``, ``ZZZ`` the zone id), ``S`` is the fraction of the second, ``''`` is a quote and quoted
text is literal. Parsing is Joda's: a numeric field reads as many digits as it may (two for month, day,
hours...; nine for the year, fixed width when a numeric field follows it directly), literals match
regardless of case, and the whole string must be consumed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from functools import lru_cache
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import pyarrow as pa
import pyarrow.compute as pc

MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
          "November", "December")
DAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
_NUMERIC = {"y": 9, "Y": 9, "D": 3, "d": 2, "H": 2, "h": 2, "K": 2, "k": 2, "m": 2, "s": 2, "S": 9}
_SUPPORTED = set(_NUMERIC) | {"M", "E", "a", "Z"}

# Joda 2.x DateTimeZone.forTimeZone maps Java's three-letter ids to these zones before anything else.
_JODA_ZONE_IDS = {
    "GMT": "UTC", "ECT": "CET", "MET": "CET", "MIT": "Pacific/Apia", "HST": "Pacific/Honolulu",
    "AST": "America/Anchorage", "PST": "America/Los_Angeles", "MST": "America/Denver", "PNT": "America/Phoenix",
    "CST": "America/Chicago", "EST": "America/New_York", "IET": "America/Indiana/Indianapolis",
    "PRT": "America/Puerto_Rico", "CNT": "America/St_Johns", "AGT": "America/Argentina/Buenos_Aires",
    "BET": "America/Sao_Paulo", "ART": "Africa/Cairo", "CAT": "Africa/Harare", "EAT": "Africa/Addis_Ababa",
    "NET": "Asia/Yerevan", "PLT": "Asia/Karachi", "IST": "Asia/Kolkata", "BST": "Asia/Dhaka",
    "VST": "Asia/Ho_Chi_Minh", "CTT": "Asia/Shanghai", "JST": "Asia/Tokyo", "ACT": "Australia/Darwin",
    "AET": "Australia/Sydney", "SST": "Pacific/Guadalcanal", "NST": "Pacific/Auckland",
}
_CUSTOM_ZONE = re.compile(r"GMT([+-])(\d{1,2})(?::?(\d{2}))?")


def zone_id(name: str) -> str:
    """The zone Java's TimeZone.getTimeZone / Joda's forTimeZone make of ``name``, as a pyarrow time zone
    (an IANA name or a fixed ``+HH:MM`` offset). Raises ValueError for a name Java would silently turn into
    GMT."""
    text = name.strip()
    if text in _JODA_ZONE_IDS:
        return _JODA_ZONE_IDS[text]
    custom = _CUSTOM_ZONE.fullmatch(text)
    if custom:
        sign, hours, minutes = custom.groups()
        return offset_zone((1 if sign == "+" else -1) * (int(hours) * 60 + int(minutes or 0)) * 60)
    try:
        ZoneInfo(text)
    except (ZoneInfoNotFoundError, ValueError) as e:
        raise ValueError(f"unknown time zone {text!r}") from e
    return text


def offset_zone(seconds: int) -> str:
    """A fixed-offset zone as pyarrow names it; UTC for a zero offset (as Joda's forOffsetMillis(0))."""
    if seconds == 0:
        return "UTC"
    sign = "+" if seconds > 0 else "-"
    minutes = abs(seconds) // 60
    return f"{sign}{minutes // 60:02d}:{minutes % 60:02d}"


@dataclass(frozen=True)
class Token:
    letter: str  # "" for literal text
    count: int = 0
    text: str = ""


@lru_cache(maxsize=64)
def tokens(pattern: str) -> tuple[Token, ...]:
    """Joda's tokenization of ``pattern``; ValueError names a pattern letter hoodpy does not implement."""
    out: list[Token] = []
    i, n = 0, len(pattern)
    literal = []

    def flush():
        if literal:
            out.append(Token("", text="".join(literal)))
            literal.clear()

    while i < n:
        c = pattern[i]
        if c == "'":
            if i + 1 < n and pattern[i + 1] == "'":
                literal.append("'")
                i += 2
                continue
            end = i + 1
            while True:
                if end >= n:
                    raise ValueError(f"unterminated quote in date pattern {pattern!r}")
                if pattern[end] == "'":
                    if end + 1 < n and pattern[end + 1] == "'":
                        literal.append("'")
                        end += 2
                        continue
                    break
                literal.append(pattern[end])
                end += 1
            i = end + 1
        elif c.isascii() and c.isalpha():
            flush()
            j = i
            while j < n and pattern[j] == c:
                j += 1
            if c not in _SUPPORTED:
                raise ValueError(f"date pattern letter {c!r} (in {pattern!r}) is not supported")
            out.append(Token(c, j - i))
            i = j
        else:
            literal.append(c)
            i += 1
    flush()
    return tuple(out)


def _is_numeric(token: Token) -> bool:
    return token.letter in _NUMERIC or (token.letter == "M" and token.count < 3)


# Numeric fields printed as they are, zero-padded to the letter count.
_PLAIN_FIELDS = {"d": pc.day, "D": pc.day_of_year, "H": pc.hour, "m": pc.minute, "s": pc.second}


def _mod(values: pa.Array, n: int) -> pa.Array:
    return pc.subtract(values, pc.multiply(pc.divide(values, n), n))


def _padded(values: pa.Array, width: int) -> pa.Array:
    return pc.utf8_lpad(pc.cast(values, pa.string()), width=width, padding="0")


def format_millis(pattern: str, millis: pa.Array, zone: str) -> pa.Array:
    """Epoch milliseconds (int64, no nulls) printed with a Joda ``pattern`` in ``zone`` (see :func:`zone_id`)."""
    instants = pc.cast(millis.cast(pa.int64()), pa.timestamp("ms", tz=zone))
    local = pc.local_timestamp(instants)
    n = len(millis)
    parts: list[pa.Array] = []
    for t in tokens(pattern):
        c, k = t.letter, t.count
        if c == "":
            parts.append(pa.repeat(pa.scalar(t.text), n))
        elif c in "yY":
            year = pc.year(local)
            parts.append(_padded(_mod(year, 100), 2) if k == 2
                         else _padded(year, k))
        elif c == "M":
            month = pc.month(local)
            if k >= 3:
                names = pa.array([m if k >= 4 else m[:3] for m in MONTHS])
                parts.append(names.take(pc.subtract(month, 1)))
            else:
                parts.append(_padded(month, k))
        elif c in _PLAIN_FIELDS:
            parts.append(_padded(_PLAIN_FIELDS[c](local), k))
        elif c in "hKk":
            hour = pc.hour(local)
            if c == "k":
                value = pc.if_else(pc.equal(hour, 0), 24, hour)
            else:
                value = _mod(hour, 12)
                if c == "h":
                    value = pc.if_else(pc.equal(value, 0), 12, value)
            parts.append(_padded(value, k))
        elif c == "S":
            ms = _padded(pc.millisecond(local), 3)
            parts.append(pc.utf8_slice_codeunits(ms, 0, k) if k <= 3
                         else pc.binary_join_element_wise(ms, pa.scalar("0" * (k - 3)), ""))
        elif c == "E":
            names = pa.array([d if k >= 4 else d[:3] for d in DAYS])
            parts.append(names.take(pc.day_of_week(local)))
        elif c == "a":
            parts.append(pc.if_else(pc.less(pc.hour(local), 12), "AM", "PM"))
        elif c == "Z":
            if k >= 3:
                parts.append(pa.repeat(pa.scalar(zone), n))
            else:
                offset_min = pc.divide(pc.subtract(pc.cast(local, pa.int64()), pc.cast(instants, pa.int64())),
                                       60000)
                sign = pc.if_else(pc.less(offset_min, 0), "-", "+")
                absolute = pc.abs(offset_min)
                hours = _padded(pc.divide(absolute, 60), 2)
                minutes = _padded(_mod(absolute, 60), 2)
                parts.append(pc.binary_join_element_wise(sign, hours, pa.scalar(":" if k == 2 else ""),
                                                         minutes, ""))
    if not parts:
        return pa.repeat(pa.scalar(""), n)
    return pc.binary_join_element_wise(*parts, "")


@lru_cache(maxsize=64)
def _parser(pattern: str) -> tuple[re.Pattern[str], tuple[Token, ...]]:
    toks = tokens(pattern)
    regex = []
    fields = []
    for i, t in enumerate(toks):
        if t.letter == "":
            regex.append(re.escape(t.text))
            continue
        fields.append(t)
        if t.letter == "M" and t.count >= 3 or t.letter == "E":
            names = MONTHS if t.letter == "M" else DAYS
            regex.append("(" + "|".join(sorted({*names, *(x[:3] for x in names)}, key=len, reverse=True)) + ")")
        elif t.letter == "a":
            regex.append("(AM|PM)")
        elif t.letter == "Z":
            regex.append(r"(Z|[+-]\d{2}(?::?\d{2})?)" if t.count < 3 else r"([A-Za-z][A-Za-z0-9_/+\-]*)")
        else:
            follows_numeric = i + 1 < len(toks) and _is_numeric(toks[i + 1])
            most = _NUMERIC.get(t.letter, 2)
            if t.letter in "yY" and t.count == 2:
                regex.append(r"(\d{2})")
            elif t.letter in "yY":
                regex.append(rf"([-+]?\d{{1,{t.count if follows_numeric else most}}}+)")
            else:
                regex.append(rf"(\d{{1,{most}}}+)")
    return re.compile("".join(regex), re.IGNORECASE), tuple(fields)


def parse(patterns: tuple[str, ...], text: str, zone: str | None, default_zone: str) -> tuple[int, str]:
    """(epoch millis, zone) of ``text`` read with the first of ``patterns`` that consumes it whole, as Joda's
    formatter does: ``zone`` (the input time zone) when set, else the parsed offset, else ``default_zone``.
    ValueError when no pattern matches."""
    for pattern in patterns:
        regex, fields = _parser(pattern)
        m = regex.fullmatch(text)
        if m is None:
            continue
        values = dict(year=1970, month=1, day=1, hour=0, minute=0, second=0, micro=0)
        day_of_year = None
        pm = None
        offset: int | None = None
        parsed_zone: str | None = None
        for t, raw in zip(fields, m.groups(), strict=True):
            c = t.letter
            if c in "yY":
                values["year"] = (_two_digit_year(int(raw)) if t.count == 2 else int(raw))
            elif c == "M":
                values["month"] = int(raw) if t.count < 3 else _name_index(MONTHS, raw) + 1
            elif c == "d":
                values["day"] = int(raw)
            elif c == "D":
                day_of_year = int(raw)
            elif c in "Hk":
                values["hour"] = int(raw) % 24
            elif c in "hK":
                values["hour"] = int(raw) % 12
            elif c == "a":
                pm = raw.upper() == "PM"
            elif c == "m":
                values["minute"] = int(raw)
            elif c == "s":
                values["second"] = int(raw)
            elif c == "S":
                values["micro"] = int((raw + "000000")[:6])
            elif c == "Z":
                if t.count >= 3:
                    parsed_zone = zone_id(raw)
                elif raw.upper() == "Z":
                    offset = 0
                else:
                    digits = raw[1:].replace(":", "")
                    minutes = int(digits[:2]) * 60 + int(digits[2:4] or 0)
                    offset = (minutes if raw[0] == "+" else -minutes) * 60
        if pm is not None and pm:
            values["hour"] += 12
        local = datetime(values["year"], values["month"], values["day"], values["hour"], values["minute"],
                         values["second"], values["micro"])
        if day_of_year is not None:
            local = local.replace(month=1, day=1) + timedelta(days=day_of_year - 1)
        if offset is not None:
            instant = local.replace(tzinfo=timezone(timedelta(seconds=offset)))
            result_zone = zone or offset_zone(offset)
        else:
            result_zone = zone or parsed_zone or default_zone
            instant = local.replace(tzinfo=_tzinfo(result_zone))
        millis = int((instant - _EPOCH) // timedelta(milliseconds=1))
        return millis, result_zone
    raise ValueError(f"{text!r} matches none of the date formats {', '.join(patterns)}")


_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)


def _tzinfo(zone: str):
    if zone[0] in "+-":
        sign = 1 if zone[0] == "+" else -1
        return timezone(sign * timedelta(hours=int(zone[1:3]), minutes=int(zone[4:6])))
    return ZoneInfo(zone)


def _name_index(names: tuple[str, ...], text: str) -> int:
    low = text.lower()
    return next(i for i, name in enumerate(names) if name.lower() == low or name[:3].lower() == low)


def _two_digit_year(yy: int) -> int:
    # Joda's appendTwoDigitYear(pivot = current year - 30): the century that puts the year within 50 of it.
    pivot = datetime.now(timezone.utc).year - 30
    base = pivot - 50
    year = (base // 100) * 100 + yy
    return year + 100 if year < base else year
