"""Every pld compile-time error says what is wrong, where (file:line:col of the token at
fault) and how to fix it."""
from __future__ import annotations

import pytest
from frontend_helpers import compile_error

import pypto.language as pl
import pypto.language.distributed as pld
from pypto.errors import InvalidOperationError, PyptoSyntaxError, PyptoTypeError, ScopeError

HERE = __file__
S = 32
NR = 2


@pl.jit
def chip(x: pl.Tensor[[1, S], pl.FP32], win: pld.DistributedTensor[[1, S], pl.FP32]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="stage"):
        win = pl.store(pl.load(x, [0, 0], [1, S]), [0, 0], win)
    return win


@pl.jit
def plain_chip(x: pl.Tensor[[1, S], pl.FP32], y: pl.Tensor[[1, S], pl.FP32]):
    return y


@pl.jit.incore
def kernel(x: pl.Tensor[[1, S], pl.FP32], win: pld.DistributedTensor[[1, S], pl.FP32]):
    return pl.store(pl.load(x, [0, 0], [1, S]), [0, 0], win)


# --- window buffers -------------------------------------------------------------------


@pl.jit.host
def alloc_as_statement(x: pl.Tensor[[NR, 1, S], pl.FP32]):
    pld.alloc_window_buffer([1, S], dtype=pl.FP32)  # ERR:alloc-stmt


def test_alloc_must_be_assigned():
    err = compile_error(alloc_as_statement, PyptoSyntaxError, "must be the right-hand side of a "
                        "simple assignment", HERE, "alloc-stmt", "pld.alloc_window_buffer")
    assert "buf = pld.alloc_window_buffer" in err.hint


@pl.jit.host
def alloc_no_dtype(x: pl.Tensor[[NR, 1, S], pl.FP32]):
    buf = pld.alloc_window_buffer([1, S])  # ERR:alloc-dtype


def test_alloc_of_a_shape_needs_a_dtype():
    compile_error(alloc_no_dtype, InvalidOperationError, "needs dtype=", HERE, "alloc-dtype",
                  "pld.alloc_window_buffer")


@pl.jit
def alloc_on_device(x: pl.Tensor[[1, S], pl.FP32]):
    buf = pld.alloc_window_buffer([1, S], dtype=pl.FP32)  # ERR:alloc-device
    return x


def test_alloc_belongs_to_the_host():
    compile_error(alloc_on_device, ScopeError, "belongs to the host", HERE, "alloc-device",
                  "pld.alloc_window_buffer")


@pl.jit.host
def window_of_a_tensor(x: pl.Tensor[[NR, 1, S], pl.FP32]):
    for r in pl.range(pld.world_size()):
        win = pld.window(x, [1, S], dtype=pl.FP32)  # ERR:window-arg


def test_window_needs_a_buffer_handle():
    compile_error(window_of_a_tensor, InvalidOperationError, "handle returned by "
                  "pld.alloc_window_buffer", HERE, "window-arg", "x,")


@pl.jit
def world_size_on_device(x: pl.Tensor[[1, S], pl.FP32]):
    for i in pl.range(pld.world_size()):  # ERR:world-size
        x = x
    return x


def test_world_size_is_host_side():
    err = compile_error(world_size_on_device, ScopeError, "pld.world_size is host-side work",
                        HERE, "world-size", "pld.world_size()")
    assert "pld.get_comm_ctx" in err.hint


# --- dispatch ---------------------------------------------------------------------------


@pl.jit
def device_from_device(x: pl.Tensor[[1, S], pl.FP32], win: pld.DistributedTensor[[1, S], pl.FP32]):
    chip(x, win, device=0)  # ERR:device-kind
    return x


def test_only_the_host_dispatches_on_devices():
    compile_error(device_from_device, ScopeError, "only a @pl.jit.host function dispatches",
                  HERE, "device-kind", "0")


@pl.jit.host
def dispatch_kernel(x: pl.Tensor[[NR, 1, S], pl.FP32]):
    buf = pld.alloc_window_buffer([1, S], dtype=pl.FP32)
    for r in pl.range(pld.world_size()):
        win = pld.window(buf, [1, S], dtype=pl.FP32)
        kernel(x[r], win, device=r)  # ERR:dispatch-incore


def test_the_host_dispatches_a_jit_function_not_a_kernel():
    compile_error(dispatch_kernel, InvalidOperationError, "is an InCore kernel", HERE,
                  "dispatch-incore", "kernel(")


@pl.jit.host
def plain_for_window(x: pl.Tensor[[NR, 1, S], pl.FP32]):
    for r in pl.range(pld.world_size()):
        chip(x[r], x[r], device=r)  # ERR:plain-for-window


def test_a_window_parameter_needs_a_window():
    err = compile_error(plain_for_window, PyptoTypeError, "parameter 'win' is a "
                        "pld.DistributedTensor (window-bound)", HERE, "plain-for-window",
                        "chip(")
    assert "pld.window" in err.hint


