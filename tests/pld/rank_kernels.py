"""Small multi-card kernels the rank-runtime tests run (the `# ERR:<tag>` lines are
where the tests expect a located fault)."""
from __future__ import annotations

import pypto.language as pl
import pypto.language.distributed as pld

S = 64
NR = 2


@pl.jit.incore
def exchange(inp: pl.Tensor[[1, S], pl.FP32], out: pl.Out[pl.Tensor[[1, S], pl.FP32]],
             data: pld.DistributedTensor[[1, S], pl.FP32],
             signal: pld.DistributedTensor[[NR, 1], pl.INT32], expected: pl.Scalar[pl.INT32]):
    ctx = pld.get_comm_ctx(data)
    me = pld.rank(ctx)
    n = pld.nranks(ctx)
    data = pl.store(pl.load(inp, [0, 0], [1, S]), [0, 0], data)
    for peer in pl.range(n):
        if peer != me:
            pld.system.notify(signal, peer=peer, offsets=[me, 0], value=1,
                              op=pld.NotifyOp.AtomicAdd)
    for src in pl.range(n):
        if src != me:
            pld.system.wait(signal=signal, offsets=[src, 0], expected=expected,  # ERR:wait
                            cmp=pld.WaitCmp.Ge)
    acc = pl.load(data, [0, 0], [1, S])
    for peer in pl.range(n):
        if peer != me:
            acc = pl.add(acc, pld.tile.remote_load(data, peer=peer, offsets=[0, 0],
                                                   shape=[1, S]))
    return pl.store(acc, [0, 0], out)


@pl.jit
def exchange_chip(inp: pl.Tensor[[1, S], pl.FP32], out: pl.Out[pl.Tensor[[1, S], pl.FP32]],
                  data: pld.DistributedTensor[[1, S], pl.FP32],
                  signal: pld.DistributedTensor[[NR, 1], pl.INT32],
                  expected: pl.Scalar[pl.INT32]):
    return exchange(inp, out, data, signal, expected)


@pl.jit.host
def allreduce(inputs: pl.Tensor[[NR, 1, S], pl.FP32],
              outputs: pl.Out[pl.Tensor[[NR, 1, S], pl.FP32]]):
    data_buf = pld.alloc_window_buffer([1, S], dtype=pl.FP32)
    signal_buf = pld.alloc_window_buffer([NR, 1], dtype=pl.INT32)
    for r in pl.range(pld.world_size()):
        data = pld.window(data_buf, [1, S], dtype=pl.FP32)
        signal = pld.window(signal_buf, [NR, 1], dtype=pl.INT32)
        exchange_chip(inputs[r], outputs[r], data, signal, 1, device=r)


@pl.jit.host
def waits_too_long(inputs: pl.Tensor[[NR, 1, S], pl.FP32],
                   outputs: pl.Out[pl.Tensor[[NR, 1, S], pl.FP32]]):
    data_buf = pld.alloc_window_buffer([1, S], dtype=pl.FP32)
    signal_buf = pld.alloc_window_buffer([NR, 1], dtype=pl.INT32)
    for r in pl.range(pld.world_size()):
        data = pld.window(data_buf, [1, S], dtype=pl.FP32)
        signal = pld.window(signal_buf, [NR, 1], dtype=pl.INT32)
        exchange_chip(inputs[r], outputs[r], data, signal, 2, device=r)  # one notify each


# --- faults -----------------------------------------------------------------------------


@pl.jit.incore
def load_past(data: pld.DistributedTensor[[4, S], pl.FP32],
              out: pl.Out[pl.Tensor[[1, S], pl.FP32]], row: pl.Scalar[pl.INT32]):
    me = pld.rank(pld.get_comm_ctx(data))
    t = pld.tile.remote_load(data, peer=1 - me, offsets=[row, 0], shape=[2, S])  # ERR:oob
    return pl.store(pl.load(out, [0, 0], [1, S]), [0, 0], out)


@pl.jit
def load_past_chip(data: pld.DistributedTensor[[4, S], pl.FP32],
                   out: pl.Out[pl.Tensor[[1, S], pl.FP32]], row: pl.Scalar[pl.INT32]):
    return load_past(data, out, row)


@pl.jit.host
def remote_oob(outputs: pl.Out[pl.Tensor[[NR, 1, S], pl.FP32]]):
    buf = pld.alloc_window_buffer([4, S], dtype=pl.FP32)
    for r in pl.range(pld.world_size()):
        data = pld.window(buf, [4, S], dtype=pl.FP32)
        load_past_chip(data, outputs[r], 3, device=r)


