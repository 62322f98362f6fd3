"""`pypto.language.parser` (`pl.parser`): where the real toolchain keeps its DSL parser.
pypto-lab's parser is `pypto.frontend`; this package holds the real spellings of what
callers import from here: the parser's error classes (`diagnostics`) and the text
readers (`text_parser`: `parse`, `parse_program`, `loads`, `loads_program`)."""
from __future__ import annotations

from pypto.language.parser.diagnostics import (
    InvalidOperationError,
    ParserError,
    ParserSyntaxError,
    ParserTypeError,
    ScopeIsolationError,
    SSAViolationError,
    UndefinedVariableError,
    UnsupportedFeatureError,
)

# the text readers (`parse`, `parse_program`, `loads`, `loads_program`) are set here by
# `pypto.language` once it defines them (this package is imported first)
__all__ = ["InvalidOperationError", "ParserError", "ParserSyntaxError", "ParserTypeError",
           "SSAViolationError", "ScopeIsolationError", "UndefinedVariableError",
           "UnsupportedFeatureError", "loads", "loads_program", "parse",
           "parse_program"]