@pl.jit.host
def window_for_plain(x: pl.Tensor[[NR, 1, S], pl.FP32]):
    buf = pld.alloc_window_buffer([1, S], dtype=pl.FP32)
    for r in pl.range(pld.world_size()):
        win = pld.window(buf, [1, S], dtype=pl.FP32)
        plain_chip(x[r], win, device=r)  # ERR:window-for-plain


def test_a_window_is_not_a_plain_tensor():
    compile_error(window_for_plain, PyptoTypeError, "parameter 'y' is a plain pl.Tensor but "
                  "the argument is the window", HERE, "window-for-plain", "plain_chip(")


@pl.jit.host
def bad_device(x: pl.Tensor[[NR, 1, S], pl.FP32]):
    buf = pld.alloc_window_buffer([1, S], dtype=pl.FP32)
    for r in pl.range(pld.world_size()):
        win = pld.window(buf, [1, S], dtype=pl.FP32)
        chip(x[r], win, device=1.5)  # ERR:device-value


def test_device_is_a_rank_index():
    compile_error(bad_device, PyptoTypeError, "device= must be a rank index", HERE,
                  "device-value", "1.5")


@pl.jit.host
def host_region(x: pl.Tensor[[NR, 1, S], pl.FP32], y: pl.Out[pl.Tensor[[NR, 1, S], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="h"):  # ERR:host-region
        y[0:1, 0:1, :] = pl.exp(x[0:1, 0:1, :])
    return y


def test_the_host_runs_no_region():
    compile_error(host_region, ScopeError, "runs no InCore region itself", HERE,
                  "host-region", "with")


# --- op arguments -----------------------------------------------------------------------


@pl.jit.incore
def notify_plain(x: pl.Tensor[[NR, 1], pl.INT32], me: pl.Scalar[pl.INT32]):
    pld.system.notify(x, 1, [me, 0], 1, op=pld.NotifyOp.AtomicAdd)  # ERR:notify-plain
    return x


def test_notify_needs_a_window():
    err = compile_error(notify_plain, InvalidOperationError, "needs a window-bound "
                        "pld.DistributedTensor as 'target', got a plain pl.Tensor", HERE,
                        "notify-plain", "x,")
    assert "pld.window" in err.hint


@pl.jit.incore
def wait_wrong_enum(sig: pld.DistributedTensor[[NR, 1], pl.INT32]):
    pld.system.wait(sig, [0, 0], 1, cmp=pld.NotifyOp.Set)  # ERR:wait-enum
    return sig


def test_wait_cmp_is_a_wait_cmp():
    compile_error(wait_wrong_enum, InvalidOperationError, "'cmp' must be one of "
                  "pld.WaitCmp.Eq, pld.WaitCmp.Ge", HERE, "wait-enum", "pld.NotifyOp.Set")


@pl.jit.incore
def wait_no_cmp(sig: pld.DistributedTensor[[NR, 1], pl.INT32]):
    pld.system.wait(sig, [0, 0], 1)  # ERR:wait-no-cmp
    return sig


def test_wait_cmp_is_required():
    compile_error(wait_no_cmp, InvalidOperationError,
                  "pld.system.wait requires keyword argument 'cmp'", HERE, "wait-no-cmp",
                  "pld.system.wait")


@pl.jit.incore
def defer_eq(sig: pld.DistributedTensor[[NR, 1], pl.INT32]):
    pld.system.defer_wait(sig, [0, 0], 1, cmp=pld.WaitCmp.Eq)  # ERR:defer-eq
    return sig


def test_defer_wait_is_ge_only():
    compile_error(defer_eq, InvalidOperationError, "supports only cmp=pld.WaitCmp.Ge", HERE,
                  "defer-eq", "pld.WaitCmp.Eq")


@pl.jit.incore
def float_signal(sig: pld.DistributedTensor[[NR, 1], pl.FP32]):
    pld.system.notify(sig, 0, [0, 0], 1, op=pld.NotifyOp.Set)  # ERR:float-signal
    return sig


def test_signals_hold_integers():
    compile_error(float_signal, InvalidOperationError, "must hold integers", HERE,
                  "float-signal", "sig,")


@pl.jit.incore
def load_offsets(win: pld.DistributedTensor[[4, S], pl.FP32]):
    t = pld.tile.remote_load(win, 1, [0], [4, S])  # ERR:load-offsets
    return win


def test_remote_load_offsets_per_axis():
    compile_error(load_offsets, InvalidOperationError, "'offsets' needs one entry per axis",
                  HERE, "load-offsets", "[0]")


@pl.jit.incore
def load_past_end(win: pld.DistributedTensor[[4, S], pl.FP32]):
    t = pld.tile.remote_load(win, 1, [2, 0], [4, S])  # ERR:load-past
    return win


def test_remote_load_box_stays_in_the_window():
    compile_error(load_past_end, InvalidOperationError, "the box [2, 6) on axis 0 runs past "
                  "the extent 4", HERE, "load-past", "[2, 0]")


@pl.jit.incore
def tile_store_tensor(x: pl.Tensor[[4, S], pl.FP32], win: pld.DistributedTensor[[4, S], pl.FP32]):
    pld.tile.remote_store(x, win, 1, [0, 0])  # ERR:tile-store
    return win


def test_tile_remote_store_pushes_a_tile():
    err = compile_error(tile_store_tensor, InvalidOperationError, "pushes a tile", HERE,
                        "tile-store", "x,")
    assert "pld.tensor.remote_store" in err.hint


@pl.jit.incore
def store_dtype(x: pl.Tensor[[4, S], pl.FP32], win: pld.DistributedTensor[[4, S], pl.BF16]):
    pld.tile.remote_store(pl.load(x, [0, 0], [4, S]), win, 1, [0, 0])  # ERR:store-dtype
    return win


def test_remote_store_dtype_matches_the_window():
    compile_error(store_dtype, InvalidOperationError, "has dtype pl.FP32 but the window holds "
                  "pl.BF16", HERE, "store-dtype", "pl.load")


@pl.jit.incore
def put_pipeline(x: pl.Tensor[[4, S], pl.FP32], win: pld.DistributedTensor[[4, S], pl.FP32]):
    pld.tensor.put(win, 1, x, pipeline=True)  # ERR:put-pipe
    return win


def test_put_pipeline_needs_chunks():
    compile_error(put_pipeline, InvalidOperationError, "pipeline=True double-buffers a chunked "
                  "transfer", HERE, "put-pipe", "True")


@pl.jit.incore
def put_half_region(x: pl.Tensor[[4, S], pl.FP32], win: pld.DistributedTensor[[4, S], pl.FP32]):
    pld.tensor.put(win, 1, x, dst_offsets=[0, 0], shape=[1, S])  # ERR:put-region
    return win


def test_put_region_comes_whole():
    compile_error(put_half_region, InvalidOperationError, "must be given together (missing "
                  "src_offsets)", HERE, "put-region", "pld.tensor.put")


@pl.jit.incore
def get_into_tile(win: pld.DistributedTensor[[4, S], pl.FP32]):
    t = pl.load(win, [0, 0], [4, S])
    pld.tensor.get(t, 1, win)  # ERR:get-tile
    return win


def test_get_lands_in_global_memory():
    compile_error(get_into_tile, InvalidOperationError, "'dst' must be a tensor in global "
                  "memory", HERE, "get-tile", "t,")


@pl.jit.incore
def allreduce_no_signal(win: pld.DistributedTensor[[4, S], pl.FP32]):
    win = pld.tensor.allreduce(win)  # ERR:ar-signal
    return win


def test_device_allreduce_names_its_signal():
    compile_error(allreduce_no_signal, InvalidOperationError, "in device code needs its "
                  "signal window", HERE, "ar-signal", "pld.tensor.allreduce")


@pl.jit.host
def host_allreduce_in_loop(x: pl.Tensor[[NR, 4, S], pl.FP32]):
    buf = pld.alloc_window_buffer([4, S], dtype=pl.FP32)
    win = pld.window(buf, [4, S], dtype=pl.FP32)
    for i in pl.range(2):
        win = pld.tensor.allreduce(win)  # ERR:ar-loop


def test_host_allreduce_in_a_loop_needs_a_signal():
    compile_error(host_allreduce_in_loop, InvalidOperationError, "inside a loop of the host "
                  "needs an explicit signal", HERE, "ar-loop", "pld.tensor.allreduce")


@pl.jit.incore
def ring_core_num(win: pld.DistributedTensor[[4, S], pl.FP32],
                  sig: pld.DistributedTensor[[2, 2], pl.INT32]):
    win = pld.tensor.allreduce(win, sig, mode="ring", core_num=2)  # ERR:ring
    return win


def test_ring_allreduce_runs_on_one_core():
    compile_error(ring_core_num, InvalidOperationError, "mode=\"ring\" runs on one core", HERE,
                  "ring", "2)")


def test_pld_spelled_any_way_is_accepted():
    import pypto.language.distributed as dist

    @pl.jit.incore
    def k(win: dist.DistributedTensor[[NR, 1], pl.INT32]):
        dist.system.wait(win, [0, 0], 1, cmp=dist.WaitCmp.Ge)
        return win

    assert k.compile().program.function("k") is not None


@pytest.mark.parametrize("bad", ["0", "-8"])
def test_alloc_size_is_positive(bad):
    src = f'''
import pypto.language as pl
import pypto.language.distributed as pld

@pl.jit.host
def h(x: pl.Tensor[[2, 4], pl.FP32]):
    buf = pld.alloc_window_buffer({bad})
'''
    ns: dict = {}
    import linecache
    name = f"<pld-alloc-{bad}>"
    linecache.cache[name] = (len(src), None, src.splitlines(True), name)
    exec(compile(src, name, "exec"), ns)
    with pytest.raises(InvalidOperationError, match="must be a positive number of bytes") as info:
        ns["h"].compile()
    assert info.value.span.line == 7
