"""The frontend: a decorated Python function's source becomes an IR `Program`.

`ProgramBuilder` parses the entry and everything it reaches; `FunctionParser`
walks one body through the dispatch tables of `pypto.frontend.dispatch`. Importing
this package imports every handler module once, which fills those tables.
"""
from pypto.frontend import calls, constructs, expressions, loops, scopes, slicing, statements  # noqa: F401
from pypto.frontend.builder import PROGRAM_KINDS, ProgramBuilder

__all__ = ["PROGRAM_KINDS", "ProgramBuilder"]
