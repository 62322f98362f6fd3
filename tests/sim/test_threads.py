"""Concurrent calls of one kernel (issue 16, item 1).

Several threads call the same compiled kernel at once - batched and block by block,
with C- and Fortran-ordered arrays (Fortran-ordered outputs go through a device copy
that is copied back) - and every call must give exactly what numpy gives. Each test
starts from a fresh compiled program, so the first calls (compiling the closures and
the batch plans) race too. The interpreter switches threads every 10 us meanwhile, so
the calls interleave far more than they would by themselves.
"""
from __future__ import annotations

import gc
import sys
import threading

import numpy as np
import pytest

import pypto.language as pl
from pypto.errors import PyptoError
from pypto.ops import numeric
from pypto.sim import SimConfig, run_compiled
from pypto.sim.runtime.switches import gc_paused

THREADS = 4
CALLS = 100


@pl.jit
def tiles(x: pl.Tensor[[64, 32], pl.FP32], w: pl.Tensor[[1, 32], pl.FP32],
          y: pl.Out[pl.Tensor[[64, 32], pl.FP32]]):
    for i in pl.parallel(0, 64, 16):
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="scale"):
            t = pl.mul(pl.add(x[i:i + 16, :], 1.0), 2.0)
            y[i:i + 16, :] = pl.col_expand_mul(t, w[:, :])
    return y


@pl.jit
def blocks(x: pl.Tensor[[8, 16], pl.FP32], acc: pl.InOut[pl.Tensor[[8, 16], pl.FP32]],
           y: pl.Out[pl.Tensor[[8, 16], pl.FP32]]):
    for b in pl.spmd(8, name_hint="rows"):
        row = pl.add(x[b:b + 1, :], 0.5)
        acc[b:b + 1, :] = pl.add(acc[b:b + 1, :], row)
        y[b:b + 1, :] = pl.mul(row, 3.0)
    return y


def _tiles_case(rng, order):
    x = np.asarray(rng.standard_normal((64, 32)), np.float32, order=order)
    w = rng.standard_normal((1, 32)).astype(np.float32)
    y = np.zeros((64, 32), np.float32, order=order)
    want = (((x + np.float32(1)) * np.float32(2)) * w,)
    return (x, w, y), (y,), want


def _blocks_case(rng, order):
    x = np.asarray(rng.standard_normal((8, 16)), np.float32, order=order)
    acc = np.asarray(rng.standard_normal((8, 16)), np.float32, order=order)
    y = np.zeros((8, 16), np.float32, order=order)
    row = x + np.float32(0.5)
    want = (acc + row, row * np.float32(3))
    return (x, acc, y), (acc, y), want


@pytest.fixture
def switch_often():
    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-5)
    yield
    sys.setswitchinterval(old)


