"""The frontend: a decorated Python function's source becomes an IR `Program`.

`ProgramBuilder` parses the entry and everything it reaches; `FunctionParser`
walks one body through the dispatch tables of `pypto.frontend.dispatch`. Importing
this package imports every handler module once, which fills those tables.
"""
from pypto.frontend import (  # noqa: F401
    calls,
    constructs,
    distributed,
    expressions,
    loops,
    scopes,
    slicing,
    statements,
)
from pypto.frontend.builder import PROGRAM_KINDS, ProgramBuilder, program_kind
from pypto.frontend.program_rules import check_program_externals

__all__ = ["PROGRAM_KINDS", "ProgramBuilder", "check_program_externals", "program_kind"]
