"""Tutorial 9. Debugging a dependency: a missing edge found, fixed, re-run."""
from __future__ import annotations

from tutorials.cells import SETUP, code, md

NB9 = [
    md("""
    # 9 · Debugging a dependency

    The simulator runs tasks one after another in program order, so a kernel can match its
    golden here and still give a different answer on every device run. On the device a
    task starts as soon as the runtime's **dependency rule** lets it. A task waits for:

    1. the tasks named in its `deps=`;
    2. the task that **allocated** a tensor it takes (`pl.create_tensor` is an alloc
       task): the *creator* edge;
    3. the earlier tasks that **wrote** a window it reads or rewrites, as the runtime's
       *tensor map* records them (a task passing a tensor as `pl.InOut`, or as a `pl.Out`
       that already exists, is recorded as its writer).

    Nothing makes a task wait for an earlier task that only **read** what it is about to
    overwrite. This notebook finds such a missing edge, reads the runtime's own view of the
    run (`deps.json`, as the device's `enable_dep_gen` writes it), fixes the kernel and
    checks the fix.
    """),
    SETUP,
    code("""
    from pypto.golden import TensorSpec

    N, D = 64, 128

    specs = [TensorSpec("x", [N, D], np.float32,
                        init_value=lambda: np.random.default_rng(0).standard_normal((N, D))),
             TensorSpec("y", [N, D], np.float32, is_output=True),
             TensorSpec("z", [N, D], np.float32, is_output=True)]

    def golden(values):
        x = values["x"]
        values["y"][:] = np.exp(x) + x
        values["z"][:] = x * 2.0 + values["y"]
    """),
    md("""
    ## A kernel that passes here

    `smooth` computes `exp(x)` into a scratch tensor `t`, reads it into `y`, then **reuses**
    `t` for the next stage (`2x`) and reads that into `z`. `%%pypto` runs every simulator
    check, the race check among them, which replays the run under the runtime's rule.
    """),
    code("""
    %%pypto --run specs golden --show graph
    @pl.jit
    def smooth(x: pl.Tensor[[N, D], pl.FP32], y: pl.Out[pl.Tensor[[N, D], pl.FP32]],
               z: pl.Out[pl.Tensor[[N, D], pl.FP32]]):
        t = pl.create_tensor([N, D], dtype=pl.FP32)
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="produce"):
            t[:, :] = pl.exp(x[:, :])
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="consume"):
            y[:, :] = pl.add(t[:, :], x[:, :])
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="reuse"):
            t[:, :] = pl.mul(x[:, :], 2.0)
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="finish"):
            z[:, :] = pl.add(t[:, :], y[:, :])
        return y, z
    """),
    md("""
    The outputs match, and the report names one race. In the task graph the edges the
    runtime creates are drawn by where they come from (green dotted: creator, blue:
    tensor map, orange dashed: `deps=`); the race is the **dashed red** edge the runtime
    does *not* create. Hover the middle of an edge for why it is there, or for the fix.
    """),
    code("""
    sim = _.run.raw.sim
    print("passed:", _.run.passed)
    (race,) = sim.races
    print(f"{race.first.name} ({race.first.mode}) vs {race.second.name} ({race.second.mode}) "
          f"on {race.tensor}{race.index_text}")
    print("why:", race.reason)
    print("fix:", race.hint)
    """, check=True),
    md("""
    `reuse` overwrites `t` while `consume` may still be reading it. The runtime orders
    `reuse` after `produce` (the last writer of `t`) but not after `consume`, a reader. On a
    device `y` would sometimes hold `2x + x` instead of `exp(x) + x`.

    The edges themselves, as the core gives them (`SimResult.dependencies()`):
    """),
    code("""
    names = {t.id: t.name for t in sim.tasks}
    for d in sim.dependencies():
        print(f"{names[d.pred]:>8} -> {names[d.succ]:<8} {d.source:<10} {d.tensor}")
    """, check=True),
    md("""
    ## The runtime's own artifact: `deps.json`

    With `enable_dep_gen=True` the harness writes `dfx_outputs/deps.json` in the format
    the device's dep_gen replay writes, so simpler's `deps_viewer` draws it. Task ids are
    the runtime's, `(ring << 32) | local`: the ring is the runtime scope depth (the
    function body is scope 1), `local` counts that ring's submits, alloc tasks included.
    What the device cannot say sits under a `pypto_lab` key the viewer ignores: each
    edge's reason, and the **missing edges**.
    """),
    code("""
    import json, tempfile
    from pathlib import Path
    from pypto.golden import run_jit

    work = Path(tempfile.mkdtemp()) / "smooth"
    result = run_jit(smooth, specs, golden_fn=golden, runtime_cfg={"enable_dep_gen": True},
                     compile_cfg={"output_dir": str(work)}, verbose=False)
    print("passed:", result.passed, "| wrote:",
          [str(a.path.relative_to(work)) for a in result.artifacts])
    deps = json.loads((work / "dfx_outputs" / "deps.json").read_text())
    tid = lambda s: f"({int(s) >> 32}, {int(s) & 0xFFFFFFFF})"
    print("tasks:", [tid(t["task_id"]) for t in deps["tasks"]])
    for e in deps["edges"]:
        print(f"{tid(e['pred'])} -> {tid(e['succ'])} {e['source']}")
    for m in deps["pypto_lab"]["missing_edges"]:
        print(f"missing: {tid(m['pred'])} -> {tid(m['succ'])} on {m['tensor']}: {m['fix']}")
    """, check=True),
    md("""
    `(1, 0)` is the alloc task of `t`: it has no entry in `tasks`, only edges, as on the
    device. To draw the file:
    `python -m simpler_setup.tools.deps_viewer <work>/dfx_outputs/deps.json --format html`.

    ## The fix: `deps=`

    Bind `consume`'s task id with `as` and list it in `reuse`'s `deps=`. (Writing `2x`
    into a fresh tensor instead of reusing `t` fixes it too, at the cost of a second
    buffer.)
    """),
    code("""
    %%pypto --run specs golden --show graph
    @pl.jit
    def smooth_fixed(x: pl.Tensor[[N, D], pl.FP32], y: pl.Out[pl.Tensor[[N, D], pl.FP32]],
                     z: pl.Out[pl.Tensor[[N, D], pl.FP32]]):
        t = pl.create_tensor([N, D], dtype=pl.FP32)
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="produce"):
            t[:, :] = pl.exp(x[:, :])
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="consume") as read_t:
            y[:, :] = pl.add(t[:, :], x[:, :])
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="reuse", deps=[read_t]):
            t[:, :] = pl.mul(x[:, :], 2.0)
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="finish"):
            z[:, :] = pl.add(t[:, :], y[:, :])
        return y, z
    """),
    code("""
    fixed = _.run.raw.sim
    print("passed:", _.run.passed, "| races:", len(fixed.races))
    names = {t.id: t.name for t in fixed.tasks}
    print([(names[d.pred], names[d.succ]) for d in fixed.dependencies()
           if d.source == "explicit"])
    """, check=True),
    md("""
    **Back to:** [1 · A first kernel](01_first_kernel.ipynb).
    """),
]
