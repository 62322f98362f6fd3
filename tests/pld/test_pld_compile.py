"""The pld language surface compiles: window types, the host function and its per-rank
dispatches, the ops' types and printing, and the `@pl.program` host form."""
from __future__ import annotations

import pytest

import pypto.language as pl
import pypto.language.distributed as pld
from pypto.ir.distributed import DistributedTensorType, NotifyOp, WaitCmp, WindowBufferType
from pypto.ir.distributed_compiled_program import DistributedConfig
from pypto.ir.nodes import Assign, Call, CallFunc, FunctionKind
from pypto.ir.printer import print_program
from pypto.ir.transform import walk
from pypto.ir.types import TileType

SIZE = 64
NR = 2


@pl.jit.incore
def exchange(inp: pl.Tensor[[1, SIZE], pl.FP32], out: pl.Out[pl.Tensor[[1, SIZE], pl.FP32]],
             data: pld.DistributedTensor[[1, SIZE], pl.FP32],
             signal: pld.DistributedTensor[[NR, 1], pl.INT32], me: pl.Scalar[pl.INT32]):
    data = pl.store(pl.load(inp, [0, 0], [1, SIZE]), [0, 0], data)
    for peer in pl.range(NR):
        if peer != me:
            pld.system.notify(signal, peer=peer, offsets=[me, 0], value=1,
                              op=pld.NotifyOp.AtomicAdd)
    for src in pl.range(NR):
        if src != me:
            pld.system.wait(signal=signal, offsets=[src, 0], expected=1, cmp=pld.WaitCmp.Ge)
    acc = pl.load(data, [0, 0], [1, SIZE])
    for peer in pl.range(NR):
        if peer != me:
            acc = pl.add(acc, pld.tile.remote_load(data, peer=peer, offsets=[0, 0],
                                                   shape=[1, SIZE]))
    return pl.store(acc, [0, 0], out)


@pl.jit
def chip(inp: pl.Tensor[[1, SIZE], pl.FP32], out: pl.Out[pl.Tensor[[1, SIZE], pl.FP32]],
         data: pld.DistributedTensor[[1, SIZE], pl.FP32],
         signal: pld.DistributedTensor[[NR, 1], pl.INT32], me: pl.Scalar[pl.INT32]):
    return exchange(inp, out, data, signal, me)


@pl.jit.host
def host(inputs: pl.Tensor[[NR, 1, SIZE], pl.FP32],
         outputs: pl.Out[pl.Tensor[[NR, 1, SIZE], pl.FP32]]):
    data_buf = pld.alloc_window_buffer([1, SIZE], dtype=pl.FP32)
    signal_buf = pld.alloc_window_buffer(NR * pl.INT32.get_byte())
    for r in pl.range(pld.world_size()):
        data = pld.window(data_buf, [1, SIZE], dtype=pl.FP32)
        signal = pld.window(signal_buf, [NR, 1], dtype=pl.INT32)
        chip(inputs[r], outputs[r], data, signal, r, device=r)


def _calls(func, op):
    return [n for n in walk(func.body) if isinstance(n, Call) and n.op == op]


def test_host_program_has_a_host_entry_a_chip_function_and_a_kernel():
    compiled = host.compile()
    kinds = {f.name: f.kind for f in compiled.program.functions}
    assert kinds == {"host": FunctionKind.HOST, "chip": FunctionKind.ORCHESTRATION,
                     "exchange": FunctionKind.INCORE}
    assert compiled.program.entry == "host"


def test_window_buffers_are_named_after_their_variables():
    f = host.compile().program.function("host")
    allocs = [s for s in walk(f.body) if isinstance(s, Assign) and isinstance(s.value, Call)
              and s.value.op == "pld.tensor.alloc_window_buffer"]
    assert [(s.targets[0].name, s.value.args[-1].value) for s in allocs] == \
        [("data_buf", "data_buf"), ("signal_buf", "signal_buf")]
    assert all(isinstance(s.targets[0].type, WindowBufferType) for s in allocs)
    windows = _calls(f, "pld.tensor.window")
    assert [w.type for w in windows] == [DistributedTensorType((1, SIZE), pl.FP32),
                                         DistributedTensorType((NR, 1), pl.INT32)]


def test_device_dispatch_is_a_call_of_the_chip_function_with_its_rank():
    f = host.compile().program.function("host")
    (call,) = [n for n in walk(f.body) if isinstance(n, CallFunc)]
    assert call.func == "chip"
    assert call.launch_attr("kind") == "device"
    assert call.launch_attr("device").name == "r"
    chip_f = host.compile().program.function("chip")
    assert [type(p.var.type) for p in chip_f.params][2:4] == [DistributedTensorType] * 2