def _hammer(kernel, case, config) -> tuple[list, list]:
    """THREADS threads x CALLS calls of `kernel`, alternating C and Fortran order."""
    compiled = kernel.compile()
    # a fresh compiled program: its executables, closures and batch plans are made by
    # the racing first calls
    compiled = type(compiled)(compiled.program, compiled.records, compiled.analyses,
                              compiled.warnings, compiled.platform, compiled.source)
    wrong: list = []
    errors: list = []
    start = threading.Barrier(THREADS)

    def work(t: int) -> None:
        rng = np.random.default_rng(t)
        start.wait()
        for c in range(CALLS):
            order = "F" if (t + c) % 2 else "C"
            args, outs, want = case(rng, order)
            try:
                run_compiled(compiled, args, {}, config)
            except Exception as exc:  # noqa: BLE001 - collected, reported below
                errors.append(f"{type(exc).__name__}: {exc}")
                continue
            if not all(np.array_equal(o, w) for o, w in zip(outs, want)):
                wrong.append((t, c, order))

    threads = [threading.Thread(target=work, args=(t,)) for t in range(THREADS)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    return wrong, errors


@pytest.mark.parametrize("batch", [True, False], ids=["batched", "block-by-block"])
@pytest.mark.parametrize("kernel,case", [(tiles, _tiles_case), (blocks, _blocks_case)],
                         ids=["parallel-loop", "spmd-inout"])
def test_concurrent_calls_are_correct(kernel, case, batch, switch_often):
    config = SimConfig(batch=batch)
    wrong, errors = _hammer(kernel, case, config)
    assert errors == []
    assert wrong == []
    # the batched runs did run batched (the comparison is not only block by block)
    x = case(np.random.default_rng(0), "C")[0]
    r = run_compiled(kernel.compile(), x, {}, config)
    assert (r.batch_stats["batched"] > 0) == batch


def test_concurrent_traced_calls_keep_their_own_trace(switch_often):
    config = SimConfig(trace=True)
    compiled = tiles.compile()
    counts: list = []

    def work(t: int) -> None:
        rng = np.random.default_rng(t)
        for _ in range(25):
            r = run_compiled(compiled, _tiles_case(rng, "F")[0], {}, config)
            counts.append((r.task_count, len(r.trace.tasks),
                           sorted({a.tensor for k in r.trace.tasks for a in k.accesses})))

    threads = [threading.Thread(target=work, args=(t,)) for t in range(THREADS)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert len(counts) == THREADS * 25
    assert all(c == (4, 4, ["w", "x", "y"]) for c in counts), counts[:3]


def test_process_wide_switches_are_restored(switch_often):
    """Runs pause the cyclic GC and quiet numpy's fp errors; after concurrent runs both
    are as they were, whatever the interleaving."""
    assert gc.isenabled()
    _hammer(tiles, _tiles_case, SimConfig())
    assert gc.isenabled()
    assert not numeric.fp_quiet()


def test_gc_pause_is_counted_across_threads():
    """The first run in pauses the GC, the last one out resumes it (a thread seeing it
    paused by another must not leave it paused)."""
    assert gc.isenabled()
    a_in, b_in, a_out = threading.Event(), threading.Event(), threading.Event()
    seen = {}

    def a() -> None:
        with gc_paused():
            a_in.set()
            b_in.wait()
        a_out.set()

    def b() -> None:
        a_in.wait()
        with gc_paused():
            b_in.set()
            a_out.wait()
            seen["inside b, after a left"] = gc.isenabled()

    ta, tb = threading.Thread(target=a), threading.Thread(target=b)
    ta.start()
    tb.start()
    ta.join()
    tb.join()
    assert seen == {"inside b, after a left": False}
    assert gc.isenabled()


def test_fp_quiet_is_per_thread():
    """numpy's error state is per thread, so the flag telling op impls that the run
    already ignores fp errors is too: a thread outside any run never sees it set."""
    inside, checked = threading.Event(), threading.Event()
    seen = {}

    def run() -> None:
        with numeric.quiet_fp():
            seen["in the run"] = numeric.fp_quiet()
            inside.set()
            checked.wait()

    def other() -> None:
        inside.wait()
        seen["other thread"] = numeric.fp_quiet()
        checked.set()

    ts = [threading.Thread(target=run), threading.Thread(target=other)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert seen == {"in the run": True, "other thread": False}
    assert not numeric.fp_quiet()


@pl.jit
def _overflowing(x: pl.Tensor[[64, 32], pl.FP32], y: pl.Out[pl.Tensor[[64, 32], pl.FP32]]):
    for r in pl.parallel(0, 64, 8):
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="overflow"):
            y[r:r + 8, :] = pl.mul(x[r:r + 8, :], 1e30)
    return y


def test_a_call_ignores_fp_errors_and_restores_the_callers_state():
    """The short path sets numpy's error state as np.errstate(all="ignore") would (the
    caller's error callback and buffer size kept) and restores it, also when it fails."""
    x = np.full((64, 32), 1e30, np.float32)
    calls: list = []
    with np.errstate(over="raise", invalid="call", call=lambda *a: calls.append(a)):
        np.setbufsize(16384)
        before = (np.geterr(), np.geterrcall(), np.getbufsize())
        y = np.zeros_like(x)
        r = _overflowing(x, y)  # (no FloatingPointError: ignored inside)
        assert r.batch_stats["batched"] == 1 and np.isinf(y).all()
        assert (np.geterr(), np.geterrcall(), np.getbufsize()) == before
        with pytest.raises(PyptoError):
            _overflowing(x, np.zeros((64, 31), np.float32))  # (a bad shape)
        assert (np.geterr(), np.geterrcall(), np.getbufsize()) == before
        np.setbufsize(8192)
    assert not calls
