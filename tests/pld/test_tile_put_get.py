"""`pld.tile.put` / `pld.tile.get`: the tile-level forms of `pld.tensor.put` / `get`,
which stream the transfer through explicit VEC staging tiles (the real compiler emits
them from the tensor forms; its printer's text reads back through them). Values on two
simulated ranks, the staging tile's meaning (its shape is the chunk, `stage2`
double-buffers), the region lists after one stage, and located refusals."""
from __future__ import annotations

import numpy as np
import pytest
from frontend_helpers import compile_error

import pypto.language as pl
import pypto.language.distributed as pld
from pypto.errors import InvalidOperationError
from pypto.ir.transform import walk
from pypto.sim import SimConfig

HERE = __file__
NR, R, S = 2, 4, 64
TWO = SimConfig(device_ids=(0, 1))


@pl.jit.incore
def put_then_read(src: pl.Tensor[[R, S], pl.FP32], out: pl.Out[pl.Tensor[[R, S], pl.FP32]],
                  data: pld.DistributedTensor[[R, S], pl.FP32],
                  signal: pld.DistributedTensor[[NR, 1], pl.INT32]):
    ctx = pld.get_comm_ctx(data)
    me = pld.rank(ctx)
    peer = 1 - me
    stage = pl.tile.create([2, 32], pl.FP32)
    stage2 = pl.tile.create([2, 32], pl.FP32)
    # rows 0-1 of my source go to the peer's rows 2-3 (one stage, region positional);
    # all four rows, doubled through two stages, go atomically onto the peer's window
    pld.tile.put(data, peer, src, stage, [2, 0], [0, 0], [2, S])
    pld.tile.put(data, peer, src, stage, stage2, atomic=pld.AtomicType.Add)
    pld.system.notify(signal, peer=peer, offsets=[me, 0], value=1, op=pld.NotifyOp.AtomicAdd)
    pld.system.wait(signal, offsets=[peer, 0], expected=1, cmp=pld.WaitCmp.Ge)
    return pl.store(pl.load(data, [0, 0], [R, S]), [0, 0], out)


@pl.jit
def put_chip(src: pl.Tensor[[R, S], pl.FP32], out: pl.Out[pl.Tensor[[R, S], pl.FP32]],
             data: pld.DistributedTensor[[R, S], pl.FP32],
             signal: pld.DistributedTensor[[NR, 1], pl.INT32]):
    return put_then_read(src, out, data, signal)


@pl.jit.host
def put_host(inputs: pl.Tensor[[NR, R, S], pl.FP32],
             outputs: pl.Out[pl.Tensor[[NR, R, S], pl.FP32]]):
    data_buf = pld.alloc_window_buffer([R, S], dtype=pl.FP32)
    signal_buf = pld.alloc_window_buffer([NR, 1], dtype=pl.INT32)
    for r in pl.range(pld.world_size()):
        data = pld.window(data_buf, [R, S], dtype=pl.FP32)
        signal = pld.window(signal_buf, [NR, 1], dtype=pl.INT32)
        put_chip(inputs[r], outputs[r], data, signal, device=r)


def test_tile_put_writes_the_peers_window_through_the_stage():
    x = np.arange(NR * R * S, dtype=np.float32).reshape(NR, R, S)
    y = np.zeros((NR, R, S), np.float32)
    put_host(x, y, config=TWO)
    for r in range(NR):
        other = x[1 - r]
        want = np.zeros((R, S), np.float32)  # a fresh window is zero-filled
        want[2:4] = other[0:2]
        want += other
        np.testing.assert_array_equal(y[r], want)


@pl.jit.incore
def get_rows(out: pl.InOut[pl.Tensor[[R, S], pl.FP32]], whole: pl.Out[pl.Tensor[[R, S], pl.FP32]],
             data: pld.DistributedTensor[[R, S], pl.FP32],
             signal: pld.DistributedTensor[[NR, 1], pl.INT32], src: pl.Tensor[[R, S], pl.FP32]):
    ctx = pld.get_comm_ctx(data)
    me = pld.rank(ctx)
    peer = 1 - me
    data = pl.store(pl.load(src, [0, 0], [R, S]), [0, 0], data)
    pld.system.notify(signal, peer=peer, offsets=[me, 0], value=1, op=pld.NotifyOp.AtomicAdd)
    pld.system.wait(signal, offsets=[peer, 0], expected=1, cmp=pld.WaitCmp.Ge)
    stage = pl.tile.create([S], pl.FP32)  # a 1-D stage: one row per chunk
    pld.tile.get(out, peer, data, stage, dst_offsets=[0, 0], src_offsets=[1, 0],
                 shape=[3, S])
    pld.tile.get(whole, peer, data, stage)
    return out, whole


