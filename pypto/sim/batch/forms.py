"""The affine forms of a region's integer offsets, for the batch plan (`plan._Analyzer`):
`(const, {symbol: coef})` over the symbols that differ per block (the block index
`BLOCK`, varying parameters), the quotients of the block index by a constant
(`lattice.QUOTIENT`), and uniform unknowns (("u", name): an integer the same in every
block - a loop index of the region, a value computed from uniform ones; ("f", name):
one not known to be an integer)."""
from __future__ import annotations

from typing import Any, Protocol

from pypto.ir.nodes import Assign, Call, Const, For, If, Var, While
from pypto.ir.transform import walk
from pypto.ops.facts import Role
from pypto.ops.registry import get
from pypto.sim.batch.lattice import QUOTIENT
from pypto.sim.batch.scalars import (
    AFFINE_SYMBOLS,
    DIV_SYMBOLS,
    index_symbol,
    int_const,
    int_result,
    int_scalar,
)
from pypto.sim.batch.state import NotBatchable

BLOCK = "$blk"  # the symbol of pl.get_block_idx() in an SPMD batch
SHIFTED = "#i"  # (after a loop variable's name) the iteration of a loop of shifted bounds


class Formed(Protocol):
    """What the affine forms read and note on the plan analyzer (`plan._Analyzer`)."""

    forms: dict  # the forms of the region's integer scalars, by name
    varying: set
    params: set
    loops: dict

    def is_var(self, e: Any) -> bool:
        """Does `e` differ per block?"""

    def mark(self, name: str, v: bool) -> None:
        """Note that `name` varies when `v`."""


def shifted_loop(an: Formed, s: For) -> None:
    """A counted loop whose bounds differ per block by the same amount (`for t in
    pl.range(t0, t0 + 64, 16)` with `t0` a block's): the same trips in every block,
    the variable varying, at `start + step * i` (`i` the symbol ("u", var#i) of a
    loop of known range, `SHIFTED`); else refuse."""
    a, z, c = form(an, s.start), form(an, s.stop), int_const(s.step)
    if a is None or z is None or not c or a[1] != z[1]:
        raise NotBatchable("loop bounds differ per block")
    name = s.var.name
    an.mark(name, True)
    index = name + SHIFTED
    an.loops[index] = (0, 1, max(0, -((a[0] - z[0]) // c)))
    an.forms[name] = (a[0], {**a[1], ("u", index): c})

def form(an: Formed, e: Any) -> Any:
    """The affine form (const, {symbol: coef}) of an integer scalar expression."""
    if isinstance(e, Const) and isinstance(e.value, int) and not isinstance(e.value, bool):
        return (e.value, {})
    if isinstance(e, int) and not isinstance(e, bool):
        return (e, {})
    if isinstance(e, Var):
        f = an.forms.get(e.name)
        if f is not None:
            return f
        if e.name in an.varying:
            return (0, {e.name: 1}) if e.name in an.params else None
        # a uniform unknown ("f": not known to be an integer)
        return (0, {("u" if int_scalar(e) else "f", e.name): 1})
    if isinstance(e, Call):
        op = get(e.op)
        if op.role is Role.BLOCK_INDEX:
            return (0, {BLOCK: 1})
        sym = index_symbol(op)
        if sym in AFFINE_SYMBOLS:
            a, b = form(an, e.args[0]), form(an, e.args[1])
            if a is None or b is None:
                return None
            if sym == "*":
                if not a[1]:
                    a, b = b, a
                if b[1]:
                    return None
                k = b[0]
                return (a[0] * k, {s: c * k for s, c in a[1].items()})
            sign = 1 if sym == "+" else -1
            coefs = dict(a[1])
            for s, c in b[1].items():
                coefs[s] = coefs.get(s, 0) + sign * c
            return (a[0] + sign * b[0], {s: c for s, c in coefs.items() if c})
        if sym in DIV_SYMBOLS and an.is_var(e):
            return split_form(sym, form(an, e.args[0]), int_const(e.args[1]))
    if not an.is_var(e):
        return (0, {("u" if int_result(e) else "f", id(e)): 1})
    return None

def split_form(sym: str, a: Any, c: int | None) -> Any:
    """The form of `a // c` or `a % c` when `a` is the block index plus a constant
    and `c` a positive constant: a quotient symbol, ("q", BLOCK, c, addend)
    (`lattice.split_block` separates blocks by quotient and remainder); else None."""
    if a is None or not c or c < 0 or a[1] != {BLOCK: 1}:
        return None
    q = (QUOTIENT, BLOCK, c, a[0])
    if sym == "//":
        return (0, {q: 1})
    return (a[0], {BLOCK: 1, q: -c})  # (a % c == a - c * (a // c))


def fixed_ints(an: Any) -> set[str]:
    """The uniform integer scalar parameters of the analysed region that its body never
    binds again."""
    bound: set[str] = set()
    for n in walk(an.func.body):
        if isinstance(n, Assign):
            bound.update(t.name for t in n.targets)
        elif isinstance(n, (For, While)):
            if isinstance(n, For):
                bound.add(n.var.name)
            bound.update(v.name for v in (*n.iter_args, *n.results))
        elif isinstance(n, If):
            bound.update(v.name for v in n.results)
    return {p.var.name for p in an.func.params
            if int_scalar(p.var) and p.var.name not in an.varying and p.var.name not in bound}


__all__ = ["BLOCK", "SHIFTED", "Formed", "fixed_ints", "form", "shifted_loop", "split_form"]
