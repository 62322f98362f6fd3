"""The `@pl.program` host form with a rank count that is a `pl.dynamic` symbol, as the real
pypto's multi-card tests write it: the host orchestrator sizes its windows with
`NRD * SIZE * pl.FP32.get_byte()` (the symbol read from the parameter declaring it), its
annotations may compose the symbol (`[NRD, 1, NRD * SIZE]`), and `out = chip(..., out,
device=r)` hands back the host tensor the chip function returns. `@pl.jit` bodies keep
the guide's rule: no arithmetic on pl.dynamic symbols there."""
from __future__ import annotations

import numpy as np
import pytest
from frontend_helpers import assert_at, compile_error

import pypto.language as pl
import pypto.language.distributed as pld
from pypto.errors import DynamicShapeError, SimulationError
from pypto.sim import SimConfig

HERE = __file__
SIZE = 16
NRD = pl.dynamic("NRD")


@pl.program
class DynamicWorld:
    """Every rank gathers every rank's row (remote loads after a notify/wait barrier)."""

    @pl.function(type=pl.FunctionType.InCore)
    def gather(self, inp: pl.Tensor[[1, SIZE], pl.FP32],
               out: pl.Out[pl.Tensor[[1, NRD * SIZE], pl.FP32]],
               scratch: pl.InOut[pld.DistributedTensor[[1, SIZE], pl.FP32]],
               signal: pl.InOut[pld.DistributedTensor[[NRD, 1], pl.INT32]]
               ) -> pl.Tensor[[1, NRD * SIZE], pl.FP32]:
        ctx = pld.get_comm_ctx(scratch)
        me = pld.rank(ctx)
        n = pld.nranks(ctx)
        pl.store(pl.load(inp, [0, 0], [1, SIZE]), [0, 0], scratch)
        for peer in pl.range(n):
            if peer != me:
                pld.system.notify(signal, peer=peer, offsets=[me, 0], value=1,
                                  op=pld.NotifyOp.AtomicAdd)
        for src in pl.range(n):
            if src != me:
                pld.system.wait(signal=signal, offsets=[src, 0], expected=1,
                                cmp=pld.WaitCmp.Ge)
        for peer in pl.range(n):
            row = pld.tile.remote_load(scratch, peer=peer, offsets=[0, 0], shape=[1, SIZE])
            pl.store(row, [0, peer * SIZE], out)
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def chip(self, inp: pl.Tensor[[1, SIZE], pl.FP32],
             out: pl.Out[pl.Tensor[[1, NRD * SIZE], pl.FP32]],
             scratch: pl.InOut[pld.DistributedTensor[[1, SIZE], pl.FP32]],
             signal: pl.InOut[pld.DistributedTensor[[NRD, 1], pl.INT32]]
             ) -> pl.Tensor[[1, NRD * SIZE], pl.FP32]:
        out = self.gather(inp, out, scratch, signal)
        return out

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host(self, inputs: pl.Tensor[[NRD, 1, SIZE], pl.FP32],
             outputs: pl.Out[pl.Tensor[[NRD, 1, NRD * SIZE], pl.FP32]]):
        scratch_buf = pld.alloc_window_buffer(SIZE * pl.FP32.get_byte())
        signal_buf = pld.alloc_window_buffer(NRD * pl.INT32.get_byte())
        for r in pl.range(pld.world_size()):
            scratch = pld.window(scratch_buf, [1, SIZE], dtype=pl.FP32)
            signal = pld.window(signal_buf, [NRD, 1], dtype=pl.INT32)
            last = self.chip(inputs[r], outputs[r], scratch, signal, device=r)
        return last


@pytest.mark.parametrize("nr", [2, 4])
def test_dynamic_rank_count_sizes_windows_and_gathers_every_row(nr):
    inputs = (np.arange(nr * SIZE, dtype=np.float32).reshape(nr, 1, SIZE) + 1) * 10
    outputs = np.zeros((nr, 1, nr * SIZE), np.float32)
    result = DynamicWorld(inputs, outputs, config=SimConfig(device_ids=tuple(range(nr))))
    want = inputs.reshape(1, nr * SIZE)
    for r in range(nr):
        np.testing.assert_array_equal(outputs[r], want)
    np.testing.assert_array_equal(result.window("signal_buf", 0)[:nr], np.ones((nr, 1)) -
                                  np.eye(nr)[:, :1])  # rank 0 got one credit from each peer


def test_host_dims_read_the_declaring_parameter():
    host = DynamicWorld.compile().program.function("host")
    text = str(host)
    assert "tensor.dim" in text  # NRD * ... reads inputs' axis 0 at run time


