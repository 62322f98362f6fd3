"""`SimResult.decisions()`: how each region's launches ran - batched, split or block by
block - who decided it and why (`pypto.sim.machine.decisions`), for each moment that
decides: the plan, the call's arguments, the launch and a run-time fallback."""
from __future__ import annotations

import warnings

import batch_kernels as B
import numpy as np
import pytest
import split_kernels as S

import pypto.language as pl
from pypto.sim import SimConfig
from pypto.sim.machine.decisions import (
    BATCHED,
    NEST_BATCH,
    ONE_BLOCK,
    PER_BLOCK,
    SPLIT,
    SPMD_BATCH,
    Decision,
    DecisionLog,
)

warnings.filterwarnings("ignore")


@pl.jit
def blocks(x: pl.Tensor[[64, 64], pl.FP32], y: pl.Out[pl.Tensor[[64, 64], pl.FP32]]):
    for b in pl.spmd(4, name_hint="blocks"):
        y[b * 16:b * 16 + 16, :] = pl.add(x[b * 16:b * 16 + 16, :], 1.0)
    return y


@pl.jit
def one_task(x: pl.Tensor[[16, 64], pl.FP32], y: pl.Out[pl.Tensor[[16, 64], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="once"):
        y[:, :] = pl.add(x[:, :], 1.0)
    return y


def _only(result) -> Decision:
    (region,) = result.decisions().values()
    (d,) = region
    return d


def test_a_batched_nest_and_a_batched_spmd_launch():
    x = np.ones((100, 64), np.float32)
    r = B.tail_rows(x, np.zeros_like(x))
    d = _only(r)
    assert d.kind == SPLIT and d.stage == "run" and d.times == 1
    assert d.reason == ("partial tiles from iteration 6 of the outermost loop on: the 6 "
                        "before it batched, the rest one launch at a time")
    x = np.arange(64 * 64, dtype=np.float32).reshape(64, 64)
    y = np.zeros_like(x)
    r = blocks(x, y)
    assert np.array_equal(y, x + 1)
    assert list(r.decisions().values()) == [(SPMD_BATCH,)]
    assert _only(r).times == 1 and _only(r).kind == BATCHED


def test_each_call_counts_its_own_decisions():
    x = np.ones((64, 64), np.float32)
    r = blocks(x, np.zeros_like(x))
    assert _only(r).times == 1
    log = DecisionLog()
    log.note("r", SPMD_BATCH)
    log.note("r", SPMD_BATCH)
    log.note_single("r")  # (absorbed: the region has a decision that says more)
    log.note_single("s")
    got = log.decisions()
    assert got == {"r": (SPMD_BATCH,), "s": (ONE_BLOCK,)}
    assert got["r"][0].times == 2 and got["s"][0].times == 1
    assert str(got["r"][0]) == ("batched ×2 (run: the blocks of an SPMD launch, as one "
                                "batch)")


def test_a_single_block_launch_runs_block_by_block_and_says_so():
    x = np.ones((16, 64), np.float32)
    r = one_task(x, np.zeros_like(x))
    d = _only(r)
    assert (d.kind, d.stage, d.times) == (PER_BLOCK, "launch", 1)
    assert d.reason == "one block per launch, and no loop nest around it ran batched"


@pytest.mark.parametrize("how, why", [
    ({"config": SimConfig(batch=False)}, "batching is off: SimConfig(batch=False)"),
    ({"config": SimConfig(checks=("uninit",))},
     "batching is off: the uninit check runs block by block"),
    ({"env": "0"}, "batching is off: PYPTO_SIM_BATCH=0"),
])
def test_batching_off_is_the_reason(how, why, monkeypatch):
    if "env" in how:
        monkeypatch.setenv("PYPTO_SIM_BATCH", how["env"])
    x = np.ones((64, 64), np.float32)
    y = np.zeros_like(x)
    # (a config of its own: the executable, made now, reads the environment)
    r = blocks(x, y, config=how.get("config", SimConfig(seed=7)))
    assert np.array_equal(y, x + 1)
    assert _only(r) == Decision(PER_BLOCK, "launch", why)


def test_the_arguments_refuse_a_batch():
    params = B.range_chain.compile().program.entry_function.params
    args = [np.zeros(p.var.type.static_shape(), p.var.type.dtype.np) for p in params]
    d = _only(B.range_chain(*args))
    assert (d.kind, d.stage) == (PER_BLOCK, "arguments")
    assert d.reason == "the windows of 'y' may overlap from block to block (batch axis 0)"


def test_a_run_time_fallback_is_a_decision():
    x = np.random.default_rng(0).standard_normal((64, 64)).astype(np.float32)
    r = S.tail_branch(x, 8, np.zeros((64, 64), np.float32))
    assert r.batch_stats == {"batched": 0, "fallback": 1}
    assert _only(r) == Decision(PER_BLOCK, "run", "a branch the batch cannot run: varying "
                                                  "write")
    r = S.tail_branch(x, 16, np.zeros((64, 64), np.float32))
    assert _only(r) == NEST_BATCH


def test_a_decision_of_an_unknown_kind_is_a_bug():
    with pytest.raises(AssertionError):
        Decision("batchd", "run", "a typo")
