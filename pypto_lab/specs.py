"""TensorSpecs against the kernel's signature, before anything runs.

A `%%pypto --run SPECS` cell checks names, order, ranks, static dims and dtypes of the
specs against the compiled entry function first, so a spec that does not fit the kernel
is one located error naming the spec and the parameter, not a traceback from deep in
the user's golden function or the simulator. `pl.dynamic` dims take any size, but one
symbol must get one size across all specs.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from pypto.errors import UserError
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
    given = [getattr(s, "name", None) for s in specs]
    if names != given:
        why = ("in a different order" if sorted(names) == sorted(map(str, given))
               else "with different names" if len(names) == len(given)
               else f"{len(given)} specs for {len(names)} parameters")
        missing = [n for n in names if n not in given]
        extra = [g for g in given if g not in names]
        detail = "; ".join(filter(None, [
            f"no spec for {', '.join(missing)}" if missing else "",
            f"no parameter named {', '.join(map(str, extra))}" if extra else ""]))
        raise SpecMismatchError(
            f"{specs_name} do not match the parameters of '{program.entry}' ({why}): kernel "
            f"({', '.join(names)}), {specs_name} ({', '.join(map(str, given))})"
            + (f"; {detail}" if detail else ""), entry.span,
            hint="list one TensorSpec (or ScalarSpec) per parameter, in parameter order, "
                 "named after it")
    sizes: dict[str, tuple[int, str]] = {}
    for i, (p, s) in enumerate(zip(params, specs)):
        _check_one(p, s, f"{specs_name}[{i}]", sizes)


def _check_one(param: Any, spec: Any, where: str, sizes: dict) -> None:
    t = param.var.type
    name = param.var.name
    span = getattr(param, "span", None) or getattr(param.var, "span", None)
    label = f"{where} ({type(spec).__name__} '{name}')"
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
                f"= {seen[0]}", span, hint=f"one pl.dynamic symbol is one size in a run")
    dtype = _np_dtype(getattr(spec, "dtype", None))
    if dtype is not None and dtype != t.dtype.np:
        raise SpecMismatchError(
            f"{label} has dtype {dtype.name}, but '{name}' is {t}", span,
            hint=f"use dtype {t.dtype.np.name} (pl.{t.dtype.name}) in the spec")


def _np_dtype(dtype: Any) -> np.dtype | None:
    try:
        from pypto.golden._interop import np_dtype

        return np_dtype(dtype)
    except (TypeError, ValueError):
        return None
