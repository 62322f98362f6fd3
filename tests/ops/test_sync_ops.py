"""pl.system's synchronisation names: what they do on the simulator (flags and events are
checked in program order; barriers, the fence and cache maintenance change nothing),
the faults of a wait that never ends, and the located errors of bad arguments."""
from __future__ import annotations

import numpy as np
import pytest

import pypto.language as pl
from pypto.errors import InvalidOperationError, SimulationError
from pypto.ir.equal import assert_structural_equal
from pypto.ir.printer import print_program
from tests.frontend.frontend_helpers import assert_at, misplaced_at_run

N = 16


@pl.jit
def barriers(a: pl.Tensor[[N, N], pl.FP32], ws: pl.Tensor[[256], pl.INT64],
             out: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="sync"):
        pl.system.set_ffts(ws)
        t = pl.load(a, [0, 0], [N, N])
        pl.system.sync_src(set_pipe=pl.PipeType.MTE2, wait_pipe=pl.PipeType.V, event_id=0)
        pl.system.sync_dst(set_pipe=pl.PipeType.MTE2, wait_pipe=pl.PipeType.V, event_id=0)
        pl.system.bar_v()
        pl.system.bar_m()
        pl.system.bar_all()
        u = pl.mul(t, 3.0)
        pl.system.fence()
        pl.system.cacheinvalid()
        pl.system.cacheinvalid(a, [1, N], [0, 0])
        out = pl.store(u, [0, 0], out)
    return out


def test_barriers_fence_and_flags_leave_the_result_unchanged():
    a = np.arange(N * N, dtype=np.float32).reshape(N, N)
    out = np.zeros_like(a)
    barriers(a, np.zeros(256, np.int64), out)
    np.testing.assert_array_equal(out, 3 * a)


def test_sync_names_round_trip_through_the_text_form():
    prog = barriers.compile().program
    text = print_program(prog)
    assert "pl.system.sync_src(set_pipe=pl.PipeType.MTE2, wait_pipe=pl.PipeType.V" in text
    assert "pl.system.cacheinvalid(tensor=a, shapes=[1, 16], offsets=[0, 0])" in text
    assert_structural_equal(pl.parse(text), prog)


@pl.jit
def wait_without_set(a: pl.Tensor[[N, N], pl.FP32], out: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="hang"):
        t = pl.load(a, [0, 0], [N, N])
        pl.system.sync_src(set_pipe=pl.PipeType.MTE2, wait_pipe=pl.PipeType.V, event_id=1)
        pl.system.sync_dst(set_pipe=pl.PipeType.MTE2,  # ERR:flag
                           wait_pipe=pl.PipeType.V, event_id=2)
        out = pl.store(t, [0, 0], out)
    return out


def test_a_flag_wait_with_no_set_before_it_is_a_located_fault():
    a = np.ones((N, N), np.float32)
    with pytest.raises(SimulationError) as info:
        wait_without_set(a, np.zeros_like(a))
    err = info.value
    assert "waits on pipe V for event 2 from pipe MTE2" in err.message
    assert "never ends" in err.message
    assert "'hang'" in err.region and err.block == 0
    assert_at(err, __file__, "flag", "pl.system.sync_dst")


@pl.jit
def lanes_then_cube(a: pl.Tensor[[5, N], pl.FP32], w: pl.Tensor[[N, N], pl.FP32],
                    xfer: pl.InOut[pl.Tensor[[N, N], pl.FP32]],
                    ws: pl.Tensor[[256], pl.INT64], out: pl.InOut[pl.Tensor[[N, N], pl.FP32]]):
    for _ in pl.spmd(1, name_hint="lanes"):
        pl.system.set_ffts(ws)
        for lane in pl.split_aiv(2, mode=pl.SplitMode.NONE):
            if lane == 0:
                t0: pl.Tile[[2, N], pl.FP32, pl.Mem.Vec] = pl.load(a, [0, 0], [2, N])
                pl.store(pl.mul(t0, 2.0), [0, 0], xfer)
            else:
                t1: pl.Tile[[3, N], pl.FP32, pl.Mem.Vec] = pl.load(a, [2, 0], [3, N])
                pl.store(pl.mul(t1, 2.0), [2, 0], xfer)
            pl.system.sync_set(4, pipe=pl.PipeType.MTE3, ffts_mode=2, core_type="aiv")
        pl.system.sync_wait(4, pipe=pl.PipeType.MTE2, core_type="aic")
        xm: pl.Tile[[N, N], pl.FP32, pl.Mem.Mat, pl.TileView(valid_shape=[5, N])] = pl.load(
            xfer, [0, 0], [N, N], valid_shape=[5, N], target_memory=pl.Mem.Mat)
        wm: pl.Tile[[N, N], pl.FP32, pl.Mem.Mat] = pl.load(w, [0, 0], [N, N],
                                                          target_memory=pl.Mem.Mat)
        r = pl.matmul(pl.move(xm, target_memory=pl.Mem.Left),
                      pl.move(wm, target_memory=pl.Mem.Right))
        out = pl.store(r, [0, 0], out)
    return out


