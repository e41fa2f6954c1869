"""bulk_insert_modes: which writes skip the validation job, and a write task's refusal as the driver raises it."""

from __future__ import annotations

from hoodpy.errors import InvalidRecordError
from hoodpy.write.bulk_insert_modes import checks_in_tasks, invalid_record_in_task

# The shape of Spark's report of a failed Python task (PythonException's text: the worker's traceback).
_REPORT = """An exception was thrown from the Python worker. Please see the stack trace below.
Traceback (most recent call last):
  File "/work/hoodpy/write/bulk_insert_modes.py", line 95, in checked_rows
    raise InvalidRecordError(f"{bad} record(s) have a null or empty record key")
hoodpy.errors.InvalidRecordError: 2 record(s) have a null or empty record key
"""


def test_only_unsorted_modes_without_ordering_or_combining_check_in_tasks() -> None:
    assert checks_in_tasks("NONE", None, False)
    assert checks_in_tasks("PARTITION_SORT", None, False)
    assert not checks_in_tasks("GLOBAL_SORT", None, False)  # its plan needs the per-partition counts
    assert not checks_in_tasks("NONE", "ts", False)  # null ordering values are refused by the validation job
    assert not checks_in_tasks("NONE", None, True)


def test_task_refusal_becomes_invalid_record_error_naming_the_key_fields() -> None:
    error = invalid_record_in_task(RuntimeError(_REPORT), ["l_orderkey", "l_linenumber"])
    assert isinstance(error, InvalidRecordError)
    assert str(error) == ("2 record(s) have a null or empty record key "
                          "(fields l_orderkey, l_linenumber; counted in one write task)")


def test_other_task_failures_are_not_translated() -> None:
    assert invalid_record_in_task(RuntimeError("ValueError: disk full\n"), ["id"]) is None
