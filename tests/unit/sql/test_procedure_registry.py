"""The procedure registry and argument binding (no Spark)."""

from __future__ import annotations

import pytest

from hoodpy.errors import HoodieError
from sql_ext.call import CallArgument, parse_call
from hoodpy.errors import ProcedureArgumentError, UnknownProcedureError
from sql_ext.procedures import get_procedure, procedure_names, registry
from sql_ext.procedures.base import BOOLEAN, INTEGER, STRING, Parameter, Procedure

INCREMENT = [
    "help", "show_commit_files", "show_commit_partitions", "show_commit_write_stats", "show_commits",
    "show_commits_metadata", "show_fsview_all", "show_fsview_latest", "show_table_properties", "show_timeline",
    "stats_file_sizes", "stats_wa",
]


def _bind(name: str, call: str):
    return get_procedure(name).bind(parse_call(call).args)


def test_registry_discovers_every_procedure_module():
    assert set(INCREMENT) <= set(procedure_names())
    assert all(issubclass(cls, Procedure) and cls.name == name for name, cls in registry().items())


def test_names_are_case_insensitive():
    assert get_procedure("SHOW_COMMITS") is get_procedure("show_commits")


def test_unknown_procedure_suggests_the_closest_name():
    with pytest.raises(UnknownProcedureError) as info:
        get_procedure("show_comits")
    assert info.value.suggestions[0] == "show_commits"
    assert "Did you mean 'show_commits'" in str(info.value)
    assert isinstance(info.value, HoodieError)


def test_unknown_procedure_without_close_match():
    with pytest.raises(UnknownProcedureError, match="Unknown procedure 'frobnicate'.* CALL help()"):
        get_procedure("frobnicate")


def test_named_positional_and_mixed_arguments_bind_alike():
    named = _bind("show_commit_files", "CALL x(table => 'db.t', limit => 3, instant_time => '20240101000000000')")
    positional = _bind("show_commit_files", "CALL x('db.t', 3, '20240101000000000')")
    mixed = _bind("show_commit_files", "CALL x('db.t', instant_time => '20240101000000000', LIMIT => 3)")
    assert named == positional == mixed == {
        "table": "db.t", "limit": 3, "instant_time": "20240101000000000", "path": None}
    assert mixed.given == {"table", "limit", "instant_time"}


def test_defaults_fill_in_and_null_means_default():
    args = _bind("show_fsview_latest", "CALL x(table => 't', limit => NULL)")
    assert args["limit"] == 10 and args["merge"] is True and args["path_regex"] == "ALL_PARTITIONS"
    assert args.given == {"table"}


def test_values_are_coerced_like_spark_implicit_casts():
    args = _bind("show_fsview_all", "CALL x(table => 't', limit => '5', include_max => 'TRUE', "
                                    "max_instant => 20240101000000000)")
    assert args["limit"] == 5 and args["include_max"] is True and args["max_instant"] == "20240101000000000"


def test_path_can_stand_in_for_table():
    assert _bind("show_commits", "CALL x(path => '/lake/t')")["path"] == "/lake/t"


@pytest.mark.parametrize(("name", "call", "problem"), [
    ("show_commits", "CALL x()", "missing required argument 'table' (or 'path')"),
    ("show_commit_files", "CALL x(table => 't')", "missing required argument 'instant_time'"),
    ("show_commits", "CALL x(table => 't', limt => 3)", "unknown argument 'limt' (did you mean 'limit'?)"),
    ("show_commits", "CALL x(table => 't', bogus => 3)", "unknown argument 'bogus'"),
    ("show_commits", "CALL x(table => 't', TABLE => 'u')", "argument 'table' given more than once"),
    ("show_commits", "CALL x('t', table => 'u')", "argument 'table' given more than once"),
    ("show_commits", "CALL x(table => 't', 5)", "positional argument 2 follows a named argument"),
    ("show_commits", "CALL x('t', 5, '/p', 4)", "too many arguments: 4 given, it takes at most 3"),
    ("show_commits", "CALL x(table => 't', limit => 'ten')", "argument 'limit' must be integer"),
    ("show_commits", "CALL x(table => 't', limit => 2.5)", "argument 'limit' must be integer"),
    ("show_commits", "CALL x(table => 't', limit => true)", "argument 'limit' must be integer"),
    ("show_commits", "CALL x(table => 't', limit => 99999999999)", "out of range"),
    ("show_commits", "CALL x(table => true)", "argument 'table' must be string"),
    ("show_fsview_all", "CALL x(table => 't', include_max => 'yes')", "argument 'include_max' must be boolean"),
])
def test_argument_errors_name_the_problem_and_the_signature(name, call, problem):
    with pytest.raises(ProcedureArgumentError) as info:
        _bind(name, call)
    message = str(info.value)
    assert problem in message
    assert f"Signature: {get_procedure(name).signature()}" in message
    assert message.startswith(f"{name}: ")


def test_signature_lists_types_defaults_and_requirements():
    assert get_procedure("show_commits").signature() == (
        "show_commits(table => string (required unless path), limit => integer = 10, path => string)")


def test_a_new_procedure_is_one_class(monkeypatch):
    class EchoProcedure(Procedure):
        """Echo the arguments."""

        name = "test_echo"
        parameters = (Parameter.required("text", STRING), Parameter.optional("times", INTEGER, 1),
                      Parameter.optional("loud", BOOLEAN, False))

        def call(self, ctx, args):
            return [(args["text"].upper() if args["loud"] else args["text"],)] * args["times"]

    registry.cache_clear()
    try:
        assert get_procedure("test_echo") is EchoProcedure
        assert EchoProcedure.description() == "Echo the arguments."
        assert EchoProcedure.bind([CallArgument(None, "hi"), CallArgument("times", 2)]) == {
            "text": "hi", "times": 2, "loud": False}
    finally:
        EchoProcedure.name = ""  # unregister for the rest of the session
        registry.cache_clear()


def test_every_procedure_declares_hudis_output_columns():
    expected = {
        "show_commits": ["commit_time", "state_transition_time", "action", "total_bytes_written",
                         "total_files_added", "total_files_updated", "total_partitions_written",
                         "total_records_written", "total_update_records_written", "total_errors"],
        "show_commit_write_stats": ["action", "total_bytes_written", "total_records_written", "avg_record_size"],
        "stats_wa": ["commit_time", "total_upserted", "total_written", "write_amplification_factor"],
        "stats_file_sizes": ["commit_time", "min", "10th", "50th", "avg", "95th", "max", "num_files", "std_dev"],
        "show_table_properties": ["key", "value"],
        "help": ["result"],
    }
    for name, columns in expected.items():
        assert [f.name for f in get_procedure(name).output_schema().fields] == columns
