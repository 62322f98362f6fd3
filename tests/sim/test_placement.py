"""Ops computed in the windows a later write fills (`pypto.sim.batch.placement`): which
ops are placed, and their values (bit for bit as block by block)."""
from __future__ import annotations

import warnings

import batch_kernels as K
import numpy as np

from pypto.ir.nodes import Call, FunctionKind
from pypto.ir.transform import walk
from pypto.sim import SimConfig
from pypto.sim.batch.placement import placements
from pypto.sim.batch.plan import analyze

warnings.filterwarnings("ignore")


def _placed_ops(kernel, *args) -> list[str]:
    prog = kernel.lower(*args)
    (region,) = [f for f in prog.functions if f.kind is FunctionKind.INCORE]
    plan = analyze(region, {"r"})
    assert not isinstance(plan, str), plan
    got = placements(region, plan.alias)
    return sorted(n.op for n in walk(region.body) if isinstance(n, Call) and id(n) in got)


def _same_both_ways(kernel, x: np.ndarray) -> np.ndarray:
    y = np.zeros_like(x)
    r = kernel(x, y)
    assert r.batch_stats == {"batched": 1, "fallback": 0}, dict(r.batch_refusals)
    y2 = np.zeros_like(x)
    kernel(x, y2, config=SimConfig(batch=False))
    assert np.array_equal(y.view(np.uint8), y2.view(np.uint8))
    return y


def test_an_op_reading_its_own_operand_again_is_placed():
    x = np.random.default_rng(1).standard_normal((64, 64)).astype(np.float32)
    assert _placed_ops(K.placed_own_operand, x, np.zeros_like(x)) == ["exp", "row_expand_sub"]
    y = _same_both_ways(K.placed_own_operand, x)
    e = np.exp(x - x.max(axis=1, keepdims=True))
    assert np.allclose(y, e / e.sum(axis=1, keepdims=True), rtol=1e-6)


def test_an_op_reading_an_overwritten_value_cuts_the_chain():
    x = np.random.default_rng(2).standard_normal((64, 64)).astype(np.float32)
    assert _placed_ops(K.placed_older_value, x, np.zeros_like(x)) == []
    y = _same_both_ways(K.placed_older_value, x)
    a = np.exp(x)
    assert np.allclose(y, (a + np.float32(1.0)) * a.sum(axis=1, keepdims=True), rtol=1e-6)
