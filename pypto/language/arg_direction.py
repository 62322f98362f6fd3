"""`pl.adir`: the call-site argument directions, one name per `ArgDirection` member.

Each name is the enum member itself (`pl.adir.input is ArgDirection.Input`), as the
real toolchain has them; they mark arguments in a call's
`attrs={"arg_directions": [...]}` and in function attributes. They are values, not
wrappers: `pl.adir.input(x)` is not a form.
"""
from __future__ import annotations

from pypto.language.enums import ArgDirection

input = ArgDirection.Input
output = ArgDirection.Output
inout = ArgDirection.InOut
output_existing = ArgDirection.OutputExisting
no_dep = ArgDirection.NoDep
scalar = ArgDirection.Scalar

NAME_TO_DIRECTION = {d.value: d for d in ArgDirection}
DIRECTION_TO_NAME = {d: d.value for d in ArgDirection}

__all__ = [
           "DIRECTION_TO_NAME",
           "NAME_TO_DIRECTION",
           "ArgDirection",
           "inout",
           "input",
           "no_dep",
           "output",
           "output_existing",
           "scalar",
]