def test_window_parameters_keep_their_type_through_stores():
    kernel = host.compile().program.function("exchange")
    stores = [s for s in walk(kernel.body) if isinstance(s, Assign) and
              isinstance(s.value, Call) and s.value.op == "store"]
    assert isinstance(stores[0].targets[0].type, DistributedTensorType)
    (load,) = _calls(kernel, "pld.tile.remote_load")
    assert load.type == TileType((1, SIZE), pl.FP32)


def test_enums_are_the_real_abi_values_and_print_under_pld():
    assert [int(NotifyOp.AtomicAdd), int(NotifyOp.Set)] == [0, 1]
    assert [int(WaitCmp.Eq), int(WaitCmp.Ge)] == [0, 1]
    assert pld.NotifyOp is NotifyOp and pld.AtomicType is pl.AtomicType
    text = print_program(host.compile().program)
    assert "op=pld.NotifyOp.AtomicAdd" in text
    assert "cmp=pld.WaitCmp.Ge" in text
    assert "pld.tensor.window(data_buf, [1, 64], dtype=pl.FP32)" in text
    assert "self.chip(" in text and "device=r)" in text
    assert "data: pld.DistributedTensor[[1, 64], pl.FP32]" in text


def test_the_host_has_no_task_graph_of_its_own():
    graph = host.compile().analyses["task_graph"]
    assert {n.caller for n in graph.nodes} == {"chip"}


@pl.program
class ProgramForm:
    @pl.function(type=pl.FunctionType.InCore)
    def stage(self, inp: pl.Tensor[[1, SIZE], pl.FP32],
              win: pld.DistributedTensor[[1, SIZE], pl.FP32]):
        win = pl.store(pl.load(inp, [0, 0], [1, SIZE]), [0, 0], win)
        return win

    @pl.function(type=pl.FunctionType.Orchestration)
    def chip_orch(self, inp: pl.Tensor[[1, SIZE], pl.FP32],
                  win: pld.DistributedTensor[[1, SIZE], pl.FP32]):
        return self.stage(inp, win)

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host_orch(self, inputs: pl.Tensor[[NR, 1, SIZE], pl.FP32]):
        win_buf = pld.alloc_window_buffer(SIZE * pl.FP32.get_byte())
        for r in pl.range(pld.world_size()):
            win = pld.window(win_buf, [1, SIZE], dtype=pl.FP32)
            self.chip_orch(inputs[r], win, device=r)


def test_program_form_host_function_is_the_entry():
    compiled = ProgramForm.compile()
    assert compiled.program.entry == "host_orch"
    assert compiled.program.function("host_orch").kind is FunctionKind.HOST
    assert compiled.program.function("chip_orch").kind is FunctionKind.ORCHESTRATION


def test_comm_ctx_gives_rank_and_group_size_as_int32():
    @pl.jit.incore
    def k(win: pld.DistributedTensor[[NR, 1], pl.INT32]):
        ctx = pld.get_comm_ctx(win)
        me = pld.rank(ctx)
        n = pld.nranks(ctx)
        for peer in pl.range(n):
            if peer != me:
                pld.system.notify(win, peer, [me, 0], 1, op=pld.NotifyOp.Set)
        return win

    f = k.compile().program.function("k")
    (rank,) = _calls(f, "pld.system.rank")
    assert str(rank.type) == "pl.Scalar[pl.INT32]"


def test_distributed_config_validates_like_the_real_one():
    assert DistributedConfig(device_ids=[0, 1]).world_size == 2
    with pytest.raises(ValueError, match="must be distinct"):
        DistributedConfig(device_ids=[1, 1])
    with pytest.raises(ValueError, match="must not be empty"):
        DistributedConfig(device_ids=[])
    with pytest.raises(ValueError, match="aicpu_thread_num"):
        DistributedConfig(device_ids=[0], aicpu_thread_num=1)


def test_pld_annotations_are_not_values():
    with pytest.raises(TypeError, match="annotation"):
        pld.DistributedTensor()
    with pytest.raises(RuntimeError, match="inside a kernel body"):
        pld.system.notify(None, 0, [0], 1, op=pld.NotifyOp.Set)
    assert pld.DistributedTensor[[4, 4], pl.FP32, "window_buffer=w"].shape == (4, 4)


def test_pld_names_cover_the_registry_short_forms():
    from pypto.ops.registry import BY_PUBLIC_NAME

    short = {n.split(".", 1)[1] for n in BY_PUBLIC_NAME if n.count(".") == 1 and
             n.startswith("pld.")}
    assert short <= set(pld.__all__)
    for name in pld.__all__:
        assert hasattr(pld, name)
    spaces = {n.rsplit(".", 1)[0] for n in BY_PUBLIC_NAME if n.startswith("pld.")}
    assert spaces == {"pld", "pld.system", "pld.tensor", "pld.tile"}
