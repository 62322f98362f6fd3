"""Tutorial 6. spmd vs parallel, deps."""
from __future__ import annotations

from tutorials.cells import SETUP, code, md

NB6 = [
    md("""
    # 6 · `pl.spmd` vs `pl.parallel` + `pl.at`, dependencies and `deps=`

    Two ways to spread work over cores:

    * `for r in pl.parallel(0, N, T): with pl.at(...)` launches **one task per
      iteration**; each task runs the region once.
    * `for b in pl.spmd(n)` launches **one task with `n` blocks**; the body is the region,
      and `b` is the block index.

    Tasks are ordered only by the data they share (a task that reads or rewrites what
    another wrote waits for it) and by explicit `deps=`. Source order orders nothing, and
    neither does reading: a task that overwrites what another only reads does not wait for
    it ([notebook 9](09_debugging_a_dependency.ipynb) finds such a missing edge). This notebook shows
    both launch styles, the task graph that results, and an estimated timeline.
    """),
    SETUP,
    code("""
    from pypto.golden import TensorSpec

    N, D, T = 128, 128, 32

    def rand(shape, seed):
        return lambda: np.random.default_rng(seed).standard_normal(shape)

    specs = [TensorSpec("x", [N, D], np.float32, init_value=rand((N, D), 0)),
             TensorSpec("y", [N, D], np.float32, is_output=True),
             TensorSpec("z", [N, D], np.float32, is_output=True)]

    def golden(values):
        values["y"][:] = values["x"] * 2.0
        values["z"][:] = values["y"] * values["y"]
    """),
    md("""
    ## Two stages, two launch styles

    Stage 1 (`scale`) uses `pl.parallel` + `pl.at`: four tasks. Stage 2 (`square`) uses
    `pl.spmd(4)`: one task with four blocks. `square` reads `y`, which `scale` writes, so
    the compiler derives a **data** dependency between them.

    `--show graph,timeline` draws the region graph, the task graph of the run (one node
    per task block), and the estimated timeline: each block on a core, with its MTE (data
    movement) and vector pipes as lanes. The timeline is a cost-model estimate, not a
    measurement.
    """),
    code("""
    %%pypto --run specs golden --show graph,timeline
    @pl.jit
    def two_stages(x: pl.Tensor[[N, D], pl.FP32], y: pl.Out[pl.Tensor[[N, D], pl.FP32]],
                   z: pl.Out[pl.Tensor[[N, D], pl.FP32]]):
        for r in pl.parallel(0, N, T):
            with pl.at(level=pl.Level.CORE_GROUP, name_hint="scale"):
                y[r : r + T, :] = pl.mul(x[r : r + T, :], 2.0)
        for b in pl.spmd(N // T, name_hint="square"):
            t = y[b * T : b * T + T, :]
            z[b * T : b * T + T, :] = pl.mul(t, t)
        return y, z
    """),
    md("""
    The text forms of the same views: the region graph's edges, and the simulated tasks
    with the producers each one waited for.
    """),
    code("""
    run = _.run
    print(pypto_lab.show_graph(two_stages).text())
    for t in run.tasks:
        print(f"task {t.task} block {t.block}/{t.blocks} {t.name:<8} after {list(t.deps)}")
    """, check=True),
    md("""
    ## When the data does not say it: `deps=`

    Here `stats` and `scaled` touch disjoint outputs, so nothing orders them and they may
    run at the same time. If they must not (say the second one must start after the first
    for a reason the compiler cannot see, such as bounding peak memory), bind the first
    region's task id with `as` and list it in the second's `deps=`. The graph draws
    explicit edges dashed.
    """),
    code("""
    specs2 = [TensorSpec("x", [N, D], np.float32, init_value=rand((N, D), 0)),
              TensorSpec("s", [N, 1], np.float32, is_output=True),
              TensorSpec("y", [N, D], np.float32, is_output=True)]

    def golden2(values):
        values["s"][:] = values["x"].sum(axis=1, keepdims=True)
        values["y"][:] = values["x"] * 2.0
    """),
    code("""
    %%pypto --run specs2 golden2 --show graph,timeline
    @pl.jit
    def ordered(x: pl.Tensor[[N, D], pl.FP32], s: pl.Out[pl.Tensor[[N, 1], pl.FP32]],
                y: pl.Out[pl.Tensor[[N, D], pl.FP32]]):
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="stats") as stats_done:
            for r in pl.range(0, N, T):
                s[r : r + T, :] = pl.row_sum(x[r : r + T, :])
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="scaled", deps=[stats_done]):
            for r in pl.range(0, N, T):
                y[r : r + T, :] = pl.mul(x[r : r + T, :], 2.0)
        return s, y
    """),
    code("""
    run = _.run
    print(pypto_lab.show_graph(ordered).text())
    for t in run.tasks:
        print(f"task {t.task} {t.name:<7} after {t.dep_origin}")
    """, check=True),
    md("""
    For comparison, the same two regions without `deps=`: nothing orders them, so the
    estimate runs them side by side on two cores and the makespan shrinks.
    """),
    code("""
    ordered_run = run
    """),
    code("""
    %%pypto --run specs2 golden2 --show timeline
    @pl.jit
    def unordered(x: pl.Tensor[[N, D], pl.FP32], s: pl.Out[pl.Tensor[[N, 1], pl.FP32]],
                  y: pl.Out[pl.Tensor[[N, D], pl.FP32]]):
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="stats"):
            for r in pl.range(0, N, T):
                s[r : r + T, :] = pl.row_sum(x[r : r + T, :])
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="scaled"):
            for r in pl.range(0, N, T):
                y[r : r + T, :] = pl.mul(x[r : r + T, :], 2.0)
        return s, y
    """),
    code("""
    for label, r in [("with deps=", ordered_run), ("without", _.run)]:
        sched = pypto_lab.timeline(r).schedule
        print(f"{label:<11} makespan {sched.makespan_us:.3f} us (estimate), "
              f"tasks after others: {[t.task for t in r.tasks if t.deps]}")
    """, check=True),
    md("""
    The timeline can be saved as a Chrome trace and opened in Perfetto
    (`pypto_lab.timeline(run).save("trace.json")`). Its text form gives the lanes and the
    estimated makespan:
    """),
    code("""
    print(pypto_lab.timeline(ordered_run).text())
    """, check=True),
    md("""
    ## Double buffering inside a region: `pl.pipeline`

    A `pl.range` loop inside a region runs its iterations one after another: load,
    compute, store, then the next load. `pl.pipeline(..., stage=2)` keeps two buffers in
    flight, so the next iteration loads while this one computes and the one before
    stores. The timeline draws the loop iteration by iteration (hover a bar for which
    iterations it is; back-to-back bars are drawn as one), and the estimate shrinks.
    """),
    code("""
    unordered_run = _.run
    """),
    code("""
    %%pypto --run specs2 golden2 --show timeline
    @pl.jit
    def double_buffered(x: pl.Tensor[[N, D], pl.FP32], s: pl.Out[pl.Tensor[[N, 1], pl.FP32]],
                        y: pl.Out[pl.Tensor[[N, D], pl.FP32]]):
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="stats"):
            for r in pl.pipeline(0, N, T, stage=2):
                s[r : r + T, :] = pl.row_sum(x[r : r + T, :])
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="scaled"):
            for r in pl.pipeline(0, N, T, stage=2):
                y[r : r + T, :] = pl.mul(x[r : r + T, :], 2.0)
        return s, y
    """),
    code("""
    for label, r in [("pl.range", unordered_run), ("pl.pipeline", _.run)]:
        print(f"{label:<12} makespan {pypto_lab.timeline(r).schedule.makespan_us:.3f} us "
              "(estimate)")
    """, check=True),
    md("""
    **Next:** [7 · Bringing a pypto-lib kernel file](07_pypto_lib_kernel_files.ipynb).
    """),
]