@pl.program
class ChipMakesItsResult:
    @pl.function(type=pl.FunctionType.InCore)
    def fill(self, out: pl.Out[pl.Tensor[[1, SIZE], pl.FP32]]) -> pl.Tensor[[1, SIZE], pl.FP32]:
        pl.store(pl.full([1, SIZE], dtype=pl.FP32, value=1.0), [0, 0], out)
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def chip(self, x: pl.Tensor[[1, SIZE], pl.FP32]) -> pl.Tensor[[1, SIZE], pl.FP32]:
        made = pl.create_tensor([1, SIZE], dtype=pl.FP32)
        made = self.fill(made)
        return made

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host(self, inputs: pl.Tensor[[2, 1, SIZE], pl.FP32]):
        for r in pl.range(pld.world_size()):
            got = self.chip(inputs[r], device=r)  # ERR:made
        return got


def test_result_of_a_dispatch_that_returns_a_rank_made_tensor_is_located():
    with pytest.raises(SimulationError) as info:
        ChipMakesItsResult(np.zeros((2, 1, SIZE), np.float32),
                           config=SimConfig(device_ids=(0, 1)))
    err = info.value
    assert "the result of chip(..., device=...) is used, but chip returns a tensor it " \
           "made, which stays on the rank" in err.message
    assert_at(err, HERE, "made", "self.chip")


@pl.jit
def jit_chip(x: pl.Tensor[[1, SIZE], pl.FP32], y: pl.Out[pl.Tensor[[1, SIZE], pl.FP32]]):
    return y


@pl.jit.host
def jit_host_with_dim_math(x: pl.Tensor[[NRD, 1, SIZE], pl.FP32],
                           y: pl.Out[pl.Tensor[[NRD, 1, SIZE], pl.FP32]]):
    x.bind_dynamic(0, NRD)
    buf = pld.alloc_window_buffer(NRD * SIZE * pl.FP32.get_byte())  # ERR:jit-host
    for r in pl.range(pld.world_size()):
        jit_chip(x[r], y[r], device=r)
    return y


def test_jit_host_body_keeps_the_guides_rule_on_dynamic_arithmetic():
    compile_error(jit_host_with_dim_math, DynamicShapeError,
                  "arithmetic on pl.dynamic symbols is not allowed", HERE, "jit-host",
                  "NRD * SIZE")


@pl.program
class CommlessDispatch:
    """Real `tests/st/distributed/test_l3_distributed.py` (`L3DependencyProgram`, its
    SubWorker left out): the host orchestrator calls the chip orchestration function with
    no device=."""

    @pl.function(type=pl.FunctionType.InCore)
    def tile_add(self, a: pl.Tensor[[16, 16], pl.FP32], b: pl.Tensor[[16, 16], pl.FP32],
                 f: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        s = pl.add(pl.load(a, [0, 0], [16, 16]), pl.load(b, [0, 0], [16, 16]))
        return pl.store(s, [0, 0], f)

    @pl.function(type=pl.FunctionType.Orchestration)
    def chip_orch(self, a: pl.Tensor[[16, 16], pl.FP32], b: pl.Tensor[[16, 16], pl.FP32],
                  f: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        return self.tile_add(a, b, f)

    @pl.function(type=pl.FunctionType.Orchestration)
    def whoami(self, probe: pld.DistributedTensor[[1, 8], pl.INT32],
               out: pl.Out[pl.Tensor[[1, 8], pl.INT32]]) -> pl.Tensor[[1, 8], pl.INT32]:
        return self.rank_row(probe, out)

    @pl.function(type=pl.FunctionType.InCore)
    def rank_row(self, probe: pld.DistributedTensor[[1, 8], pl.INT32],
                 out: pl.Out[pl.Tensor[[1, 8], pl.INT32]]) -> pl.Tensor[[1, 8], pl.INT32]:
        me = pld.rank(pld.get_comm_ctx(probe))
        return pl.store(pl.full([1, 8], dtype=pl.INT32, value=me), [0, 0], out)

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host_orch(self, a: pl.Tensor[[16, 16], pl.FP32], b: pl.Tensor[[16, 16], pl.FP32],
                  f: pl.Out[pl.Tensor[[16, 16], pl.FP32]],
                  ranks: pl.Out[pl.Tensor[[3, 1, 8], pl.INT32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        out_f: pl.Tensor[[16, 16], pl.FP32] = self.chip_orch(a, b, f)
        buf = pld.alloc_window_buffer(8 * pl.INT32.get_byte())
        for i in pl.range(3):
            probe = pld.window(buf, [1, 8], dtype=pl.INT32)
            self.whoami(probe, ranks[i])
        return out_f


def test_a_dispatch_without_device_goes_round_robin_over_the_chips():
    """Without device= the real runtime (`distributed_runner._resolve_chip_worker`) hands
    chip dispatches out round-robin over the chips in submit order: on 2 devices the
    add goes to rank 0, the three probes to ranks 1, 0, 1."""
    a = np.full((16, 16), 2.0, np.float32)
    b = np.full((16, 16), 3.0, np.float32)
    f = np.zeros_like(a)
    ranks = np.full((3, 1, 8), -1, np.int32)
    CommlessDispatch(a, b, f, ranks, config=SimConfig(device_ids=(0, 1)))
    np.testing.assert_array_equal(f, 5.0)
    assert ranks[:, 0, 0].tolist() == [1, 0, 1]
    assert (ranks == ranks[:, :, :1]).all()
