"""`attrs={...}` on a kernel call: the call site's attributes, as the real IR keeps them
on a `Call` (and its printer writes them, so a printed program reads back the same).

`arg_directions` gives each argument its runtime submit kind (`pl.adir.input`,
`output`, `inout`, `output_existing`, `no_dep`, `scalar`), one per argument. Other keys
are kept as written (`arg_direction_overrides`: argument indices). The simulator gives
`pl.adir.output` its meaning: the runtime allocates the buffer the task writes (fresh
memory), so the caller's tensor passed there only gives the shape; the other
directions change task ordering, which the simulator's program order already respects.
"""
from __future__ import annotations

import ast
from enum import Enum
from typing import Any

from pypto.errors import PyptoSyntaxError, PyptoTypeError
from pypto.frontend.values import is_ir
from pypto.language.enums import ArgDirection

ARG_DIRECTIONS = "arg_directions"


def call_attrs(p: Any, kwargs: dict, n_args: int, node: ast.AST) -> tuple:
    """Pop `attrs=` from a kernel call's `kwargs` and check it: the call's attributes as
    sorted (key, value) pairs, () when there are none."""
    if "attrs" not in kwargs:
        return ()
    attrs = kwargs.pop("attrs")
    where = next((k.value for k in getattr(node, "keywords", ()) if k.arg == "attrs"), node)
    if not isinstance(attrs, dict) or not all(isinstance(k, str) for k in attrs):
        raise p.error(PyptoSyntaxError, "a call's attrs= must be a dict with string keys", where,
                      hint='write attrs={"arg_directions": [pl.adir.input, ...]}')
    out = []
    for key, value in attrs.items():
        if isinstance(value, (list, tuple)):
            value = tuple(value)  # (kept as a tuple: IR attributes are immutable)
        if key == ARG_DIRECTIONS:
            bad = next((v for v in value if not isinstance(v, ArgDirection)), None) \
                if isinstance(value, tuple) else value
            if bad is not None:
                raise p.error(PyptoSyntaxError, f"arg_directions entries are pl.adir "
                              f"directions, got {bad!r}", where,
                              hint="one of pl.adir.input, output, inout, output_existing, "
                                   "no_dep, scalar per argument")
            if len(value) != n_args:
                raise p.error(PyptoTypeError, f"arg_directions has {len(value)} entries but the "
                              f"call has {n_args} arguments: the lengths must match", where)
        elif key == "manual_dep_edges":
            raise p.error(PyptoTypeError, "a call's attrs= cannot carry manual_dep_edges: "
                          "dependencies belong to a submitted task", where,
                          hint="write pl.submit(self.k, ..., deps=[tid]) instead")
        elif is_ir(value) or not isinstance(value, (bool, int, float, str, Enum, tuple)) or \
                (isinstance(value, tuple) and any(is_ir(v) for v in value)):
            raise p.error(PyptoSyntaxError, f"the call attribute '{key}' must be a literal, a "
                          f"pl enum member or a list of them, got {type(value).__name__}",
                          where)
        out.append((key, value))
    return tuple(sorted(out, key=lambda kv: kv[0]))


__all__ = ["ARG_DIRECTIONS", "call_attrs"]
