"""Every pld collective, as a kernel for a world of `nr` ranks (`build(nr)`): each rank
stages its own data into a window, calls the collective inside its kernel (the device
form) or the host calls it between two dispatch loops (the host form), and the kernel
copies what its window holds afterwards into a per-rank output the tests compare with
numpy."""
from __future__ import annotations

from types import SimpleNamespace

import pypto.language as pl
import pypto.language.distributed as pld

S = 64  # elements per rank row


def build(nr: int) -> SimpleNamespace:
    rounds = 2 * (nr - 1)  # a ring allreduce's barrier rows

    # --- barrier: stage my row, barrier, read my successor's -------------------------------

    @pl.jit.incore
    def swap_k(inp: pl.Tensor[[1, S], pl.FP32], out: pl.Out[pl.Tensor[[1, S], pl.FP32]],
               data: pld.DistributedTensor[[1, S], pl.FP32],
               signal: pld.DistributedTensor[[nr, 1], pl.INT32], nxt: pl.Scalar[pl.INT32]):
        data = pl.store(pl.load(inp, [0, 0], [1, S]), [0, 0], data)
        signal = pld.tensor.barrier(signal)
        got = pld.tile.remote_load(data, peer=nxt, offsets=[0, 0], shape=[1, S])
        return pl.store(got, [0, 0], out)

    @pl.jit
    def swap_chip(inp: pl.Tensor[[1, S], pl.FP32], out: pl.Out[pl.Tensor[[1, S], pl.FP32]],
                  data: pld.DistributedTensor[[1, S], pl.FP32],
                  signal: pld.DistributedTensor[[nr, 1], pl.INT32], nxt: pl.Scalar[pl.INT32]):
        return swap_k(inp, out, data, signal, nxt)

    @pl.jit.host
    def barrier(inputs: pl.Tensor[[nr, 1, S], pl.FP32],
                outputs: pl.Out[pl.Tensor[[nr, 1, S], pl.FP32]]):
        data_buf = pld.alloc_window_buffer([1, S], dtype=pl.FP32)
        sig_buf = pld.alloc_window_buffer([nr, 1], dtype=pl.INT32)
        for r in pl.range(pld.world_size()):
            data = pld.window(data_buf, [1, S], dtype=pl.FP32)
            signal = pld.window(sig_buf, [nr, 1], dtype=pl.INT32)
            swap_chip(inputs[r], outputs[r], data, signal, (r + 1) % nr, device=r)

    # --- allreduce, mesh (every op) and ring, twice on one signal --------------------------

    def allreduce_family(rows: int, cols: int, dtype, op, mode: str):
        sig_rows = rounds if mode == "ring" else nr
        sig_cols = nr if mode == "ring" else 1

        @pl.jit.incore
        def reduce_k(inp: pl.Tensor[[2, rows, cols], dtype],
                     out: pl.Out[pl.Tensor[[2, rows, cols], dtype]],
                     data: pld.DistributedTensor[[rows, cols], dtype],
                     signal: pld.DistributedTensor[[sig_rows, sig_cols], pl.INT32]):
            for k in pl.range(2):  # the same signal serves both calls (self-clearing)
                data = pl.store(pl.reshape(pl.load(inp, [k, 0, 0], [1, rows, cols]),
                                           [rows, cols]), [0, 0], data)
                data = pld.tensor.allreduce(data, signal, op=op, mode=mode)
                out = pl.store(pl.reshape(pl.load(data, [0, 0], [rows, cols]),
                                          [1, rows, cols]), [k, 0, 0], out)
            return out

        @pl.jit
        def reduce_chip(inp: pl.Tensor[[2, rows, cols], dtype],
                        out: pl.Out[pl.Tensor[[2, rows, cols], dtype]],
                        data: pld.DistributedTensor[[rows, cols], dtype],
                        signal: pld.DistributedTensor[[sig_rows, sig_cols], pl.INT32]):
            return reduce_k(inp, out, data, signal)

        @pl.jit.host
        def allreduce(inputs: pl.Tensor[[nr, 2, rows, cols], dtype],
                      outputs: pl.Out[pl.Tensor[[nr, 2, rows, cols], dtype]]):
            data_buf = pld.alloc_window_buffer([rows, cols], dtype=dtype)
            sig_buf = pld.alloc_window_buffer([sig_rows, sig_cols], dtype=pl.INT32)
            for r in pl.range(pld.world_size()):
                data = pld.window(data_buf, [rows, cols], dtype=dtype)
                signal = pld.window(sig_buf, [sig_rows, sig_cols], dtype=pl.INT32)
                reduce_chip(inputs[r], outputs[r], data, signal, device=r)

        return allreduce

    # --- broadcast from `root` ---------------------------------------------------------------

    def broadcast_from(root: int):
        @pl.jit.incore
        def bcast_k(inp: pl.Tensor[[1, S], pl.FP32], out: pl.Out[pl.Tensor[[1, S], pl.FP32]],
                    data: pld.DistributedTensor[[1, S], pl.FP32],
                    signal: pld.DistributedTensor[[nr, 1], pl.INT32], me: pl.Scalar[pl.INT32]):
            if me == root:  # only the root stages; the others' windows start zeroed
                data = pl.store(pl.load(inp, [0, 0], [1, S]), [0, 0], data)
            data = pld.tensor.broadcast(data, signal, root=root)
            return pl.store(pl.load(data, [0, 0], [1, S]), [0, 0], out)

        @pl.jit
        def bcast_chip(inp: pl.Tensor[[1, S], pl.FP32], out: pl.Out[pl.Tensor[[1, S], pl.FP32]],
                       data: pld.DistributedTensor[[1, S], pl.FP32],
                       signal: pld.DistributedTensor[[nr, 1], pl.INT32],
                       me: pl.Scalar[pl.INT32]):
            return bcast_k(inp, out, data, signal, me)

        @pl.jit.host
        def broadcast(inputs: pl.Tensor[[nr, 1, S], pl.FP32],
                      outputs: pl.Out[pl.Tensor[[nr, 1, S], pl.FP32]]):
            data_buf = pld.alloc_window_buffer([1, S], dtype=pl.FP32)
            sig_buf = pld.alloc_window_buffer([nr, 1], dtype=pl.INT32)
            for r in pl.range(pld.world_size()):
                data = pld.window(data_buf, [1, S], dtype=pl.FP32)
                signal = pld.window(sig_buf, [nr, 1], dtype=pl.INT32)
                bcast_chip(inputs[r], outputs[r], data, signal, r, device=r)

        return broadcast

    # --- allgather: row r of every rank's target is rank r's row ------------------------

    @pl.jit.incore
    def gather_k(inp: pl.Tensor[[1, S], pl.FP32], out: pl.Out[pl.Tensor[[nr, S], pl.FP32]],
                 stage: pld.DistributedTensor[[1, S], pl.FP32],
                 data: pld.DistributedTensor[[nr, S], pl.FP32],
                 signal: pld.DistributedTensor[[nr, 1], pl.INT32]):
        stage = pl.store(pl.load(inp, [0, 0], [1, S]), [0, 0], stage)
        data = pld.tensor.allgather(stage, data, signal)
        return pl.store(pl.load(data, [0, 0], [nr, S]), [0, 0], out)

    @pl.jit
    def gather_chip(inp: pl.Tensor[[1, S], pl.FP32], out: pl.Out[pl.Tensor[[nr, S], pl.FP32]],
                    stage: pld.DistributedTensor[[1, S], pl.FP32],
                    data: pld.DistributedTensor[[nr, S], pl.FP32],
                    signal: pld.DistributedTensor[[nr, 1], pl.INT32]):
        return gather_k(inp, out, stage, data, signal)

    @pl.jit.host
    def allgather(inputs: pl.Tensor[[nr, 1, S], pl.FP32],
                  outputs: pl.Out[pl.Tensor[[nr, nr, S], pl.FP32]]):
        stage_buf = pld.alloc_window_buffer([1, S], dtype=pl.FP32)
        data_buf = pld.alloc_window_buffer([nr, S], dtype=pl.FP32)
        sig_buf = pld.alloc_window_buffer([nr, 1], dtype=pl.INT32)
        for r in pl.range(pld.world_size()):
            stage = pld.window(stage_buf, [1, S], dtype=pl.FP32)
            data = pld.window(data_buf, [nr, S], dtype=pl.FP32)
            signal = pld.window(sig_buf, [nr, 1], dtype=pl.INT32)
            gather_chip(inputs[r], outputs[r], stage, data, signal, device=r)

    # --- reduce_scatter: rank r keeps the sum of everyone's chunk r ----------------------

    @pl.jit.incore
    def scatter_k(inp: pl.Tensor[[nr, S], pl.FP32], out: pl.Out[pl.Tensor[[1, S], pl.FP32]],
                  data: pld.DistributedTensor[[nr, S], pl.FP32],
                  signal: pld.DistributedTensor[[nr, 1], pl.INT32], me: pl.Scalar[pl.INT32]):
        data = pl.store(pl.load(inp, [0, 0], [nr, S]), [0, 0], data)
        data = pld.tensor.reduce_scatter(data, signal, op=pld.ReduceOp.Sum)
        return pl.store(pl.load(data, [me, 0], [1, S]), [0, 0], out)

    @pl.jit
    def scatter_chip(inp: pl.Tensor[[nr, S], pl.FP32], out: pl.Out[pl.Tensor[[1, S], pl.FP32]],
                     data: pld.DistributedTensor[[nr, S], pl.FP32],
                     signal: pld.DistributedTensor[[nr, 1], pl.INT32], me: pl.Scalar[pl.INT32]):
        return scatter_k(inp, out, data, signal, me)

    @pl.jit.host
    def reduce_scatter(inputs: pl.Tensor[[nr, nr, S], pl.FP32],
                       outputs: pl.Out[pl.Tensor[[nr, 1, S], pl.FP32]]):
        data_buf = pld.alloc_window_buffer([nr, S], dtype=pl.FP32)
        sig_buf = pld.alloc_window_buffer([nr, 1], dtype=pl.INT32)
        for r in pl.range(pld.world_size()):
            data = pld.window(data_buf, [nr, S], dtype=pl.FP32)
            signal = pld.window(sig_buf, [nr, 1], dtype=pl.INT32)
            scatter_chip(inputs[r], outputs[r], data, signal, r, device=r)

    # --- all_to_all: my row d lands in row me of rank d ----------------------------------

    @pl.jit.incore
    def a2a_k(inp: pl.Tensor[[nr, S], pl.FP32], out: pl.Out[pl.Tensor[[nr, S], pl.FP32]],
              stage: pld.DistributedTensor[[nr, S], pl.FP32],
              data: pld.DistributedTensor[[nr, S], pl.FP32],
              signal: pld.DistributedTensor[[nr, 1], pl.INT32]):
        stage = pl.store(pl.load(inp, [0, 0], [nr, S]), [0, 0], stage)
        data = pld.tensor.all_to_all(stage, data, signal)
        return pl.store(pl.load(data, [0, 0], [nr, S]), [0, 0], out)

    @pl.jit
    def a2a_chip(inp: pl.Tensor[[nr, S], pl.FP32], out: pl.Out[pl.Tensor[[nr, S], pl.FP32]],
                 stage: pld.DistributedTensor[[nr, S], pl.FP32],
                 data: pld.DistributedTensor[[nr, S], pl.FP32],
                 signal: pld.DistributedTensor[[nr, 1], pl.INT32]):
        return a2a_k(inp, out, stage, data, signal)

    @pl.jit.host
    def all_to_all(inputs: pl.Tensor[[nr, nr, S], pl.FP32],
                   outputs: pl.Out[pl.Tensor[[nr, nr, S], pl.FP32]]):
        stage_buf = pld.alloc_window_buffer([nr, S], dtype=pl.FP32)
        data_buf = pld.alloc_window_buffer([nr, S], dtype=pl.FP32)
        sig_buf = pld.alloc_window_buffer([nr, 1], dtype=pl.INT32)
        for r in pl.range(pld.world_size()):
            stage = pld.window(stage_buf, [nr, S], dtype=pl.FP32)
            data = pld.window(data_buf, [nr, S], dtype=pl.FP32)
            signal = pld.window(sig_buf, [nr, 1], dtype=pl.INT32)
            a2a_chip(inputs[r], outputs[r], stage, data, signal, device=r)

    # --- all_to_all_v: a block of `cap` rows per peer, counts published ------------------

    def all_to_all_v_with(cap: int):
        total = nr * cap

        @pl.jit.incore
        def a2av_k(inp: pl.Tensor[[total, S], pl.FP32], counts: pl.Tensor[[nr, 1], pl.INT32],
                   out: pl.Out[pl.Tensor[[total, S], pl.FP32]],
                   got: pl.Out[pl.Tensor[[nr, 1], pl.INT32]],
                   stage: pld.DistributedTensor[[total, S], pl.FP32],
                   data: pld.DistributedTensor[[total, S], pl.FP32],
                   signal: pld.DistributedTensor[[nr, 1], pl.INT32],
                   recv: pld.DistributedTensor[[nr, 1], pl.INT32]):
            stage = pl.store(pl.load(inp, [0, 0], [total, S]), [0, 0], stage)
            data = pld.tensor.all_to_all_v(stage, data, signal, counts, recv)
            for src in pl.range(nr):
                pl.write(got, [src, 0], pl.read(recv, [src, 0]))
            return pl.store(pl.load(data, [0, 0], [total, S]), [0, 0], out)

        @pl.jit
        def a2av_chip(inp: pl.Tensor[[total, S], pl.FP32], counts: pl.Tensor[[nr, 1], pl.INT32],
                      out: pl.Out[pl.Tensor[[total, S], pl.FP32]],
                      got: pl.Out[pl.Tensor[[nr, 1], pl.INT32]],
                      stage: pld.DistributedTensor[[total, S], pl.FP32],
                      data: pld.DistributedTensor[[total, S], pl.FP32],
                      signal: pld.DistributedTensor[[nr, 1], pl.INT32],
                      recv: pld.DistributedTensor[[nr, 1], pl.INT32]):
            return a2av_k(inp, counts, out, got, stage, data, signal, recv)

        @pl.jit.host
        def all_to_all_v(inputs: pl.Tensor[[nr, total, S], pl.FP32],
                         counts: pl.Tensor[[nr, nr, 1], pl.INT32],
                         outputs: pl.Out[pl.Tensor[[nr, total, S], pl.FP32]],
                         received: pl.Out[pl.Tensor[[nr, nr, 1], pl.INT32]]):
            stage_buf = pld.alloc_window_buffer([total, S], dtype=pl.FP32)
            data_buf = pld.alloc_window_buffer([total, S], dtype=pl.FP32)
            sig_buf = pld.alloc_window_buffer([nr, 1], dtype=pl.INT32)
            recv_buf = pld.alloc_window_buffer([nr, 1], dtype=pl.INT32)
            for r in pl.range(pld.world_size()):
                stage = pld.window(stage_buf, [total, S], dtype=pl.FP32)
                data = pld.window(data_buf, [total, S], dtype=pl.FP32)
                signal = pld.window(sig_buf, [nr, 1], dtype=pl.INT32)
                recv = pld.window(recv_buf, [nr, 1], dtype=pl.INT32)
                a2av_chip(inputs[r], counts[r], outputs[r], received[r], stage, data, signal,
                          recv, device=r)

        return all_to_all_v

    device = SimpleNamespace(
        barrier=barrier, allreduce=allreduce_family, broadcast=broadcast_from,
        allgather=allgather, reduce_scatter=reduce_scatter, all_to_all=all_to_all,
        all_to_all_v=all_to_all_v_with)
    return SimpleNamespace(nr=nr, device=device, host=_host_forms(nr))


