"""The op call closures written per call-site shape (`pypto.sim.engine.opcall`), the
statement lists written out as Python (`pypto.sim.engine.bodygen`) and the batched
region bodies (`pypto.sim.batch.codegen`) are indistinguishable from the plain closures
they stand in for (`SimConfig(source="plain")`: `FnCompiler.op_call` behind its guard,
sequences of statement closures, cores behind closures): the same outputs, traces and
faults for every kernel of the equivalence suite, batched and block by block, and the
same faults (a missing variable, a failing impl, a division by zero) in isolation."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import pypto.language as pl
from pypto.errors import SimulationError
from pypto.sim import SimConfig, entry
from pypto.sim.engine.opcall import CONST, EXPR, VAR, OpSteps, ResultShapeError, op_closure
from pypto.sim.engine.values import FRAME
from tests.sim.test_speed_equivalence import KERNELS, _inputs, _run, canonical_trace

T, WIN, BLOCK = 24, 16, 4


@pl.jit
def window_rows(pos: pl.Tensor[[T], pl.INT32], table: pl.Tensor[[16], pl.INT32],
                rows: pl.Out[pl.Tensor[[T, WIN], pl.INT32]]):
    """A scalar loop of index arithmetic in one block, as pypto-lib's sliding-window
    index regions write it: each row holds the cache rows of the last WIN positions
    (-1 where the window starts before 0 or the page is unmapped)."""
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="window_rows"):
        for t in pl.range(T):
            row = pl.full([1, WIN], dtype=pl.INT32, value=-1)
            p = pl.read(pos, [t])
            valid = pl.min(pl.cast(WIN, pl.INT32), p + 1)
            start = p + 1 - valid
            for c in pl.range(WIN):
                c32 = pl.cast(c, pl.INT32)
                if c32 < valid:
                    key = start + c32
                    slot = key // BLOCK
                    blk = pl.read(table, [pl.cast(slot, pl.INDEX)])
                    if blk >= 0:
                        pl.write(row, [0, c], pl.cast(blk * BLOCK + (key - slot * BLOCK),
                                                      pl.INT32))
            rows[t:t + 1, 0:WIN] = row
    return rows


def _window_rows_ref(pos: np.ndarray, table: np.ndarray) -> np.ndarray:
    out = np.full((T, WIN), -1, np.int32)
    for t in range(T):
        valid = min(WIN, int(pos[t]) + 1)
        start = int(pos[t]) + 1 - valid
        for c in range(valid):
            key = start + c
            blk = int(table[key // BLOCK])
            if blk >= 0:
                out[t, c] = blk * BLOCK + key % BLOCK
    return out


@pl.jit
def halve(x: pl.Tensor[[4], pl.INT32], y: pl.Out[pl.Tensor[[4], pl.INT32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="halve"):
        for i in pl.range(4):
            d = pl.read(x, [i])
            pl.write(y, [i], pl.cast(100 // d, pl.INT32))
    return y


@pytest.mark.parametrize("trace", [True, False])
def test_scalar_loop_values(trace):
    pos = np.array([0, 3, 5, 17, 40, 63] * 4, np.int32)
    table = np.array([7, -1, 2, 9, 4, 0, -1, 3, 1, 5, 6, 8, 10, 11, 12, 13], np.int32)
    rows = np.zeros((T, WIN), np.int32)
    r = window_rows(pos, table, rows, config=SimConfig(trace=trace))
    np.testing.assert_array_equal(rows, _window_rows_ref(pos, table))
    assert rows[1].tolist() == [28, 29, 30, 31] + [-1] * 12
    # position 40: keys 25..40; page 6 (keys 24..27) is unmapped, page 10 is block 6
    assert rows[4, :3].tolist() == [-1, -1, -1] and rows[4, 3] == 12 and rows[4, 15] == 24
    if trace:
        (task,) = r.trace.tasks
        assert task.op_counts["scalar"] > 0 and task.op_counts["vector"] > 0


@pytest.mark.parametrize("batch", [False, True])
@pytest.mark.parametrize("kernel", KERNELS)
def test_written_closures_equal_plain_ones(kernel, batch):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            compiled = kernel.compile()
        except Exception:  # noqa: BLE001 - kernels that need example arguments
            pytest.skip("needs example arguments or does not compile")
    args = _inputs(list(compiled.program.entry_function.params), np.random.default_rng(11))
    if args is None:
        pytest.skip("shapes computed from dynamic dims")
    for trace in (True, False):
        r0, out0, err0 = _run(compiled, args, batch=batch, trace=trace)
        r1, out1, err1 = _run(compiled, args, batch=batch, trace=trace, source="plain")
        entry._table(compiled).by_config.clear()
        assert err0 == err1
        if err0 is not None:
            continue
        for a, b in zip(out0, out1):
            if isinstance(a, np.ndarray):
                assert np.array_equal(a.view(np.uint8), b.view(np.uint8)), "outputs differ"
        if trace:
            assert canonical_trace(r0.trace) == canonical_trace(r1.trace)
        assert r0.batch_stats == r1.batch_stats


# --- faults, in isolation ---------------------------------------------------------------


class _Frame:
    def __init__(self):
        self.rec = None
        self.costs = {}

    def fault(self, message, span=None, **kw):
        return SimulationError(message, span, kw.get("hint"), kw.get("note"))


def _closure(impl, operands, **kw):
    steps = OpSteps("my_op", None, impl, False, kw.get("cast"), None, kw.get("acct"),
                    kw.get("divisor"))
    return op_closure(operands, steps, kw.get("store"))


def test_operands_of_each_kind_in_order():
    seen = []
    f = _closure(lambda a, b, c: seen.append((a, b, c)) or a + b + c,
                 [(VAR, "x", None), (CONST, 10, None), (EXPR, lambda env: env["y"] * 2, None)],
                 cast=float)
    env = {FRAME: _Frame(), "x": 1, "y": 3}
    assert f(env) == 17.0 and type(f(env)) is float
    assert seen[0] == (1, 10, 6)
    s = _closure(lambda a: a + 1, [(VAR, "x", None)], store="z")
    assert s(env) is None and env["z"] == 2


def test_missing_variable_is_a_fault():
    f = _closure(lambda a: a, [(VAR, "nope", None)])
    with pytest.raises(SimulationError, match="variable 'nope' is used before it has a value"):
        f({FRAME: _Frame()})


def test_impl_failures_are_named_after_the_op():
    def boom(a):
        raise ValueError("bad value")

    with pytest.raises(SimulationError, match="pl op 'my_op' failed while simulating: "
                                              "ValueError: bad value") as e:
        _closure(boom, [(CONST, 1, None)])({FRAME: _Frame()})
    assert isinstance(e.value.__cause__, ValueError)

    def zero(a):
        return a // 0

    with pytest.raises(SimulationError, match="pl op 'my_op' divides by zero") as e:
        _closure(zero, [(CONST, 1, None)])({FRAME: _Frame()})
    assert e.value.__cause__ is None

    def shape(a):
        raise ResultShapeError("my_op produced shape [3]")

    with pytest.raises(SimulationError, match=r"produced shape \[3\]") as e:
        _closure(shape, [(CONST, 1, None)])({FRAME: _Frame()})
    assert "bug in pypto" in str(e.value.note)


def test_watched_divisor_reports_after_the_cost():
    order = []
    found = []
    f = _closure(lambda a, b: a // b if b else 0, [(VAR, "a", None), (VAR, "b", None)],
                 acct=lambda rec, costs, args, r: order.append(("cost", args, r)),
                 divisor=(1, lambda d, r: () if d == 0 else None,
                          lambda fr, at: found.append(at)))
    fr = _Frame()
    fr.rec = object()  # (traced: the cost hook runs)
    assert f({FRAME: fr, "a": 7, "b": 2}) == 3 and found == []
    assert f({FRAME: fr, "a": 7, "b": 0}) == 0 and found == [()]
    assert order == [("cost", [7, 2], 3), ("cost", [7, 0], 0)]


def test_division_by_a_zero_scalar_through_the_check():
    x = np.array([5, 4, 0, 2], np.int32)
    y = np.zeros(4, np.int32)
    r = halve(x, y, config=SimConfig(checks=("div",), strict=False))
    assert y.tolist() == [20, 25, 2 ** 31 - 1, 50]
    (z,) = r.zero_divisions
    assert z.divisor == "d" and z.count == 1
