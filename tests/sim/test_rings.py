"""The runtime's rings replayed over a run (pypto.sim.runtime.rings): capacities as the
runtime resolves them, occupancy and reclaim per scope, the deadlocks with their
orch_error_code, scope_stats.jsonl in simpler's version-6 format."""
import json

import numpy as np
import pytest

import pypto.language as pl
import pypto.sim as sim
from pypto.golden import TensorSpec, run_jit
from pypto.sim.runtime.rings import HEAP, TASK_WINDOW, RingCapacities, RingConfigError

N = 256
TILE = 64 * 64 * 4  # one [64, 64] float32 intermediate: 16 KiB, a multiple of 1024


@pl.jit
def staged(x: pl.Tensor[[N, 64], pl.FP32], y: pl.Out[pl.Tensor[[N, 64], pl.FP32]]):
    for i in pl.range(0, N, 64):  # each iteration's body is a scope: its t is freed at its end
        t = pl.create_tensor([64, 64], dtype=pl.FP32)
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="fill"):
            t[:, :] = pl.exp(x[i:i + 64, :])
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="use"):
            y[i:i + 64, :] = pl.add(t[:, :], 1.0)
    return y


@pl.jit(auto_scope=False)
def piling(x: pl.Tensor[[N, 64], pl.FP32], y: pl.Out[pl.Tensor[[N, 64], pl.FP32]]):
    for i in pl.range(0, N, 64):  # no scope: every t stays in the root scope to the end
        t = pl.create_tensor([64, 64], dtype=pl.FP32)
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="fill"):
            t[:, :] = pl.exp(x[i:i + 64, :])
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="use"):
            y[i:i + 64, :] = pl.add(t[:, :], 1.0)
    return y


@pl.jit(auto_scope=False)
def scoped(x: pl.Tensor[[N, 64], pl.FP32], y: pl.Out[pl.Tensor[[N, 64], pl.FP32]]):
    for i in pl.range(0, N, 64):
        with pl.scope():  # the fix: one scope per iteration
            t = pl.create_tensor([64, 64], dtype=pl.FP32)
            with pl.at(level=pl.Level.CORE_GROUP, name_hint="fill"):
                t[:, :] = pl.exp(x[i:i + 64, :])
            with pl.at(level=pl.Level.CORE_GROUP, name_hint="use"):
                y[i:i + 64, :] = pl.add(t[:, :], 1.0)
    return y


def _run(kernel):
    x = np.ones((N, 64), np.float32)
    return sim.simulate(kernel, x, np.zeros_like(x), checks=())


def _line(text):
    return next(i for i, ln in enumerate(open(__file__), 1) if text in ln)


def test_a_loop_body_scope_frees_its_intermediate_at_its_end():
    rep = _run(staged).ring_report()
    assert rep.deadlock is None
    assert rep.heap_peak[2].value == TILE and rep.window_peak[2].value == 3
    ends = [s for s in rep.samples if s.phase == "end" and s.depth == 2]
    assert len(ends) == 4 and {s.site for s in ends} == {f"test_rings.py:{_line('scope: its t')}"}
    # cumulative bytes: each iteration allocates one tile; at its end the previous one is
    # reclaimed (every task done when submitted), the own one still held by the scope
    assert [(s.heap_start, s.heap_end) for s in ends] == [(k * TILE, (k + 1) * TILE)
                                                        for k in range(4)]
    assert [(s.task_window_start, s.task_window_end) for s in ends] == [
        (3 * k, 3 * k + 3) for k in range(4)]


def test_without_a_scope_the_intermediates_pile_up_on_ring_0():
    rep = _run(piling).ring_report()
    assert rep.heap_peak[0].value == 4 * TILE  # never reclaimed before the end
    assert _run(scoped).ring_report().heap_peak[1].value == TILE


def test_a_heap_too_small_for_the_live_set_is_heap_ring_deadlock_at_the_scope_line():
    res = _run(piling)
    rep = res.ring_report(RingCapacities(heap=(3 * TILE,) * 4))
    d = rep.deadlock
    assert (d.code, d.name, d.ring) == (2, "HEAP_RING_DEADLOCK", 0)
    assert d.submit.kind == "alloc" and d.needed == TILE and d.used == 3 * TILE
    assert "the root scope, open for the whole run" in d.message()
    assert "orch_error_code=2 (HEAP_RING_DEADLOCK)" in d.message()
    assert "pl.scope()" in d.message()
    # the what-if re-plays the same submits: the fix fits in the same capacity
    assert rep.what_if(RingCapacities(heap=(4 * TILE + 1024,) * 4)).deadlock is None
    assert _run(scoped).ring_report(RingCapacities(heap=(3 * TILE,) * 4)).deadlock is None


def test_one_allocation_larger_than_the_heap():
    d = _run(staged).ring_report(RingCapacities(heap=(8192,) * 4)).deadlock
    assert d.code == 2 and d.ring == 2 and "more than its whole heap" in d.message()
    assert f"test_rings.py:{_line('scope: its t')}" in d.message()


