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

# the text readers (`parse`, `parse_program`, `loads`, `loads_program`) and the
# decorators and annotations the real package re-exports (`function`, `program`,
# `Tensor`, ...) are set here by `pypto.language` once it defines them (this package is
# imported first)
__all__ = [
    "InlineFunction",
    "InvalidOperationError",
    "ParserError",
    "ParserSyntaxError",
    "ParserTypeError",
    "SSAViolationError",
    "Scalar",
    "ScopeIsolationError",
    "Tensor",
    "Tile",
    "UndefinedVariableError",
    "UnsupportedFeatureError",
    "function",
    "inline",
    "loads",
    "loads_program",
    "parse",
    "parse_program",
    "program",
    "range",
    "yield_",
]