def test_uneven_lanes_signal_the_cube_through_one_event():
    rng = np.random.default_rng(0)
    a = rng.standard_normal((5, N)).astype(np.float32)
    w = rng.standard_normal((N, N)).astype(np.float32)
    out = np.zeros((N, N), np.float32)
    lanes_then_cube(a, w, np.zeros((N, N), np.float32), np.zeros(256, np.int64), out)
    expected = np.zeros((N, N), np.float32)
    expected[:5] = (2 * a) @ w
    np.testing.assert_allclose(out, expected, rtol=1e-5, atol=1e-5)


@pl.jit
def one_lane_signals(a: pl.Tensor[[N, N], pl.FP32], out: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    for _ in pl.spmd(1, name_hint="half"):
        for lane in pl.split_aiv(2, mode=pl.SplitMode.NONE):
            if lane == 0:
                pl.system.sync_set(3, pipe=pl.PipeType.MTE3, ffts_mode=2, core_type="aiv")
        pl.system.sync_wait(3, pipe=pl.PipeType.MTE2, core_type="aic")  # ERR:lanes
        out = pl.store(pl.load(a, [0, 0], [N, N]), [0, 0], out)
    return out


def test_a_mode_2_event_raised_by_one_lane_only_is_a_deadlock():
    a = np.ones((N, N), np.float32)
    with pytest.raises(SimulationError) as info:
        one_lane_signals(a, np.zeros_like(a))
    err = info.value
    assert "ffts_mode=2" in err.message and "only AIV lane 0 raised it" in err.message
    assert "needs lane 1" in err.message
    assert_at(err, __file__, "lanes", "pl.system.sync_wait")


@pl.jit
def wait_first(a: pl.Tensor[[N, N], pl.FP32], out: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="early"):
        pl.system.sync_wait(7, pipe=pl.PipeType.MTE2)  # ERR:event
        out = pl.store(pl.load(a, [0, 0], [N, N]), [0, 0], out)
        pl.system.sync_set(7, pipe=pl.PipeType.MTE3)
    return out


def test_an_event_wait_before_any_set_is_a_located_fault():
    a = np.ones((N, N), np.float32)
    with pytest.raises(SimulationError) as info:
        wait_first(a, np.zeros_like(a))
    err = info.value
    assert "waits for cross-core event 7" in err.message
    assert "no pl.system.sync_set(7, ...) was raised before it" in err.message
    assert_at(err, __file__, "event", "pl.system.sync_wait")


@pl.jit
def reserved_event(a: pl.Tensor[[N, N], pl.FP32], out: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        pl.system.sync_set(14, pipe=pl.PipeType.MTE3)  # ERR:reserved
        out = pl.store(pl.load(a, [0, 0], [N, N]), [0, 0], out)
    return out


@pl.jit
def bad_mode(a: pl.Tensor[[N, N], pl.FP32], out: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        pl.system.sync_set(1, pipe=pl.PipeType.MTE3, ffts_mode=3)  # ERR:mode
        out = pl.store(pl.load(a, [0, 0], [N, N]), [0, 0], out)
    return out


@pl.jit
def bad_pipe(a: pl.Tensor[[N, N], pl.FP32], out: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        pl.system.sync_wait(1, pipe="MTE2")  # ERR:pipe
        out = pl.store(pl.load(a, [0, 0], [N, N]), [0, 0], out)
    return out


@pl.jit
def small_ffts(a: pl.Tensor[[N, N], pl.FP32], ws: pl.Tensor[[128], pl.INT64],
               out: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        pl.system.set_ffts(ws)  # ERR:ffts
        out = pl.store(pl.load(a, [0, 0], [N, N]), [0, 0], out)
    return out


@pl.jit
def half_region_form(a: pl.Tensor[[N, N], pl.FP32], out: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        pl.system.cacheinvalid(a, [1, N])  # ERR:cache
        out = pl.store(pl.load(a, [0, 0], [N, N]), [0, 0], out)
    return out


@pl.jit
def fence_in_orchestration(a: pl.Tensor[[N, N], pl.FP32],
                           out: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    pl.system.fence()  # ERR:orch
    with pl.at(level=pl.Level.CORE_GROUP):
        out = pl.store(pl.load(a, [0, 0], [N, N]), [0, 0], out)
    return out


@pytest.mark.parametrize("kernel, exc, match, tag, token", [
    (reserved_event, InvalidOperationError, "event_id must be in the user range [0, 13]",
     "reserved", "14"),
    (bad_mode, InvalidOperationError, "ffts_mode must be 0, 1 or 2, got 3", "mode", "3)"),
    (bad_pipe, InvalidOperationError, "'pipe' must be a pl.PipeType", "pipe", '"MTE2"'),
    (small_ffts, InvalidOperationError, "at least 256 INT64 elements, got 128", "ffts", "ws"),
    (half_region_form, InvalidOperationError, "needs both shapes and offsets", "cache",
     "a, [1"),
])
def test_bad_sync_arguments_are_located(kernel, exc, match, tag, token):
    with pytest.raises(exc) as info:
        kernel.compile()
    assert match in info.value.message, info.value.message
    assert_at(info.value, __file__, tag, token)


def test_fence_in_orchestration_compiles_and_is_refused_when_run():
    # The real parser accepts a core-only op in orchestration code; its code generator
    # refuses it. Here: a located warning at compile, a located ScopeError at run.
    a = np.ones((N, N), np.float32)
    err = misplaced_at_run(fence_in_orchestration, "pl.system.fence runs on a core of a kernel",
                           __file__, "orch", "pl.system.fence", args=(a, np.zeros_like(a)))
    assert "pl.at" in err.hint


# --- pl.system.syncall: the hard and soft forms' operands ----------------------------


@pl.jit
def syncall_bad_core_type(a: pl.Tensor[[N, N], pl.FP32], out: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    for b in pl.spmd(2):
        pl.system.syncall(core_type="bogus")  # ERR:sc_core
        out = pl.store(pl.load(a, [0, 0], [N, N]), [0, 0], out)
    return out


@pl.jit
def syncall_bad_mode(a: pl.Tensor[[N, N], pl.FP32], out: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    for b in pl.spmd(2):
        pl.system.syncall(mode="fast")  # ERR:sc_mode
        out = pl.store(pl.load(a, [0, 0], [N, N]), [0, 0], out)
    return out


@pl.jit
def syncall_hard_with_count(a: pl.Tensor[[N, N], pl.FP32],
                            out: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    for b in pl.spmd(2):
        pl.system.syncall(used_cores=2)  # ERR:sc_hard
        out = pl.store(pl.load(a, [0, 0], [N, N]), [0, 0], out)
    return out


@pl.jit
def syncall_soft_no_workspace(a: pl.Tensor[[N, N], pl.FP32],
                              out: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    for b in pl.spmd(2):
        pl.system.syncall(mode="soft", core_type="aiv_only", used_cores=2)  # ERR:sc_ws
        out = pl.store(pl.load(a, [0, 0], [N, N]), [0, 0], out)
    return out


@pl.jit
def syncall_soft_negative_count(a: pl.Tensor[[N, N], pl.FP32], ws: pl.Tensor[[16], pl.INT32],
                                out: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    for b in pl.spmd(2):
        pl.system.syncall(mode="soft", core_type="mix", gm_workspace=ws, used_cores=-1)  # ERR:sc_n
        out = pl.store(pl.load(a, [0, 0], [N, N]), [0, 0], out)
    return out


@pl.jit
def syncall_soft_without_count(a: pl.Tensor[[N, N], pl.FP32], ws: pl.Tensor[[16], pl.INT32],
                               out: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    for b in pl.spmd(2):
        pl.system.syncall(mode="soft", core_type="mix", gm_workspace=ws)  # ERR:sc_nocount
        out = pl.store(pl.load(a, [0, 0], [N, N]), [0, 0], out)
    return out


@pytest.mark.parametrize("kernel, match, tag, token, hint", [
    (syncall_bad_core_type, "syncall core_type must be one of aiv_only, aic_only, mix, got "
     "'bogus'", "sc_core", '"bogus"', None),
    (syncall_bad_mode, "syncall mode must be 'hard' or 'soft', got 'fast'", "sc_mode", '"fast"',
     None),
    (syncall_hard_with_count, "syncall(mode='hard') takes no used_cores", "sc_hard", "2)",
     "pass mode='soft' for the GM-polling barrier"),
    (syncall_soft_no_workspace, "soft syncall requires gm_workspace", "sc_ws", "pl.system",
     "pass gm_workspace=<an INT32 kernel parameter of at least 16 elements>"),
    (syncall_soft_negative_count, "used_cores must be in the INT32 range [0, 2147483647], got -1",
     "sc_n", "-1", None),
    (syncall_soft_without_count, "soft syncall requires an explicit used_cores", "sc_nocount",
     "pl.system", "pass used_cores=0 only when the device launch matches the logical grid"),
])
def test_syncall_operands_are_checked_where_written(kernel, match, tag, token, hint):
    with pytest.raises(InvalidOperationError) as info:
        kernel.compile()
    assert match in info.value.message, info.value.message
    assert info.value.message.startswith("pl.system.syncall: ")
    assert_at(info.value, __file__, tag, token)
    if hint is not None:
        assert info.value.hint == hint