def test_a_scope_with_more_tasks_than_its_window_is_scope_deadlock():
    d = _run(piling).ring_report(RingCapacities(task_window=(8,) * 4)).deadlock
    # the root scope submits alloc, fill, use per iteration: the 8th task of the scope
    # meets `count >= window - 1`
    assert (d.code, d.name, d.ring) == (1, "SCOPE_DEADLOCK", 0) and d.used == 7


def test_capacities_resolve_as_the_runtime_does():
    assert RingCapacities.resolve({}) == RingCapacities()
    assert RingCapacities.resolve({}).heap == (HEAP,) * 4
    env = {"PTO2_RING_HEAP": "1048576", "PTO2_RING_TASK_WINDOW": "64,128,256,512"}
    caps = RingCapacities.resolve(env)
    assert caps.heap == (1 << 20,) * 4 and caps.task_window == (64, 128, 256, 512)
    # a run-config value wins over the environment; 0 falls through to the next tier
    caps = RingCapacities.resolve(env, ring_heap=(0, 2048, 0, 0), ring_task_window=32)
    assert caps.heap == (1 << 20, 2048, 1 << 20, 1 << 20) and caps.task_window == (32,) * 4
    assert RingCapacities.resolve({}).task_window == (TASK_WINDOW,) * 4


@pytest.mark.parametrize(("env", "kw", "msg"), [
    ({"PTO2_RING_HEAP": "1,2"}, {}, "PTO2_RING_HEAP='1,2' needs exactly 4 comma-separated"),
    ({"PTO2_RING_HEAP": "lots"}, {}, "PTO2_RING_HEAP='lots' is not an integer"),
    ({}, {"ring_task_window": 100}, "ring_task_window[0]=100 must be a power of 2 >= 4"),
    ({}, {"ring_heap": 512}, "ring_heap[0]=512 must be >= 1024"),
    ({}, {"ring_heap": (1, 2)}, "ring_heap takes one value or 4"),
])
def test_bad_capacities_are_refused_with_the_reason(env, kw, msg):
    with pytest.raises(RingConfigError) as e:
        RingCapacities.resolve(env, **kw)
    assert msg in str(e.value)


def _specs():
    return [TensorSpec("x", [N, 64], np.float32, init_value=1.0),
            TensorSpec("y", [N, 64], np.float32, is_output=True)]


def _golden(v):
    v["y"][:] = np.exp(v["x"]) + 1.0


# simpler's writer (scope_stats_collector.cpp): the metadata line, then the records
META_KEYS = ["version", "fatal", "dropped", "total", "task_window_max", "heap_max",
             "dep_pool_max", "tensormap_max"]
RECORD_KEYS = ["site", "phase", "depth", "ring", "task_window_start", "task_window_end",
               "heap_start", "heap_end", "dep_pool_start", "dep_pool_end", "tensormap"]


def test_the_harness_writes_scope_stats_version_6(tmp_path, monkeypatch):
    monkeypatch.setenv("PTO2_RING_HEAP", str(1 << 24))
    r = run_jit(staged, _specs(), _golden, runtime_cfg={"enable_scope_stats": True},
                compile_cfg={"output_dir": str(tmp_path)}, verbose=False)
    assert r.passed and [a.kind for a in r.artifacts] == ["scope_stats"]
    lines = (tmp_path / "dfx_outputs" / "scope_stats" / "scope_stats.jsonl").read_text()
    meta, *records = [json.loads(ln) for ln in lines.splitlines()]
    assert list(meta)[:8] == META_KEYS and meta["version"] == 6 and meta["fatal"] is False
    assert meta["heap_max"] == [1 << 24] * 4 and meta["source"] == "pypto-lab-sim"
    assert meta["total"] == len(records) == 12
    assert all(list(rec) == RECORD_KEYS for rec in records)
    assert [(rec["phase"], rec["depth"]) for rec in records[:3]] == [
        ("begin", 0), ("begin", 1), ("begin", 2)]
    assert records[0]["site"] == ":0"  # the executor's root scope
    assert records[2]["site"] == f"test_rings.py:{_line('scope: its t')}"
    # the writer's separators
    assert lines.splitlines()[1].startswith('{"site": ":0", "phase": "begin", "depth": 0')


def test_a_run_that_outgrows_a_ring_fails_with_the_runtimes_error(tmp_path):
    r = run_jit(piling, _specs(), _golden, runtime_cfg={"ring_heap": 3 * TILE,
                                                        "enable_scope_stats": True},
                compile_cfg={"output_dir": str(tmp_path)}, verbose=False)
    assert not r.passed and r.error.startswith("orch_error_code=2 (HEAP_RING_DEADLOCK)")
    assert not r.outputs  # it failed before the golden comparison
    meta = json.loads((tmp_path / "dfx_outputs" / "scope_stats" /
                       "scope_stats.jsonl").read_text().splitlines()[0])
    assert meta["fatal"] is True and meta["heap_max"] == [3 * TILE] * 4
