"""The `div` check: integer division by zero.

An integer division (or remainder) by zero has one defined result
(`pypto.ops.intdiv`: the quotient saturates by the dividend's sign, 0 / 0 and x % 0
give 0), computed whether or not the check is on. With `checks=(..., "div")` - on by
default - the simulator also reports where it happened: the op, the divisor, the task,
region and block, and the first index whose divisor is zero (within the valid region
of the result, so the padding of a partial tile does not count). Strict runs raise
`DivisionByZeroError` there; with `strict=False` each (site, divisor) is reported once
in `SimResult.zero_divisions` (with a count) and the run goes on.

Only ops whose registry entry names a `divisor` and whose result is an integer are
watched (float division is IEEE: ±inf and NaN are its defined results). The check is
compiled into those op calls only, so a run without integer division pays nothing.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from pypto.errors import SimulationError
from pypto.ir.span import Span
from pypto.ops.numeric import valid_shape
from pypto.sim.faults import fault, region_name, source_name


class DivisionByZeroError(SimulationError):
    """A kernel divided an integer by zero (`checks=("div",)`, strict)."""

    code = "S012"

    def __init__(self, message: str, span: Span | None = None, hint: str | None = None,
                 note: str | None = None, *, division: ZeroDivision | None = None,
                 **kw: Any):
        super().__init__(message, span, hint, note, **kw)
        self.division = division


@dataclass
class ZeroDivision:
    """One op call site that divided integers by zero (the first time, and how often)."""

    op: str  # "pl.div", "scalar //", ...
    divisor: str  # the divisor's name ("<expression>" when it has none, "0" a constant)
    task: int  # -1: orchestration
    region: str  # the task's name_hint ("orchestration" outside tasks)
    block: int | None
    source: str  # file:line:col of the op call
    line: int
    index: tuple | None  # first element of the result divided by zero (None: a scalar)
    count: int = 1  # how many calls at this site divided by zero

    def __str__(self) -> str:
        blk = f" block {self.block}" if self.block is not None else ""
        at = f" at {list(self.index)} of the result" if self.index is not None else ""
        return (f"{self.op} divides by zero (divisor '{self.divisor}' is 0{at}) in task "
                f"{self.task} "
                f"'{self.region}'{blk} at {self.source}"
                + (f" ({self.count} times)" if self.count > 1 else ""))

    def to_dict(self) -> dict:
        return {"op": self.op, "divisor": self.divisor, "task": self.task,
                "region": self.region, "block": self.block, "source": self.source,
                "index": list(self.index) if self.index is not None else None,
                "count": self.count}


class Frame(Protocol):
    """Where the division happens (a task frame)."""

    region: str | None
    block: int | None
    task_id: int


def zero_at(divisor: Any, result: Any) -> tuple | None:
    """The first index (in the result's coordinates, inside its valid region) whose
    divisor is zero; () for a scalar division by zero; None when nothing divides by 0."""
    if not isinstance(divisor, np.ndarray):
        return () if divisor == 0 and not isinstance(divisor, (str, bytes)) else None
    zero = divisor == 0
    if not zero.any():
        return None
    shape = np.shape(result)
    if len(shape) >= zero.ndim:
        try:
            zero = np.broadcast_to(zero, shape)
        except ValueError:
            pass
        else:
            zero = zero[tuple(slice(0, n) for n in valid_shape(result))]
    hit = np.argwhere(zero)
    return tuple(int(i) for i in hit[0]) if len(hit) else None


class DivideLog:
    """One run's integer divisions by zero (see the module docstring)."""

    def __init__(self, strict: bool) -> None:
        self.strict = strict
        self.divisions: list[ZeroDivision] = []
        self._sites: dict[tuple, ZeroDivision] = {}

    def found(self, fr: Frame, span: Span | None, op: str, divisor: str,
              index: tuple) -> None:
        """A division by zero at `span`: raise (strict) or remember it."""
        idx = index if index != () else None
        divisor = source_name(divisor)
        if self.strict:
            at = f" at {list(idx)} of the result" if idx is not None else ""
            err = fault(
                f"{op} divides an integer by zero: divisor '{divisor}' is 0{at}", span,
                region=fr.region, block=fr.block, tensor=divisor, indices=idx,
                hint="guard the divisor (its value is only known at run time), or run with "
                     "SimConfig(strict=False) to go on with the defined result",
                note="an integer division by zero gives the largest value of the type for a "
                     "positive dividend, the smallest for a negative one and 0 for 0 / 0 "
                     "(x % 0 gives 0), as pl.cast rounds the float quotient")
            raise DivisionByZeroError(err.message, err.span, err.hint, err.note,
                                      division=self._report(fr, span, op, divisor, idx),
                                      tensor=divisor, region=err.region, block=err.block,
                                      indices=idx)
        key = (span, op, divisor)
        seen = self._sites.get(key)
        if seen is not None:
            seen.count += 1
            return
        self._sites[key] = d = self._report(fr, span, op, divisor, idx)
        self.divisions.append(d)

    @staticmethod
    def _report(fr: Frame, span: Span | None, op: str, divisor: str,
                idx: tuple | None) -> ZeroDivision:
        return ZeroDivision(op, divisor, fr.task_id, region_name(fr.region), fr.block,
                            str(span) if span is not None else "?",
                            span.line if span is not None else 0, idx)


__all__ = ["DivideLog", "DivisionByZeroError", "ZeroDivision", "zero_at"]
