"""Statement lists written out as Python (`pypto.sim.engine.bodygen`): loops with carried
values, ifs with results, a `break` (its loop stays a closure) and a `pl.while_` inside a
written loop compute what the closures compute (`test_op_closures` compares every
kernel of the equivalence suite both ways)."""
from __future__ import annotations

import numpy as np
import pytest

import pypto.language as pl
from pypto.sim import SimConfig, entry
from pypto.sim.engine import statements


@pl.jit
def running_sums(x: pl.Tensor[[8], pl.INT32], y: pl.Out[pl.Tensor[[8], pl.INT32]]):
    """A carried total, grown in one branch and shrunk in the other (an if with a
    result inside a loop with a carried value)."""
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="sums"):
        total = 0
        for i in pl.range(8):
            v = pl.read(x, [i])
            if v > 3:  # noqa: SIM108 - a kernel's if statement, not an expression
                total = total + v
            else:
                total = total - 1
            pl.write(y, [i], pl.cast(total, pl.INT32))
    return y


@pl.jit
def until_negative(x: pl.Tensor[[8], pl.INT32], y: pl.InOut[pl.Tensor[[8], pl.INT32]]):
    """Copies x up to its first negative element (a break: that loop stays a closure)."""
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="copy"):
        for i in pl.range(8):
            v = pl.read(x, [i])
            if v < 0:
                break
            pl.write(y, [i], v)
    return y


@pl.jit
def halvings(x: pl.Tensor[[4, 4], pl.INT32], y: pl.Out[pl.Tensor[[4, 4], pl.INT32]]):
    """How often each element halves before it reaches 1: a pl.while_ inside two written
    loops."""
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="halvings"):
        for r in pl.range(4):
            for c in pl.range(4):
                v0 = pl.read(x, [r, c])
                for (v, n) in pl.while_(init_values=(v0, 0)):
                    pl.cond(v > 1)
                    v2 = v // 2
                    n2 = n + 1
                    v_out, n_out = pl.yield_(v2, n2)
                pl.write(y, [r, c], pl.cast(n_out, pl.INT32))
    return y


@pytest.mark.parametrize("trace", [True, False])
def test_carried_value_and_branch_result(trace):
    x = np.array([5, 1, 4, 0, 9, 2, 3, 7], np.int32)
    y = np.zeros(8, np.int32)
    running_sums(x, y, config=SimConfig(trace=trace))
    assert y.tolist() == [5, 4, 8, 7, 16, 15, 14, 21]


@pytest.mark.parametrize("trace", [True, False])
def test_break_stops_the_loop(trace):
    x = np.array([3, 1, 4, -1, 5, 9, 2, 6], np.int32)
    y = np.full(8, 99, np.int32)
    until_negative(x, y, config=SimConfig(trace=trace))
    assert y.tolist() == [3, 1, 4, 99, 99, 99, 99, 99]


@pytest.mark.parametrize("trace", [True, False])
def test_while_inside_written_loops(trace):
    x = np.array([[1, 2, 3, 4], [5, 8, 16, 17], [0, 1, 31, 32], [64, 100, 7, 9]], np.int32)
    y = np.zeros((4, 4), np.int32)
    r = halvings(x, y, config=SimConfig(trace=trace))
    want = [[int(np.floor(np.log2(v))) if v > 1 else 0 for v in row] for row in x.tolist()]
    assert y.tolist() == want
    if trace:
        (task,) = r.trace.tasks
        # every element's halvings are scalar ops the task counted
        assert task.op_counts["scalar"] >= 2 * int(np.sum(want))


def test_their_loops_are_written_out(monkeypatch):
    """Not vacuous: these kernels' region bodies are generated functions."""
    written = []
    real = statements.written_body

    def spy(fc, stmts):
        fn = real(fc, stmts)
        if fn is not None:
            written.append(fn)
        return fn

    monkeypatch.setattr(statements, "written_body", spy)
    for kernel in (running_sums, halvings):
        compiled = kernel.compile()
        entry._table(compiled).by_config.clear()
        written.clear()
        x = np.arange(8, dtype=np.int32) if kernel is running_sums else \
            np.arange(16, dtype=np.int32).reshape(4, 4)
        kernel(x, np.zeros_like(x), config=SimConfig(trace=False))
        assert written, kernel.__name__
        assert all(fn.__code__.co_filename.startswith(f"<pypto:statements:{kernel.__name__}_")
                   for fn in written)
        # (the plain closures: nothing written)
        written.clear()
        kernel(x, np.zeros_like(x), config=SimConfig(trace=False, source="plain"))
        assert written == []
