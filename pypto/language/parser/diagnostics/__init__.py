"""The parser's error classes under the real toolchain's names (aliases of
`pypto.errors`: `ParserTypeError` is `PyptoTypeError`, and so on)."""
from pypto.language.parser.diagnostics.exceptions import (
    InvalidOperationError,
    ParserError,
    ParserSyntaxError,
    ParserTypeError,
    ScopeIsolationError,
    SSAViolationError,
    UndefinedVariableError,
    UnsupportedFeatureError,
)

__all__ = ["InvalidOperationError", "ParserError", "ParserSyntaxError", "ParserTypeError",
           "SSAViolationError", "ScopeIsolationError", "UndefinedVariableError",
           "UnsupportedFeatureError"]
