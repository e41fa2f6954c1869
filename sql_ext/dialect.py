"""hoodpy's SQL dialect: Spark's, plus Hudi's ``CALL`` statement (pure; no Spark needed).

Spark's sqlglot tokenizer treats ``CALL`` as an opaque command and swallows the rest of the statement into
one string. Here ``CALL`` becomes an ordinary word and the parser's statement table gains an entry for it,
following Hudi's grammar (``HoodieSqlCommon.g4``)::

    CALL multipartIdentifier '(' (callArgument (',' callArgument)*)? ')'
    callArgument: expression | identifier '=>' expression

Example:
    >>> stmt = Hoodpy().parse("CALL system.show_commits(table => 'db.trips', limit => 5)")[0]
    >>> stmt.name, [a.sql() for a in stmt.expressions]
    ('system.show_commits', ["table => 'db.trips'", 'limit => 5'])
"""

from __future__ import annotations

from collections.abc import Callable
from typing import ClassVar

from sqlglot import exp
from sqlglot.dialects.spark import Spark
from sqlglot.tokens import TokenType


class Call(exp.Expression):
    """``CALL name(args)``: ``this`` is the (possibly dotted) name, ``expressions`` the arguments, each
    either an expression (positional) or an :class:`sqlglot.exp.Kwarg` (named)."""

    arg_types = {"this": True, "expressions": False}

    @property
    def name(self) -> str:
        return self.this.name if isinstance(self.this, exp.Var) else self.this.sql()


def _call_sql(generator, expression: Call) -> str:
    return f"CALL {expression.name}({generator.expressions(expression, flat=True)})"


class Hoodpy(Spark):
    """Spark SQL with ``CALL``. Statements hoodpy does not own are never regenerated from this AST."""

    class Tokenizer(Spark.Tokenizer):
        KEYWORDS = {k: v for k, v in Spark.Tokenizer.KEYWORDS.items() if k != "CALL"}

    class Parser(Spark.Parser):
        # Statements introduced by a plain word rather than a keyword token, by their upper-cased word.
        WORD_STATEMENT_PARSERS: ClassVar[dict[str, Callable]] = {
            "CALL": lambda self: self._parse_call(),
        }

        def _parse_statement(self):
            curr = self._curr
            if curr is not None and curr.token_type == TokenType.VAR:
                parser = self.WORD_STATEMENT_PARSERS.get(curr.text.upper())
                if parser is not None:
                    comments = curr.comments
                    self._advance()
                    stmt = parser(self)
                    stmt.add_comments(comments, prepend=True)
                    return stmt
            return super()._parse_statement()

        def _parse_call(self) -> Call:
            parts = []
            while True:
                part = self._parse_id_var(any_token=False)
                if part is None:
                    self.raise_error("Expected a procedure name after CALL")
                    break
                parts.append(part.name)
                if not self._match(TokenType.DOT):
                    break
            self._match_l_paren()
            args = []
            if not self._match(TokenType.R_PAREN):
                args = self._parse_csv(self._parse_call_argument)
                self._match_r_paren()
            return self.expression(Call(this=exp.var(".".join(parts)), expressions=args))

        def _parse_call_argument(self):
            nxt = self._next
            if self._curr is not None and nxt is not None and nxt.token_type == TokenType.FARROW:
                name = self._parse_id_var(any_token=True)
                self._match(TokenType.FARROW)
                value = self._parse_assignment()
                if value is None:
                    self.raise_error(f"Expected a value for argument {name.name!r}")
                return self.expression(exp.Kwarg(this=exp.var(name.name), expression=value))
            value = self._parse_assignment()
            if value is None:
                self.raise_error("Expected an argument")
            return value

    class Generator(Spark.Generator):
        TRANSFORMS = {**Spark.Generator.TRANSFORMS, Call: _call_sql}


DIALECT = Hoodpy()
