"""Hand-written kernels (`@pl.jit.extern`, `@pl.function(external_source=...)`): the
Python function is only a signature, its body is C++.

Such a function is parsed into an InCore function with no ops: its parameters come
from the annotations (bare `pl.Tensor` ones from the caller's arguments, as for any
InCore kernel), and its result is what it wrote - a declared return binds to the
Out / InOut parameters in order, the real toolchain's rule. The function carries the
`extern` attribute (the C++ files), which the simulator reads to refuse the launch
with a located `NotSimulatableError`; compiling, the region graph and the text form
treat it like any kernel.
"""
from __future__ import annotations

import ast
from typing import Any

from pypto.errors import PyptoSyntaxError, PyptoTypeError
from pypto.frontend.annotations import AnnotationError, to_type
from pypto.frontend.source import parse_python
from pypto.ir.nodes import Direction, Param, Return
from pypto.ir.types import TupleType
from pypto.language.kernels import ExternSpec

_Def = ast.FunctionDef | ast.AsyncFunctionDef


def extern_body(p: Any, tree: _Def, params: list[Param], spec: ExternSpec
                ) -> tuple[tuple, tuple, tuple]:
    """(body, returns, attrs) of the hand-written kernel declared by `tree`."""
    _check_stub(p, tree)
    outs = [prm for prm in params if prm.direction is not Direction.IN]
    count = _declared_results(p, tree)
    if count > len(outs):
        raise p.error(PyptoTypeError, f"{tree.name} declares {count} result(s) but has "
                      f"{len(outs)} pl.Out / pl.InOut parameter(s): a hand-written kernel "
                      "returns the tensors it writes", tree.returns or tree,
                      hint="declare the written tensors as pl.Out[...] / pl.InOut[...] "
                           "parameters")
    values = tuple(prm.var for prm in outs[:count])
    body = (Return(values, p.span(tree)),) if values else ()
    returns = tuple(v.type for v in values)
    attrs = (("extern", (spec.core_type,) + spec.sources),)
    return body, returns, attrs


def _check_stub(p: Any, tree: _Def) -> None:
    """The body of a signature stub is a docstring and/or `...` / `pass`."""
    for stmt in tree.body:
        if isinstance(stmt, ast.Pass):
            continue
        if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant) and \
                (stmt.value.value is Ellipsis or isinstance(stmt.value.value, str)):
            continue
        raise p.error(PyptoSyntaxError, f"{tree.name} is a hand-written kernel: its Python body "
                      "must be `...` (the implementation is the C++ source)", stmt,
                      hint="remove the body, or drop external_source / @pl.jit.extern to write "
                           "the kernel in pl")


def _declared_results(p: Any, tree: _Def) -> int:
    r = tree.returns
    if r is None:
        return 0
    if isinstance(r, ast.Subscript) and isinstance(r.value, ast.Name) and \
            r.value.id in ("tuple", "Tuple"):
        return len(r.slice.elts) if isinstance(r.slice, ast.Tuple) else 1
    ann = p.visit_expr(r)
    if ann is None:
        return 0
    if isinstance(ann, str):  # `from __future__ import annotations`
        ann = p.visit_expr(parse_python(ann, mode="eval").body)
    try:
        t, _ = to_type(ann)
    except AnnotationError as exc:
        raise p.error(PyptoTypeError, f"return annotation: {exc.message}", tree.returns,
                      hint=exc.hint) from None
    return len(t.items) if isinstance(t, TupleType) else 1
