"""Tutorial 1. first kernel."""
from __future__ import annotations

from tutorials.cells import SETUP, code, md

NB1 = [
    md("""
    # 1 · A first kernel

    The second cell is the whole loop of this workbench: a kernel, run on the simulator
    against numpy, drawn as its **region graph**, its **run** and a **heatmap** of its
    output. The rest of the notebook takes it apart. No NPU needed.
    """),
    SETUP,
    code("""
    %%pypto --run specs golden --show graph,heatmap
    from pypto.golden import TensorSpec

    ROWS, COLS, TILE = 128, 128, 32

    @pl.jit
    def scaled_exp(x: pl.Tensor[[ROWS, COLS], pl.FP32],
                   y: pl.Out[pl.Tensor[[ROWS, COLS], pl.FP32]]):
        for r in pl.parallel(0, ROWS, TILE):
            with pl.at(level=pl.Level.CORE_GROUP, name_hint="rows"):
                tile = x[r : r + TILE, :]
                y[r : r + TILE, :] = pl.exp(pl.mul(tile, 0.5))
        return y

    specs = [TensorSpec("x", [ROWS, COLS], np.float32,
                        init_value=lambda: np.random.default_rng(0).standard_normal((ROWS, COLS))),
             TensorSpec("y", [ROWS, COLS], np.float32, is_output=True)]

    def golden(values):
        values["y"][:] = np.exp(values["x"] * 0.5)
    """),
    md("""
    ## What you just saw

    * **The summary**: one row per InCore region: its class (pure **vector** work here),
      its ops per unit, its on-chip (UB) estimate against the platform budget, and the
      loops around it.
    * **The region graph**: the orchestration, the `pl.parallel` loop (×4 iterations) and
      the region it launches. Hover a node for the region's source lines.
    * **The run**: `PASS`, every element of `y` within tolerance of the golden.
    * **The heatmap**: the run passed, so it opens on *who wrote what*: each colour is one
      task, i.e. one 32-row tile. Hover an element for its value, the task, block and loop
      index that wrote it, and the source line. On a failing run it shows the error
      instead (notebook 2); the buttons switch between the views.
    * **The tasks**: what ran, laid over the output's tiles: one block per task (4: one
      per loop iteration), coloured by its estimated cost.

    *Reading this on GitHub?* The stored outputs show text and tables; the figures and
    controls appear when you run the notebook in JupyterLab (or on Binder).

    The cell's result is an object: `_` (the last output) holds the compiled kernels, the
    run and the views.
    """),
    code("""
    cell = _
    print(cell.kernels[0].name, "regions:", [r.function for r in cell.kernels[0].compiled.regions])
    print("run passed:", cell.run.passed)
    """, check=True),
    md("""
    ## The kernel, line by line

    A `pypto.language` kernel is a Python function that is never run as Python: the
    decorator reads its source and compiles it. The body of a `@pl.jit` function is the
    **orchestration**: it runs on the control plane and launches work. Compute goes inside
    `with pl.at(level=pl.Level.CORE_GROUP)`: that block is cut out into an **InCore
    region** that runs on one AI core group.

    `pl.parallel(0, ROWS, TILE)` is a loop whose iterations are independent, so each one
    launches its own task. Inside the region, `x[r : r + TILE, :]` loads a tile into the
    on-chip buffer and `y[r : r + TILE, :] = ...` stores a tile back. `y` is annotated
    `pl.Out[...]`: it is an output, copied back to the host after the run.
    """),
    md("""
    ## Run it as a function

    The magic is a convenience: the kernel is an ordinary object. Calling it with numpy
    arrays compiles it once (for the default simulator platform, `a2a3sim`) and runs it;
    outputs are written into the arrays you pass.
    """),
    code("""
    x = np.random.default_rng(0).standard_normal((ROWS, COLS)).astype(np.float32)
    y = np.zeros_like(x)
    scaled_exp(x, y)
    print("max |y - exp(x/2)| =", float(np.abs(y - np.exp(x * 0.5)).max()))
    """, check=True),
    md("""
    ## Check it with the golden harness

    `--run specs golden` used the golden harness, written the way pypto-lib writes kernel
    tests: a list of `TensorSpec`s (one per parameter, in order, with the parameter's
    name), and a golden function that fills the expected outputs in place. `run_jit` makes
    the inputs, runs the kernel on the simulator and compares every output marked
    `is_output=True`.
    """),
    code("""
    from pypto.golden import run_jit

    result = run_jit(scaled_exp, specs, golden, verbose=False)
    print(result.report())
    """, check=True),
    md("""
    ## What did the compiler make of it?

    `compile()` runs the front end and the passes without any data. Its `regions` list the
    InCore regions: which units they use and how much on-chip memory one task needs (`ub`,
    the Unified Buffer, in bytes).
    """),
    code("""
    compiled = scaled_exp.compile()
    compiled.regions
    """, check=True),
    md("""
    `kind='at'` says the region is launched by a `pl.at` block; `l1`, `l0a`, `l0b` and
    `l0c` are the cube-side buffers (all zero for vector-only work); `slots` only matters
    for mixed regions (notebook 5).
    """),
    md("""
    ## The views are values

    Each view is also a plain function of a kernel or a run: `pypto_lab.show_graph`,
    `pypto_lab.heatmap`, `pypto_lab.timeline`. They take the `result` of `run_jit` too:
    """),
    code("""
    pypto_lab.timeline(result)
    """),
    md("""
    The timeline is an *estimate* from the simulator's cost model: one lane per core and
    pipe (MTE2 loads, vector compute, MTE3 stores), one bar per task.
    """),
    md("""
    ## Which tile size? Sweep it

    `--sweep NAME=V1,V2,...` compiles and runs the cell's kernel once per value of one of
    the cell's constants, checks each point against the on-chip budget and the golden,
    and estimates its time from the trace. The figure names the best feasible tiling;
    points that do not compile, do not fit the Unified Buffer or fail the golden are
    marked with why. (Here on 1024 rows: a 512-row tile of 128 floats is 256 KiB, more
    than the 184 KiB UB.) Each point runs the cell's source again with the constant
    replaced. The table says why a point costs what it does: every task pays a launch
    cost (about 0.8 µs on a2a3), so 128 tasks of 8 rows queue on the 48 vector cores,
    while one wave of 32 larger tasks finishes sooner, and 8 tasks of 128 rows leave
    cores idle.
    """),
    code("""
    %%pypto --run specs golden --sweep TILE=8,16,32,64,128,512
    from pypto.golden import TensorSpec

    ROWS, COLS, TILE = 1024, 128, 32

    @pl.jit
    def scaled_exp(x: pl.Tensor[[ROWS, COLS], pl.FP32],
                   y: pl.Out[pl.Tensor[[ROWS, COLS], pl.FP32]]):
        for r in pl.parallel(0, ROWS, TILE):
            with pl.at(level=pl.Level.CORE_GROUP, name_hint="rows"):
                tile = x[r : r + TILE, :]
                y[r : r + TILE, :] = pl.exp(pl.mul(tile, 0.5))
        return y

    specs = [TensorSpec("x", [ROWS, COLS], np.float32,
                        init_value=lambda: np.random.default_rng(0).standard_normal((ROWS, COLS))),
             TensorSpec("y", [ROWS, COLS], np.float32, is_output=True)]
    """),
    md("""
    **Next:** [2 · Outputs and the unwritten `pl.Out` region](02_outputs_and_unwritten_regions.ipynb).
    """),
]
