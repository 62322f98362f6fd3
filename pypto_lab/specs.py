"""TensorSpecs against the kernel's signature, before anything runs.

A `%%pypto --run SPECS` cell checks the count, order, ranks, static dims and dtypes of
the specs against the compiled entry function first (specs bind by position, as in the
golden harness; the same names in another order are an error - except for a multi-card
`@pl.jit.host` program, whose specs bind by name as the harness dispatches it), so a
spec that does not fit the kernel is one located error naming the spec and the
parameter, not a traceback from deep in the user's golden function or the simulator.
`pl.dynamic` dims take any size, but one symbol must get one size across all specs.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from pypto.errors import UserError
from pypto.ir.nodes import FunctionKind
from pypto.ir.types import ScalarType, ShapedType


class SpecMismatchError(UserError):
    """A TensorSpec does not fit the kernel parameter it stands for."""

    code = "E102"


def check_specs(compiled: Any, specs: list, specs_name: str = "specs") -> None:
    """Raise `SpecMismatchError` (located at the parameter) on the first spec that
    does not fit; return quietly otherwise."""
    program = compiled.program
    entry = program.function(program.entry)
    params = list(entry.params)
    names = [p.var.name for p in params]
    given = [str(getattr(s, "name", "?")) for s in specs]
    if entry.kind is FunctionKind.HOST:  # a multi-card program: its specs bind by name
        by_name = {n: i for i, n in enumerate(given)}
        missing = [n for n in names if n not in by_name]
        if missing:
            raise SpecMismatchError(
                f"{specs_name} do not match the parameters of '{program.entry}' (no spec "
                f"named {', '.join(repr(n) for n in missing)}): kernel ({', '.join(names)}), "
                f"{specs_name} ({', '.join(given)})", entry.span,
                hint="a multi-card (@pl.jit.host) program takes each parameter's spec by "
                     "its name, in any order")
        order = [by_name[n] for n in names]
    else:
        order = list(range(len(specs)))
    picked = [given[i] for i in order]
    why = (f"{len(given)} specs for {len(names)} parameters" if len(names) != len(picked)
           else "the same names in a different order"
           if sorted(names) == sorted(picked) and names != picked else "")
    if why:  # specs bind by position (as the harness and the device runtime do)
        raise SpecMismatchError(
            f"{specs_name} do not match the parameters of '{program.entry}' ({why}): kernel "
            f"({', '.join(names)}), {specs_name} ({', '.join(given)})", entry.span,
            hint="list one TensorSpec (or ScalarSpec) per parameter, in parameter order")
    sizes: dict[str, tuple[int, str]] = {}
    for p, i in zip(params, order):
        _check_one(p, specs[i], f"{specs_name}[{i}]", sizes)


def _check_one(param: Any, spec: Any, where: str, sizes: dict) -> None:
    t = param.var.type
    name = param.var.name
    span = getattr(param, "span", None) or getattr(param.var, "span", None)
    spec_name = getattr(spec, "name", name)
    label = f"{where} ({type(spec).__name__} '{spec_name}'" + (
        f", bound to '{name}')" if spec_name != name else ")")
    if isinstance(t, ScalarType):
        if hasattr(spec, "shape") and not hasattr(spec, "to_python"):
            raise SpecMismatchError(f"{label} is a TensorSpec, but '{name}' is {t}", span,
                                    hint=f"give '{name}' a ScalarSpec")
        return
    if not isinstance(t, ShapedType):
        return
    shape = getattr(spec, "shape", None)
    if shape is None:
        raise SpecMismatchError(f"{label} is not a TensorSpec, but '{name}' is {t}", span,
                                hint=f"give '{name}' a TensorSpec with its shape and dtype")
    shape = [int(d) for d in shape]
    if len(shape) != len(t.shape):
        raise SpecMismatchError(
            f"{label} has shape {shape} (rank {len(shape)}), but '{name}' is {t} "
            f"(rank {len(t.shape)})", span, hint="give the spec the parameter's rank")
    for axis, (want, got) in enumerate(zip(t.shape, shape)):
        if isinstance(want, int):
            if want != got:
                raise SpecMismatchError(
                    f"{label} has shape {shape}, but '{name}' is {t}: axis {axis} is "
                    f"{got}, the kernel says {want}", span,
                    hint="make the spec's shape the parameter's (or declare the dim "
                         "pl.dynamic)")
            continue
        symbol = str(want)
        seen = sizes.setdefault(symbol, (got, name))
        if seen[0] != got:
            raise SpecMismatchError(
                f"{label}: axis {axis} ({symbol}) is {got}, but '{seen[1]}' gave {symbol} "
                f"= {seen[0]}", span, hint="one pl.dynamic symbol is one size in a run")
    dtype = _np_dtype(getattr(spec, "dtype", None))
    want = t.dtype.np
    # the harness reads a signed array as the unsigned parameter type of the same width
    # (torch has no uint16 / uint32)
    same_bits = dtype is not None and dtype.kind == "i" and want.kind == "u" and \
        dtype.itemsize == want.itemsize
    if dtype is not None and dtype != want and not same_bits:
        raise SpecMismatchError(
            f"{label} has dtype {dtype.name}, but '{name}' is {t}", span,
            hint=f"use dtype {t.dtype.np.name} (pl.{t.dtype.name}) in the spec")


def _np_dtype(dtype: Any) -> np.dtype | None:
    try:
        from pypto.golden._interop import np_dtype

        return np_dtype(dtype)
    except (TypeError, ValueError):
        return None