@pl.jit.incore
def push_unordered(inp: pl.Tensor[[1, S], pl.FP32],
                   data: pld.DistributedTensor[[1, S], pl.FP32]):
    me = pld.rank(pld.get_comm_ctx(data))
    pld.tile.remote_store(pl.load(inp, [0, 0], [1, S]), data, peer=0,  # ERR:push
                          offsets=[0, 0])
    return data


@pl.jit
def push_chip(inp: pl.Tensor[[1, S], pl.FP32], data: pld.DistributedTensor[[1, S], pl.FP32]):
    return push_unordered(inp, data)


@pl.jit.host
def racy_pushes(inputs: pl.Tensor[[NR, 1, S], pl.FP32]):
    buf = pld.alloc_window_buffer([1, S], dtype=pl.FP32)
    for r in pl.range(pld.world_size()):
        data = pld.window(buf, [1, S], dtype=pl.FP32)
        push_chip(inputs[r], data, device=r)


@pl.jit.incore
def stage_and_pull(inp: pl.Tensor[[1, S], pl.FP32], out: pl.Out[pl.Tensor[[1, S], pl.FP32]],
                   data: pld.DistributedTensor[[1, S], pl.FP32]):
    me = pld.rank(pld.get_comm_ctx(data))
    data = pl.store(pl.load(inp, [0, 0], [1, S]), [0, 0], data)  # ERR:stage
    got = pld.tile.remote_load(data, peer=1 - me, offsets=[0, 0], shape=[1, S])  # ERR:pull
    return pl.store(got, [0, 0], out)


@pl.jit
def stage_and_pull_chip(inp: pl.Tensor[[1, S], pl.FP32],
                        out: pl.Out[pl.Tensor[[1, S], pl.FP32]],
                        data: pld.DistributedTensor[[1, S], pl.FP32]):
    return stage_and_pull(inp, out, data)


@pl.jit.host
def swap_without_barrier(inputs: pl.Tensor[[NR, 1, S], pl.FP32],
                         outputs: pl.Out[pl.Tensor[[NR, 1, S], pl.FP32]]):
    buf = pld.alloc_window_buffer([1, S], dtype=pl.FP32)
    for r in pl.range(pld.world_size()):
        data = pld.window(buf, [1, S], dtype=pl.FP32)
        stage_and_pull_chip(inputs[r], outputs[r], data, device=r)


@pl.jit.host
def off_the_world(inputs: pl.Tensor[[NR, 1, S], pl.FP32]):
    buf = pld.alloc_window_buffer([1, S], dtype=pl.FP32)
    data = pld.window(buf, [1, S], dtype=pl.FP32)
    push_chip(inputs[0], data, device=5)  # ERR:device


@pl.jit.incore
def fixed_pair(data: pld.DistributedTensor[[1, S], pl.FP32],
               signal: pld.DistributedTensor[[NR, 1], pl.INT32], me: pl.Scalar[pl.INT32]):
    for peer in pl.range(NR):  # written for exactly two ranks, like pypto-lib's allreduce
        if peer != me:
            pld.system.notify(signal, peer=peer, offsets=[me, 0], value=1,  # ERR:pair-notify
                              op=pld.NotifyOp.AtomicAdd)
            pld.system.wait(signal, offsets=[peer, 0], expected=1, cmp=pld.WaitCmp.Ge)
    return data


@pl.jit
def fixed_pair_chip(data: pld.DistributedTensor[[1, S], pl.FP32],
                    signal: pld.DistributedTensor[[NR, 1], pl.INT32], me: pl.Scalar[pl.INT32]):
    return fixed_pair(data, signal, me)


@pl.jit.host
def pair_host(inputs: pl.Tensor[[NR, 1, S], pl.FP32]):
    data_buf = pld.alloc_window_buffer([1, S], dtype=pl.FP32)
    signal_buf = pld.alloc_window_buffer([NR, 1], dtype=pl.INT32)
    for r in pl.range(pld.world_size()):
        data = pld.window(data_buf, [1, S], dtype=pl.FP32)
        signal = pld.window(signal_buf, [NR, 1], dtype=pl.INT32)
        fixed_pair_chip(data, signal, r, device=r)


# --- run-time faults of values the compiler cannot know ----------------------------------


