"""The parser's error classes under the real toolchain's names.

    ParserError            = pypto.errors.UserError (every kernel error)
    ParserSyntaxError      = PyptoSyntaxError
    ParserTypeError        = PyptoTypeError
    UndefinedVariableError = UndefinedNameError
    SSAViolationError, InvalidOperationError, UnsupportedFeatureError (same names)
    ScopeIsolationError    = ScopeError
"""
from pypto.errors import (
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
