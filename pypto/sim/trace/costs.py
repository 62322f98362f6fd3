"""The cost model's accounting (see the model in `pypto.sim.trace.trace`): what one op
call, one GM transfer or one L0C drain adds to the current task's record (counts,
bytes, FLOPs) and to the current block's cycles per pipe."""
from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from pypto.ir.nodes import Call
from pypto.ops.registry import OpDef, Unit
from pypto.platform import Platform
from pypto.sim.trace.trace import TaskRecord

Costs = dict[str, float]  # pipe -> cycles of the current block
Accountant = Callable[[TaskRecord, Costs, list, Any], None]


def accountant(platform: Platform, e: Call, op: OpDef, public: list[int]) -> Accountant:
    """The cost hook of one op call site: `acct(rec, costs, args, result)` adds the op's
    cycles, bytes and counts to the task record `rec` and the block's `costs`."""
    # (they run once per op a traced run executes: a count already there is the common
    # case, and the unit joins `units` with the first)
    unit = op.unit
    uname = unit.value
    p = platform
    nd = np.ndarray
    if unit is Unit.VECTOR:
        vbpc, issue = p.vector_bpc, p.vector_issue_cycles

        def vec(rec: TaskRecord, costs: Costs, args: list, r: Any) -> None:
            n = r.size if isinstance(r, nd) else 1
            for a in args:
                if isinstance(a, nd) and a.size > n:
                    n = a.size
            rec.vector_elements += n
            try:
                rec.op_counts[uname] += 1
            except KeyError:
                rec.op_counts[uname] = 1
                rec.units.add(uname)
            costs["vector"] += issue + n * 4 / vbpc

        return vec
    if unit is Unit.CUBE and op.matmul is not None:
        names = op.params
        i, j = names.index(op.matmul.lhs), names.index(op.matmul.rhs)
        pos = {k: n for n, k in enumerate(public)}
        ta_i = pos.get(names.index("a_trans")) if "a_trans" in names else None
        tb_i = pos.get(names.index("b_trans")) if "b_trans" in names else None
        li, ri = pos[i], pos[j]

        def cube(rec: TaskRecord, costs: Costs, args: list, r: Any) -> None:
            a, b = args[li], args[ri]
            if not (isinstance(a, np.ndarray) and isinstance(b, np.ndarray)):
                return
            ma, ka = (a.shape[-2], a.shape[-1]) if a.ndim >= 2 else (1, a.shape[-1])
            if ta_i is not None and args[ta_i]:
                ma, ka = ka, ma
            kb, nb = (b.shape[-2], b.shape[-1]) if b.ndim >= 2 else (b.shape[-1], 1)
            if tb_i is not None and args[tb_i]:
                kb, nb = nb, kb
            batch = max(1, a.size // max(1, a.shape[-1] * (a.shape[-2] if a.ndim >= 2
                                                             else 1)))
            isz = a.itemsize
            kt = 16 if isz <= 2 else 8
            passes = 1 if isz <= 2 else p.mad_fp32_passes
            cyc = p.mad_head_cycles + passes * math.ceil(ma / 16) * math.ceil(ka / kt) * \
                math.ceil(nb / 16)
            rec.flops += 2 * ma * ka * nb * batch
            rec.op_counts["cube"] = rec.op_counts.get("cube", 0) + 1
            rec.units.add("cube")
            costs["cube"] += cyc * batch
            rec.bytes["l1_to_l0"] += a.nbytes + b.nbytes
            costs["mte1"] += a.nbytes / p.l1_to_l0a_bpc + b.nbytes / p.l1_to_l0b_bpc

        return cube

    if unit is Unit.SCALAR:
        def scalar(rec: TaskRecord, costs: Costs, args: list, r: Any) -> None:
            try:
                rec.op_counts["scalar"] += 1
            except KeyError:
                rec.op_counts["scalar"] = 1
                rec.units.add("scalar")
            costs["scalar"] += 1

        return scalar

    def other(rec: TaskRecord, costs: Costs, args: list, r: Any) -> None:
        try:
            rec.op_counts[uname] += 1
        except KeyError:
            rec.op_counts[uname] = 1

    return other


def gm_cycles(platform: Platform, a: np.ndarray, ext: Sequence[int], nbytes: int) -> float:
    """MTE2 / MTE3 cycles of moving the window `ext` of GM tensor `a` (`nbytes` bytes):
    each row is rounded up to the platform's GM granule."""
    g = platform.gm_granule
    if not ext:
        return nbytes / platform.gm_bpc
    if list(ext[1:]) == list(a.shape[1:]):  # contiguous
        eff = math.ceil(nbytes / g) * g
    else:
        row = ext[-1] * a.itemsize
        rows = nbytes // row if row else 0
        eff = rows * math.ceil(row / g) * g
    return eff / platform.gm_bpc


def note_gm(rec: TaskRecord, costs: Costs, kind: str, nbytes: int, cycles: float) -> None:
    """A GM read (MTE2) or write (MTE3) of the current task: `kind` gm_read / gm_write."""
    try:
        rec.op_counts["mte"] += 1
    except KeyError:
        rec.op_counts["mte"] = 1
        rec.units.add("mte")
    rec.bytes[kind] += nbytes
    costs["mte2" if kind == "gm_read" else "mte3"] += cycles


def note_drain(platform: Platform, rec: TaskRecord, costs: Costs, ext: Sequence[int],
               itemsize: int) -> None:
    """A cube result of extent `ext` stored to GM: the FIX pipe drains L0C."""
    p = platform
    rows = math.prod(ext[:-1]) if len(ext) > 1 else 1
    row_bytes = (ext[-1] if ext else 1) * itemsize
    costs["fix"] += p.fix_fixed_cycles + rows * max(p.fix_row_floor, row_bytes / p.fix_bpc)
    rec.bytes["l0c_drain"] += math.prod(ext) * itemsize


def note_onchip_copy(platform: Platform, costs: Costs, nbytes: int) -> None:
    """A tile copied from another tile (no GM): one vector instruction."""
    costs["vector"] += platform.vector_issue_cycles + nbytes / platform.vector_bpc


__all__ = [
    "Accountant",
    "Costs",
    "accountant",
    "gm_cycles",
    "note_drain",
    "note_gm",
    "note_onchip_copy",
]