@pl.jit.incore
def bcast_from(data: pld.DistributedTensor[[1, S], pl.FP32],
               signal: pld.DistributedTensor[[NR, 1], pl.INT32]):
    data = pld.tensor.broadcast(data, signal, root=3)  # ERR:root
    return data


@pl.jit
def bcast_chip(data: pld.DistributedTensor[[1, S], pl.FP32],
               signal: pld.DistributedTensor[[NR, 1], pl.INT32]):
    return bcast_from(data, signal)


@pl.jit.host
def bcast_root_off_the_world(inputs: pl.Tensor[[NR, 1, S], pl.FP32]):
    buf = pld.alloc_window_buffer([1, S], dtype=pl.FP32)
    sig = pld.alloc_window_buffer([NR, 1], dtype=pl.INT32)
    for r in pl.range(pld.world_size()):
        bcast_chip(pld.window(buf, [1, S], dtype=pl.FP32),
                   pld.window(sig, [NR, 1], dtype=pl.INT32), device=r)


@pl.jit.incore
def notify_row(signal: pld.DistributedTensor[[NR, 1], pl.INT32], row: pl.Scalar[pl.INT32]):
    pld.system.notify(signal, peer=0, offsets=[row, 0], value=1,  # ERR:cell
                      op=pld.NotifyOp.AtomicAdd)
    return signal


@pl.jit
def notify_chip(signal: pld.DistributedTensor[[NR, 1], pl.INT32], row: pl.Scalar[pl.INT32]):
    return notify_row(signal, row)


@pl.jit.host
def notify_past_the_signal(inputs: pl.Tensor[[NR, 1, S], pl.FP32]):
    sig = pld.alloc_window_buffer([NR, 1], dtype=pl.INT32)
    for r in pl.range(pld.world_size()):
        notify_chip(pld.window(sig, [NR, 1], dtype=pl.INT32), r + NR, device=r)


@pl.jit.host
def view_past_the_buffer(outputs: pl.Out[pl.Tensor[[NR, 1, S], pl.FP32]]):
    buf = pld.alloc_window_buffer([1, S], dtype=pl.FP32)
    data = pld.window(buf, [4, S], dtype=pl.FP32)  # ERR:view
    load_past_chip(data, outputs[0], 0, device=0)


@pl.jit.incore
def put_rows(src: pl.Tensor[[4, S], pl.FP32], data: pld.DistributedTensor[[4, S], pl.FP32],
             row: pl.Scalar[pl.INT32]):
    pld.tensor.put(data, 1, src, dst_offsets=[0, 0], src_offsets=[row, 0],  # ERR:put
                   shape=[2, S])
    return data


@pl.jit
def put_chip(src: pl.Tensor[[4, S], pl.FP32], data: pld.DistributedTensor[[4, S], pl.FP32],
             row: pl.Scalar[pl.INT32]):
    return put_rows(src, data, row)


@pl.jit.host
def put_past_the_source(inputs: pl.Tensor[[NR, 4, S], pl.FP32]):
    buf = pld.alloc_window_buffer([4, S], dtype=pl.FP32)
    put_chip(inputs[0], pld.window(buf, [4, S], dtype=pl.FP32), 3, device=0)


@pl.jit.incore
def difference(a: pl.Tensor[[1, S], pl.FP32], b: pl.Tensor[[1, 8], pl.FP32],
               out: pl.Out[pl.Tensor[[1, S], pl.FP32]]):
    head = pl.sub(pl.load(a, [0, 0], [1, 8]), pl.load(b, [0, 0], [1, 8]))
    return pl.store(head, [0, 0], out)


@pl.jit
def difference_chip(a: pl.Tensor[[1, S], pl.FP32], b: pl.Tensor[[1, 8], pl.FP32],
                    out: pl.Out[pl.Tensor[[1, S], pl.FP32]]):
    return difference(a, b, out)


@pl.jit.host
def rank_differences(a: pl.Tensor[[NR, 1, S], pl.FP32], b: pl.Tensor[[NR, 1, 8], pl.FP32],
                     out: pl.Out[pl.Tensor[[NR, 1, S], pl.FP32]]):
    """out[r][:, :8] = a[r][:, :8] - b[r]: the parameters differ in shape and in role,
    so a spec bound to the wrong one shows."""
    for r in pl.range(pld.world_size()):
        difference_chip(a[r], b[r], out[r], device=r)


