"""Trace-mode cost accounting of op calls (see the cost model in `pypto.sim.trace`)."""
from __future__ import annotations

import math
from typing import Any, Callable

import numpy as np

from pypto.ir.nodes import Call
from pypto.ops.registry import Unit


def accountant(m: Any, e: Call, op: Any, public: list) -> Callable:
    """The trace-mode cost hook of one op call site: `acct(args, result)` adds the op's
    cycles, bytes and counts to the current task (`m.cur`) and block costs (`m.bc`)."""
    unit = op.unit
    uname = unit.value
    p = m.platform
    if unit is Unit.VECTOR:
        vbpc, issue = p.vector_bpc, p.vector_issue_cycles

        def vec(args: list, r: Any) -> None:
            rec = m.cur
            n = r.size if isinstance(r, np.ndarray) else 1
            for a in args:
                if isinstance(a, np.ndarray) and a.size > n:
                    n = a.size
            rec.vector_elements += n
            rec.op_counts[uname] = rec.op_counts.get(uname, 0) + 1
            rec.units.add(uname)
            m.bc["vector"] += issue + n * 4 / vbpc

        return vec
    if unit is Unit.CUBE and op.matmul is not None:
        names = op.params
        i, j = names.index(op.matmul.lhs), names.index(op.matmul.rhs)
        pos = {k: n for n, k in enumerate(public)}
        ta_i = pos.get(names.index("a_trans")) if "a_trans" in names else None
        tb_i = pos.get(names.index("b_trans")) if "b_trans" in names else None
        li, ri = pos.get(i), pos.get(j)

        def cube(args: list, r: Any) -> None:
            rec = m.cur
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
            m.bc["cube"] += cyc * batch
            rec.bytes["l1_to_l0"] += a.nbytes + b.nbytes
            m.bc["mte1"] += a.nbytes / p.l1_to_l0a_bpc + b.nbytes / p.l1_to_l0b_bpc

        return cube

    def other(args: list, r: Any) -> None:
        rec = m.cur
        rec.op_counts[uname] = rec.op_counts.get(uname, 0) + 1
        if unit is Unit.SCALAR:
            m.bc["scalar"] += 1
            rec.units.add("scalar")

    return other