def _host_forms(nr: int) -> SimpleNamespace:
    """The host collectives: a dispatch loop stages each rank's rows into a window, the
    host calls the collective once (a builtin on every rank), a second loop reads the
    windows back."""

    def staging(rows: int):
        @pl.jit.incore
        def put_k(inp: pl.Tensor[[rows, S], pl.FP32],
                  win: pld.DistributedTensor[[rows, S], pl.FP32]):
            return pl.store(pl.load(inp, [0, 0], [rows, S]), [0, 0], win)

        @pl.jit
        def put_rows(inp: pl.Tensor[[rows, S], pl.FP32],
                     win: pld.DistributedTensor[[rows, S], pl.FP32]):
            return put_k(inp, win)

        @pl.jit.incore
        def get_k(win: pld.DistributedTensor[[rows, S], pl.FP32],
                  out: pl.Out[pl.Tensor[[rows, S], pl.FP32]]):
            return pl.store(pl.load(win, [0, 0], [rows, S]), [0, 0], out)

        @pl.jit
        def get_rows(win: pld.DistributedTensor[[rows, S], pl.FP32],
                     out: pl.Out[pl.Tensor[[rows, S], pl.FP32]]):
            return get_k(win, out)

        return put_rows, get_rows

    put1, get1 = staging(1)
    putn, getn = staging(nr)

    @pl.jit.incore
    def pull_k(win: pld.DistributedTensor[[1, S], pl.FP32],
               out: pl.Out[pl.Tensor[[1, S], pl.FP32]], nxt: pl.Scalar[pl.INT32]):
        return pl.store(pld.tile.remote_load(win, peer=nxt, offsets=[0, 0], shape=[1, S]),
                        [0, 0], out)

    @pl.jit
    def pull_next(win: pld.DistributedTensor[[1, S], pl.FP32],
                  out: pl.Out[pl.Tensor[[1, S], pl.FP32]], nxt: pl.Scalar[pl.INT32]):
        return pull_k(win, out, nxt)

    @pl.jit.host
    def barrier_then_swap(inputs: pl.Tensor[[nr, 1, S], pl.FP32],
                          outputs: pl.Out[pl.Tensor[[nr, 1, S], pl.FP32]]):
        # the host barrier orders rank r's staging before rank r+1's read of it
        buf = pld.alloc_window_buffer([1, S], dtype=pl.FP32)
        sig_buf = pld.alloc_window_buffer([nr, 1], dtype=pl.INT32)
        for r in pl.range(pld.world_size()):
            put1(inputs[r], pld.window(buf, [1, S], dtype=pl.FP32), device=r)
        signal = pld.window(sig_buf, [nr, 1], dtype=pl.INT32)
        signal = pld.tensor.barrier(signal)
        for r in pl.range(pld.world_size()):
            pull_next(pld.window(buf, [1, S], dtype=pl.FP32), outputs[r], (r + 1) % nr,
                      device=r)

    @pl.jit.host
    def allreduce(inputs: pl.Tensor[[nr, 1, S], pl.FP32],
                  outputs: pl.Out[pl.Tensor[[nr, 1, S], pl.FP32]]):
        buf = pld.alloc_window_buffer([1, S], dtype=pl.FP32)
        for r in pl.range(pld.world_size()):
            put1(inputs[r], pld.window(buf, [1, S], dtype=pl.FP32), device=r)
        data = pld.window(buf, [1, S], dtype=pl.FP32)
        data = pld.tensor.allreduce(data)  # mesh, with a signal the run provides
        for r in pl.range(pld.world_size()):
            get1(data, outputs[r], device=r)

    @pl.jit.host
    def broadcast(inputs: pl.Tensor[[nr, 1, S], pl.FP32],
                  outputs: pl.Out[pl.Tensor[[nr, 1, S], pl.FP32]]):
        buf = pld.alloc_window_buffer([1, S], dtype=pl.FP32)
        sig_buf = pld.alloc_window_buffer([nr, 1], dtype=pl.INT32)
        for r in pl.range(pld.world_size()):
            put1(inputs[r], pld.window(buf, [1, S], dtype=pl.FP32), device=r)
        data = pld.window(buf, [1, S], dtype=pl.FP32)
        data = pld.tensor.broadcast(data, pld.window(sig_buf, [nr, 1], dtype=pl.INT32),
                                    root=nr - 1)
        for r in pl.range(pld.world_size()):
            get1(data, outputs[r], device=r)

    @pl.jit.host
    def allgather(inputs: pl.Tensor[[nr, 1, S], pl.FP32],
                  outputs: pl.Out[pl.Tensor[[nr, nr, S], pl.FP32]]):
        stage_buf = pld.alloc_window_buffer([1, S], dtype=pl.FP32)
        data_buf = pld.alloc_window_buffer([nr, S], dtype=pl.FP32)
        sig_buf = pld.alloc_window_buffer([nr], dtype=pl.INT32)
        for r in pl.range(pld.world_size()):
            put1(inputs[r], pld.window(stage_buf, [1, S], dtype=pl.FP32), device=r)
        data = pld.tensor.allgather(pld.window(stage_buf, [1, S], dtype=pl.FP32),
                                    pld.window(data_buf, [nr, S], dtype=pl.FP32),
                                    pld.window(sig_buf, [nr], dtype=pl.INT32))
        for r in pl.range(pld.world_size()):
            getn(data, outputs[r], device=r)

    @pl.jit.host
    def reduce_scatter(inputs: pl.Tensor[[nr, nr, S], pl.FP32],
                       outputs: pl.Out[pl.Tensor[[nr, nr, S], pl.FP32]]):
        buf = pld.alloc_window_buffer([nr, S], dtype=pl.FP32)
        sig_buf = pld.alloc_window_buffer([nr, 1], dtype=pl.INT32)
        for r in pl.range(pld.world_size()):
            putn(inputs[r], pld.window(buf, [nr, S], dtype=pl.FP32), device=r)
        data = pld.window(buf, [nr, S], dtype=pl.FP32)
        data = pld.tensor.reduce_scatter(data, pld.window(sig_buf, [nr, 1], dtype=pl.INT32),
                                         op=pld.ReduceOp.Max)
        for r in pl.range(pld.world_size()):
            getn(data, outputs[r], device=r)

    @pl.jit.host
    def all_to_all(inputs: pl.Tensor[[nr, nr, S], pl.FP32],
                   outputs: pl.Out[pl.Tensor[[nr, nr, S], pl.FP32]]):
        stage_buf = pld.alloc_window_buffer([nr, S], dtype=pl.FP32)
        data_buf = pld.alloc_window_buffer([nr, S], dtype=pl.FP32)
        sig_buf = pld.alloc_window_buffer([nr], dtype=pl.INT32)
        for r in pl.range(pld.world_size()):
            putn(inputs[r], pld.window(stage_buf, [nr, S], dtype=pl.FP32), device=r)
        data = pld.tensor.all_to_all(pld.window(stage_buf, [nr, S], dtype=pl.FP32),
                                     pld.window(data_buf, [nr, S], dtype=pl.FP32),
                                     pld.window(sig_buf, [nr], dtype=pl.INT32))
        for r in pl.range(pld.world_size()):
            getn(data, outputs[r], device=r)

    return SimpleNamespace(barrier=barrier_then_swap, allreduce=allreduce, broadcast=broadcast,
                           allgather=allgather, reduce_scatter=reduce_scatter,
                           all_to_all=all_to_all)