@pl.jit
def plus_one_then_chain(x: pl.Tensor[[8, S], pl.FP32], y: pl.Out[pl.Tensor[[8, S], pl.FP32]],
                        acc: pl.InOut[pl.Tensor[[8, S], pl.FP32]]):
    """One launch loop that batches (independent rows) and one that cannot (each row
    reads the row the iteration before wrote)."""
    for i in pl.range(0, 8, 1):
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="rows"):
            y[i:i + 1, :] = pl.add(x[i:i + 1, :], 1.0)
    for i in pl.range(0, 7, 1):
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="chain"):
            acc[i + 1:i + 2, :] = pl.add(acc[i:i + 1, :], 1.0)
    return y, acc


@pl.jit.host
def batching_on_ranks(x: pl.Tensor[[NR, 8, S], pl.FP32], y: pl.Out[pl.Tensor[[NR, 8, S], pl.FP32]],
                      acc: pl.InOut[pl.Tensor[[NR, 8, S], pl.FP32]]):
    for r in pl.range(pld.world_size()):
        plus_one_then_chain(x[r], y[r], acc[r], device=r)


NR8 = 8


@pl.jit.incore
def stage_and_pull_next(inp: pl.Tensor[[1, S], pl.FP32], out: pl.Out[pl.Tensor[[1, S], pl.FP32]],
                        data: pld.DistributedTensor[[1, S], pl.FP32]):
    ctx = pld.get_comm_ctx(data)
    me = pld.rank(ctx)
    data = pl.store(pl.load(inp, [0, 0], [1, S]), [0, 0], data)
    n = pld.nranks(ctx)
    got = pld.tile.remote_load(data, peer=(me + 1) % n, offsets=[0, 0], shape=[1, S])  # ERR:next
    return pl.store(got, [0, 0], out)


@pl.jit
def stage_and_pull_next_chip(inp: pl.Tensor[[1, S], pl.FP32],
                             out: pl.Out[pl.Tensor[[1, S], pl.FP32]],
                             data: pld.DistributedTensor[[1, S], pl.FP32]):
    return stage_and_pull_next(inp, out, data)


@pl.jit.host
def ring_without_barrier(inputs: pl.Tensor[[NR8, 1, S], pl.FP32],
                         outputs: pl.Out[pl.Tensor[[NR8, 1, S], pl.FP32]]):
    """Each of 8 ranks stages its row and reads its successor's, with no barrier: the
    ranks run in a fixed order, so all but the last read a window nobody wrote yet."""
    buf = pld.alloc_window_buffer([1, S], dtype=pl.FP32)
    for r in pl.range(pld.world_size()):
        data = pld.window(buf, [1, S], dtype=pl.FP32)
        stage_and_pull_next_chip(inputs[r], outputs[r], data, device=r)


@pl.jit.incore
def mark_window(win: pld.DistributedTensor[[1, S], pl.FP32]):
    return pl.store(pl.full([1, S], dtype=pl.FP32, value=1.0), [0, 0], win)


@pl.jit
def mark_chip(win: pld.DistributedTensor[[1, S], pl.FP32]):
    return mark_window(win)


@pl.jit.host
def mark_every_rank():
    """Each rank writes its own window (any number of ranks)."""
    buf = pld.alloc_window_buffer([1, S], dtype=pl.FP32)
    for r in pl.range(pld.world_size()):
        mark_chip(pld.window(buf, [1, S], dtype=pl.FP32), device=r)


@pl.jit.incore
def load_at(x: pl.Tensor[[1, S], pl.FP32], win: pld.DistributedTensor[[1, S], pl.FP32],
            k: pl.Scalar[pl.INDEX]):
    return pl.store(pl.load(x, [0, k], [1, S]), [0, 0], win)  # ERR:rank2


@pl.jit
def load_at_chip(x: pl.Tensor[[1, S], pl.FP32], win: pld.DistributedTensor[[1, S], pl.FP32],
                 k: pl.Scalar[pl.INDEX]):
    return load_at(x, win, k)


@pl.jit.host
def fault_on_rank_two(x: pl.Tensor[[4, 1, S], pl.FP32]):
    """Rank 2 (only) loads past the end of its row."""
    buf = pld.alloc_window_buffer([1, S], dtype=pl.FP32)
    for r in pl.range(pld.world_size()):
        k = 0
        if r == 2:
            k = 8
        load_at_chip(x[r], pld.window(buf, [1, S], dtype=pl.FP32), k, device=r)