@pl.jit
def get_chip(out: pl.InOut[pl.Tensor[[R, S], pl.FP32]], whole: pl.Out[pl.Tensor[[R, S], pl.FP32]],
             data: pld.DistributedTensor[[R, S], pl.FP32],
             signal: pld.DistributedTensor[[NR, 1], pl.INT32], src: pl.Tensor[[R, S], pl.FP32]):
    return get_rows(out, whole, data, signal, src)


@pl.jit.host
def get_host(inputs: pl.Tensor[[NR, R, S], pl.FP32],
             outputs: pl.InOut[pl.Tensor[[NR, R, S], pl.FP32]],
             wholes: pl.Out[pl.Tensor[[NR, R, S], pl.FP32]]):
    data_buf = pld.alloc_window_buffer([R, S], dtype=pl.FP32)
    signal_buf = pld.alloc_window_buffer([NR, 1], dtype=pl.INT32)
    for r in pl.range(pld.world_size()):
        data = pld.window(data_buf, [R, S], dtype=pl.FP32)
        signal = pld.window(signal_buf, [NR, 1], dtype=pl.INT32)
        get_chip(outputs[r], wholes[r], data, signal, inputs[r], device=r)


def test_tile_get_reads_the_peers_window_through_the_stage():
    x = np.arange(NR * R * S, dtype=np.float32).reshape(NR, R, S) + 1
    y = np.full((NR, R, S), -1.0, np.float32)
    w = np.zeros((NR, R, S), np.float32)
    get_host(x, y, w, config=TWO)
    for r in range(NR):
        np.testing.assert_array_equal(y[r, 0:3], x[1 - r, 1:4])
        np.testing.assert_array_equal(y[r, 3], -1.0)  # the row the box leaves alone
        np.testing.assert_array_equal(w[r], x[1 - r])


@pl.jit.incore
def put_no_stage(x: pl.Tensor[[R, S], pl.FP32], win: pld.DistributedTensor[[R, S], pl.FP32]):
    t = pl.load(x, [0, 0], [R, S])
    pld.tile.put(win, 1, x, x)  # ERR:nostage
    return win


@pl.jit.incore
def put_wrong_stage2(x: pl.Tensor[[R, S], pl.FP32], win: pld.DistributedTensor[[R, S], pl.FP32]):
    a = pl.tile.create([2, 32], pl.FP32)
    b = pl.tile.create([4, 32], pl.FP32)
    pld.tile.put(win, 1, x, a, b)  # ERR:stage2
    return win


@pl.jit.incore
def get_stage_dtype(x: pl.Out[pl.Tensor[[R, S], pl.FP32]],
                    win: pld.DistributedTensor[[R, S], pl.FP32]):
    a = pl.tile.create([2, 32], pl.FP16)
    pld.tile.get(x, 1, win, a)  # ERR:dtype
    return x


def test_staging_tiles_are_checked_at_the_argument():
    compile_error(put_no_stage, InvalidOperationError, "pld.tile.put: 'stage' must be a staging "
                  "tile", HERE, "nostage", "x)")
    compile_error(put_wrong_stage2, InvalidOperationError, "'stage2' (the second, ping-pong "
                  "staging tile) must be a tile like 'stage'", HERE, "stage2", "b)")
    compile_error(get_stage_dtype, InvalidOperationError, "pld.tile.get: 'stage' has dtype "
                  "pl.FP16 but the window holds pl.FP32", HERE, "dtype", "a)")


def test_comm_ctx_type_is_the_type_of_get_comm_ctx():
    prog = put_then_read.compile().program
    types = [n.type for n in walk(prog)
             if getattr(n, "op", None) == "pld.system.get_comm_ctx"]
    assert types and all(isinstance(t, pld.CommCtxType) for t in types)
    assert str(types[0]) == "pld.CommCtx"


@pytest.mark.parametrize("name", ["get", "put"])
def test_tile_forms_have_the_real_parameters(name):
    import inspect

    sig = inspect.signature(getattr(pld.tile, name))
    assert list(sig.parameters)[:8] == ["dst", "peer", "src", "stage", "stage2", "dst_offsets",
                                        "src_offsets", "shape"]
