"""The short path of a call (`pypto.sim.runtime.direct`, `binding.QuickBinding`): what
its cheaper steps keep - the progress reports of a long run and the monitor left empty
after any run, the overlap check of arguments that do not own their memory, the read-only
view of a `pl.In` array, the GC and fp state of the caller, a fresh list per result."""
from __future__ import annotations

import gc

import numpy as np
import pytest

import pypto.language as pl
import pypto.sim as sim
from pypto.errors import SimulationError
from pypto.language.jit import _DEFAULT_KEY
from pypto.sim import Progress, SimConfig, on_progress
from pypto.sim.entry import executable
from pypto.sim.machine.run import Run
from pypto.sim.runtime.direct import DirectEntry
from pypto.sim.runtime.progress import MONITOR

N, T = 64, 16


@pl.jit
def add_one(x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    for i in pl.parallel(0, N, T):
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="add"):
            y[i:i + T, :] = pl.add(x[i:i + T, :], 1.0)
    return y


# (long enough that a run outlasts the 0.5 s delay below with room to spare: at
# R = 512 the compiled loop bodies of the interpreter brought it to ~0.4 s)
R = 2048


@pl.jit
def add_rows(x: pl.Tensor[[R, N], pl.FP32], y: pl.Out[pl.Tensor[[R, N], pl.FP32]]):
    # one element per task, block by block (batch=False): 128k tasks, ~1.5 s
    for r in pl.parallel(0, R):
        for c in pl.range(0, N, 1):
            with pl.at(level=pl.Level.CORE_GROUP, name_hint="cell"):
                y[r:r + 1, c:c + 1] = pl.add(x[r:r + 1, c:c + 1], 1.0)
    return y


@pl.jit
def gather(ids: pl.Tensor[[N], pl.INT32], table: pl.Tensor[[N, N], pl.FP32],
           y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    for t0 in pl.parallel(0, N, T):
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="rows"):
            for k in pl.range(T):
                row = pl.cast(pl.read(ids, [t0 + k]), pl.INDEX)
                y[t0 + k:t0 + k + 1, :] = table[row:row + 1, :]
    return y


def _direct(kernel, config=None) -> DirectEntry:
    x = np.zeros((R if kernel is add_rows else N, N), np.float32)
    if kernel is gather:
        kernel(np.zeros(N, np.int32), x, np.zeros_like(x), config=config)
    else:
        kernel(x, np.zeros_like(x), config=config)
    exe = executable(kernel._cache[_DEFAULT_KEY], config or sim.SimConfig())
    d = exe.direct
    assert isinstance(d, DirectEntry)
    return d


def _monitor_empty() -> bool:
    return not MONITOR.active and not MONITOR.reported


def test_a_short_call_leaves_the_monitor_empty():
    x = np.ones((N, N), np.float32)
    y = np.zeros_like(x)
    add_one(x, y)
    np.testing.assert_array_equal(y, x + 1.0)
    assert _monitor_empty()


def test_a_failing_short_call_leaves_the_monitor_empty():
    _direct(gather)  # (it has a short path)
    table = np.zeros((N, N), np.float32)
    bad = np.full(N, N + 5, np.int32)  # rows past the table's end
    with pytest.raises(SimulationError):
        gather(bad, table, np.zeros_like(table))
    assert _monitor_empty()


@pytest.mark.parametrize("delay", [0.0, 0.5])
def test_a_long_short_call_is_reported_to_its_end(delay):
    # delay 0.5 takes the inlined watch of the short path (the monitor thread running),
    # delay 0 `progress.watch` itself (it wakes the monitor)
    cfg = SimConfig(batch=False)
    d = _direct(add_rows, cfg)
    seen: list[Progress] = []
    x = np.ones((R, N), np.float32)
    y = np.zeros_like(x)
    runs = 0
    with on_progress(seen.append, delay=delay, every=0.05):
        while not seen and runs < 5:  # (a run of ~1.5 s: one is past 0.5 s, loaded or not)
            got = d.call((x, y))
            assert got is not None
            runs += 1
    np.testing.assert_array_equal(y, x + 1.0)
    assert seen, "no report"
    last = seen[-1]
    assert last.done and not last.failed and last.program == "add_rows"
    assert seen[0].count == 1 and last.count == len([p for p in seen if p.run == last.run])
    assert all(p.seconds >= delay for p in seen)
    assert _monitor_empty()


def test_arguments_that_do_not_own_their_memory_are_checked_for_overlap():
    d = _direct(add_one)
    nbytes = N * N * 4
    mem = bytearray(2 * nbytes)
    # two views of one buffer (roots: the bytearray, not an array): disjoint halves bind
    x = np.frombuffer(mem, np.float32, N * N, 0).reshape(N, N)
    y = np.frombuffer(mem, np.float32, N * N, nbytes).reshape(N, N)
    assert d.binding.bind(Run(d.settings, "t"), (x, y)) is not None
    # overlapping ones do not: the general path copies them (and writes y back)
    y2 = np.frombuffer(mem, np.float32, N * N, nbytes // 2).reshape(N, N)
    assert d.binding.bind(Run(d.settings, "t"), (x, y2)) is None
    x[:] = 2.0
    expect = x + 1.0
    add_one(x, y2)
    np.testing.assert_array_equal(y2, expect)
    # arrays owning their memory: bound without the pairwise check
    a, b = np.ones((N, N), np.float32), np.zeros((N, N), np.float32)
    assert a.flags.owndata and b.flags.owndata
    assert d.binding.bind(Run(d.settings, "t"), (a, b)) is not None
    assert d.binding.bind(Run(d.settings, "t"), (a, a)) is None  # one array twice


def test_an_in_array_is_a_read_only_view_on_the_short_path():
    x = np.ones((N, N), np.float32)
    y = np.zeros_like(x)
    r = add_one(x, y)
    assert not r.device["x"].flags.writeable and x.flags.writeable
    assert np.shares_memory(r.device["x"], x)
    assert r.outputs["y"] is y


def test_the_callers_gc_and_fp_state_are_kept():
    x = np.ones((N, N), np.float32)
    y = np.zeros_like(x)
    was = gc.isenabled()
    try:
        gc.disable()
        add_one(x, y)
        assert not gc.isenabled()
        gc.enable()
        add_one(x, y)
        assert gc.isenabled()
    finally:
        if was:
            gc.enable()
        else:
            gc.disable()
    with np.errstate(over="raise"):
        add_one(x, y)
        assert np.geterr()["over"] == "raise"


def test_each_result_has_its_own_lists():
    x = np.ones((N, N), np.float32)
    r1, r2 = add_one(x, np.zeros_like(x)), add_one(x, np.zeros_like(x))
    assert r1.oob_reads == [] and r1.uninit_reads == [] and r1.zero_divisions == []
    assert r1.oob_reads is not r2.oob_reads
    r1.oob_reads.append("mine")
    assert r2.oob_reads == []
