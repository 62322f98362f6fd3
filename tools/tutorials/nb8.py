"""Tutorial 8. Two ranks: pld windows, notify / wait, a deadlock and a race."""
from __future__ import annotations

from tutorials.cells import SETUP, code, md

NB8 = [
    md("""
    # 8 · Two ranks: windows, `notify` / `wait`, and a deadlock

    A multi-card kernel (`import pypto.language.distributed as pld`) runs one copy of a chip
    function per device. The simulator runs every device as a **rank** in one process, in a
    fixed order: the same inputs give the same outputs and the same schedule every run.
    A rank that waits for a signal stops, and the others go on.

    The pieces:

    * `@pl.jit.host` drives the ranks: `for r in pl.range(pld.world_size()): chip(..., device=r)`.
      Its tensors carry a leading rank axis (`inputs[r]` is rank `r`'s).
    * `pld.alloc_window_buffer(...)` makes one symmetric allocation per rank;
      `pld.window(buf, shape, dtype=...)` is this rank's view, a `pld.DistributedTensor`.
      `pl.load` / `pl.store` touch the rank's own copy; `pld.tile.remote_load` reads a
      peer's.
    * `pld.system.notify(signal, peer=p, offsets=..., value=1, op=pld.NotifyOp.AtomicAdd)`
      adds to a cell of peer `p`'s signal window; `pld.system.wait(signal, offsets=...,
      expected=n, cmp=pld.WaitCmp.Ge)` blocks until this rank's own cell holds at least `n`.
    """),
    SETUP,
    code("""
    import pypto.language.distributed as pld
    from pypto.sim import SimConfig

    NR, S = 2, 64

    @pl.jit.incore
    def exchange(inp: pl.Tensor[[1, S], pl.FP32], out: pl.Out[pl.Tensor[[1, S], pl.FP32]],
                 data: pld.DistributedTensor[[1, S], pl.FP32],
                 signal: pld.DistributedTensor[[NR, 1], pl.INT32], expected: pl.Scalar[pl.INT32]):
        me = pld.rank(pld.get_comm_ctx(data))
        data = pl.store(pl.load(inp, [0, 0], [1, S]), [0, 0], data)    # stage my row
        for peer in pl.range(NR):
            if peer != me:                                              # "my row is ready"
                pld.system.notify(signal, peer=peer, offsets=[me, 0], value=1,
                                  op=pld.NotifyOp.AtomicAdd)
        for src in pl.range(NR):
            if src != me:                                               # wait for theirs
                pld.system.wait(signal, offsets=[src, 0], expected=expected,
                                cmp=pld.WaitCmp.Ge)
        acc = pl.load(data, [0, 0], [1, S])
        for peer in pl.range(NR):
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
                  outputs: pl.Out[pl.Tensor[[NR, 1, S], pl.FP32]],
                  expected: pl.Scalar[pl.INT32]):
        data_buf = pld.alloc_window_buffer([1, S], dtype=pl.FP32)
        signal_buf = pld.alloc_window_buffer([NR, 1], dtype=pl.INT32)
        for r in pl.range(pld.world_size()):
            data = pld.window(data_buf, [1, S], dtype=pl.FP32)
            signal = pld.window(signal_buf, [NR, 1], dtype=pl.INT32)
            exchange_chip(inputs[r], outputs[r], data, signal, expected, device=r)
    """),
    md("""
    ## Run it on two ranks

    The devices come from the run's configuration: `SimConfig(device_ids=(0, 1))` here, or
    `run_jit(..., compile_cfg=dict(distributed_config=DistributedConfig(device_ids=[0, 1])))`
    as pypto-lib's files do (`pypto-sim FILE -d 0,1` runs those). Every rank ends with the
    sum of both rows.
    """),
    code("""
    x = np.stack([np.arange(S, dtype=np.float32).reshape(1, S) + 100 * r for r in range(NR)])
    y = np.zeros_like(x)
    result = allreduce(x, y, 1, config=SimConfig(device_ids=(0, 1), trace=True))
    print(result)
    print("rank 0:", y[0, 0, :4], " rank 1:", y[1, 0, :4], " expected:", x.sum(axis=0)[0, :4])
    """, check=True),
    md("""
    ## The ranks, step by step

    `pypto_lab.ranks` draws a lane per rank, its steps in the order the scheduler ran them,
    and an arrow from each notify to the wait it released. Rank 0 runs first, notifies,
    and blocks on its wait (open circle); rank 1 runs, notifies (which releases rank 0's
    wait), finds its own cell already set and goes on; then rank 0 goes on.
    """),
    code("""
    pypto_lab.ranks(result)
    """),
    md("""
    Every rank runs the same chip function, so it has one region graph
    (`pypto_lab.show_graph(exchange_chip)`); each rank's tasks are its own.
    `pypto_lab.on_rank(result, r)` is rank `r`'s run, for the other views: here rank 1's
    estimated timeline.
    """),
    code("""
    pypto_lab.timeline(pypto_lab.on_rank(result, 1))
    """),
    md("""
    `pypto_lab.window_view` shows a window buffer, one panel per rank's copy, each element
    coloured by the rank that wrote it last: in the signal window, the cell `[1, 0]` of
    rank 0's copy was written by rank 1's notify, and the other way round. (A rank's own
    `pl.store`s into its window count when the run is traced, as here.)
    """),
    code("""
    pypto_lab.window_view(result, "signal_buf")
    """),
    md("""
    ## A deliberate deadlock

    Ask each rank to wait for **two** notifies when its peer sends one. No rank can go on:
    the simulator stops with a located error that names, per rank, the wait it is stuck on,
    the signal cell, the value it waits for and the value the cell holds.
    """),
    code("""
    from pypto.sim.cluster.signals import DeadlockError

    try:
        allreduce(x, np.zeros_like(x), 2, config=SimConfig(device_ids=(0, 1)))
    except DeadlockError as err:
        stuck = err
        print(err.message.split("; ")[0])  # then one line per rank:
        print(err.note)
    """, check=True),
    md("""
    The rank view of the error shows where each rank stopped (red crosses) and the last
    notify each stuck wait saw (red arrows): one each, where two were expected.
    """),
    code("""
    pypto_lab.ranks(stuck)
    """),
    md("""
    ## A race between ranks

    The wait is what orders rank 0's `pl.store` of its row before rank 1's `remote_load`
    of it. With `checks=("race",)` the simulator tracks which window accesses are ordered
    by a notify → wait; two ranks touching one window region with nothing between them
    is reported with both sites. Here, waiting for **zero** notifies removes the order:
    """),
    code("""
    from pypto.sim.cluster.happens import WindowRaceError

    try:
        allreduce(x, np.zeros_like(x), 0, config=SimConfig(device_ids=(0, 1), checks=("race",)))
    except WindowRaceError as err:
        print(err.message.split(" (and")[0].replace(": rank", ":\\n  rank"))
    """, check=True),
    md("""
    **Next:** pypto-lib's multi-card files run the same way: `pypto-sim FILE -d 0,1` (see
    [7 · Bringing a pypto-lib kernel file](07_pypto_lib_kernel_files.ipynb)).
    """),
]
