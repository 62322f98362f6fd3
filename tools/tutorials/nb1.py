"""Tutorial 1. first kernel."""
from __future__ import annotations

from tutorials.cells import SETUP, code, md

NB1 = [
    md("""
    # 1 · A first kernel

    A `pypto.language` kernel is a Python function that is never run as Python: the
    decorator reads its source and compiles it. In this notebook you will

    1. write a `@pl.jit` kernel with `pl.parallel` and `pl.at`,
    2. call it on numpy arrays (the simulator runs it),
    3. check it against a host reference with the golden harness,
    4. look at the compiled regions and the region graph.

    Everything runs on the built-in numpy simulator; no NPU is needed.

    *Reading this on GitHub?* The stored outputs show text and tables; the interactive
    figures and widgets appear when you run the notebook in JupyterLab (or on Binder).
    """),
    md("""
    The first cell loads the workbench (the `%%pypto` cell magic) and imports the language as
    `pl`, the name every pypto kernel uses.
    """),
    SETUP,
    md("""
    ## The kernel

    The body of a `@pl.jit` function is the **orchestration**: it runs on the control
    plane and launches work. Compute goes inside `with pl.at(level=pl.Level.CORE_GROUP)`:
    that block is cut out into an **InCore region** that runs on one AI core group.

    `pl.parallel(0, ROWS, TILE)` is a loop whose iterations are independent, so each one
    launches its own task. Inside the region, `x[r : r + TILE, :]` loads a tile into the
    on-chip buffer and `y[r : r + TILE, :] = ...` stores a tile back.

    `y` is annotated `pl.Out[...]`: it is an output, copied back to the host after the run.
    """),
    code("""
    ROWS, COLS, TILE = 256, 128, 64

    @pl.jit
    def scaled_exp(x: pl.Tensor[[ROWS, COLS], pl.FP32],
                   y: pl.Out[pl.Tensor[[ROWS, COLS], pl.FP32]]):
        for r in pl.parallel(0, ROWS, TILE):
            with pl.at(level=pl.Level.CORE_GROUP, name_hint="rows"):
                tile = x[r : r + TILE, :]
                y[r : r + TILE, :] = pl.exp(pl.mul(tile, 0.5))
        return y
    """),
    md("""
    ## Run it

    Calling the kernel compiles it once (for the default simulator platform, `a2a3sim`)
    and runs it. Outputs are written into the arrays you pass.
    """),
    code("""
    x = np.random.default_rng(0).standard_normal((ROWS, COLS)).astype(np.float32)
    y = np.zeros_like(x)
    scaled_exp(x, y)
    print("max |y - exp(x/2)| =", float(np.abs(y - np.exp(x * 0.5)).max()))
    """, check=True),
    md("""
    ## Check it with the golden harness

    Kernel tests are written the way pypto-lib writes them: a list of `TensorSpec`s (one
    per parameter, in order, with the parameter's name), and a golden function that fills
    the expected outputs in place. `run_jit` makes the inputs, runs the kernel on the
    simulator and compares every output marked `is_output=True`.
    """),
    code("""
    from pypto.golden import TensorSpec, run_jit

    specs = [
        TensorSpec("x", [ROWS, COLS], np.float32,
                   init_value=lambda: np.random.default_rng(0).standard_normal((ROWS, COLS))),
        TensorSpec("y", [ROWS, COLS], np.float32, is_output=True),
    ]

    def golden(values):
        values["y"][:] = np.exp(values["x"] * 0.5)

    result = run_jit(scaled_exp, specs, golden, verbose=False)
    print(result.report())
    """, check=True),
    md("""
    ## What did the compiler make of it?

    `compile()` runs the front end and the passes without any data. Its `regions` list the
    InCore regions: which units they use (this one is pure **vector** work) and how much
    on-chip memory one task needs (`ub`, the Unified Buffer, in bytes).
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
    ## The same in one cell: `%%pypto`

    The magic runs the cell as ordinary Python, compiles every kernel it defines and shows a
    summary: one row per region with its class, ops per unit, the UB estimate against the
    platform budget, the loops around it, and (for mixed regions) the cube→vector pipe.
    `--run specs golden` also simulates and checks; `--show graph` adds the region graph
    and, because there was a run, the task graph (one node per task that ran).

    Hover over the graph's nodes to see each region's source lines.
    """),
    code("""
    %%pypto --run specs golden --show graph
    @pl.jit
    def scaled_exp(x: pl.Tensor[[ROWS, COLS], pl.FP32],
                   y: pl.Out[pl.Tensor[[ROWS, COLS], pl.FP32]]):
        for r in pl.parallel(0, ROWS, TILE):
            with pl.at(level=pl.Level.CORE_GROUP, name_hint="rows"):
                tile = x[r : r + TILE, :]
                y[r : r + TILE, :] = pl.exp(pl.mul(tile, 0.5))
        return y
    """),
    md("""
    The cell's result is an object, so `_` (the last output) holds the compiled kernels,
    the run and the views for further use.
    """),
    code("""
    cell = _
    print(cell.kernels[0].name, "regions:", [r.function for r in cell.kernels[0].compiled.regions])
    print("run passed:", cell.run.passed)
    """, check=True),
    md("""
    Each view is also a plain function of the kernel. `pypto_lab.show_graph` draws the
    region graph: the orchestration, the `pl.parallel` loop (×4 iterations) and the region
    it launches. Its text form, `print(view)`, lists the same nodes and edges.
    """),
    code("""
    pypto_lab.show_graph(scaled_exp)
    """),
    md("""
    **Next:** [2 · Outputs and the unwritten `pl.Out` region](02_outputs_and_unwritten_regions.ipynb).
    """),
]
