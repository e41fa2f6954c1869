"""``help``: the procedures hoodpy has, or one procedure's parameters and output columns.

Text layout follows Hudi's ``HelpProcedure`` (tab-separated, fields padded to 30 characters).
"""

from __future__ import annotations

from collections.abc import Iterable

from pyspark.sql.types import StringType

from hoodpy.errors import UnknownProcedureError
from sql_ext.procedures.base import STRING, Args, Parameter, Procedure, ProcedureContext


def _pad(text: str) -> str:
    return f"{text:<30}"


def _default_text(param: Parameter) -> str:
    if param.default is None:
        return "None"
    if isinstance(param.default, bool):
        return "true" if param.default else "false"
    return str(param.default)


class HelpProcedure(Procedure):
    """The procedure help command allows you to view all the commands currently provided, as well as their
    parameters and output fields."""

    name = "help"
    parameters = (Parameter.optional("cmd", STRING),)
    output = (("result", StringType()),)

    def call(self, ctx: ProcedureContext, args: Args) -> Iterable[tuple]:
        from sql_ext.procedures import registry

        procedures = registry()
        if args["cmd"] is None:
            lines = ["synopsis", "\tcall [command]([key1]=>[value1],[key2]=>[value2])", "commands and description"]
            lines += [f"\t{name}\t{cls.description()}" for name, cls in procedures.items()]
            lines.append("You can use 'call help(cmd=>[command])' to view the detailed parameters of the command")
            return [("\n".join(lines) + "\n",)]
        cmd = args["cmd"].strip()
        cls = procedures.get(cmd.lower())
        if cls is None:
            raise UnknownProcedureError(cmd, procedures)
        lines = ["parameters:", "\t" + "\t".join(_pad(h) for h in ("param", "type_name", "default_value", "required"))]
        for p in cls.parameters:
            required = "true" if p.is_required else "false"
            lines.append("\t" + "\t".join(_pad(x) for x in (p.name, p.type.name, _default_text(p), required)))
        lines.append("outputType:")
        lines.append("\t" + "\t".join(_pad(h) for h in ("name", "type_name", "nullable", "metadata")))
        for field in cls.output_schema().fields:
            lines.append("\t" + "\t".join(_pad(x) for x in (field.name, field.dataType.typeName(), "true", "{}")))
        return [("\n".join(lines) + "\n",)]
