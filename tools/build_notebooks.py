"""Write the tutorial notebooks under notebooks/ (and optionally execute them in place).

Usage:
    python tools/build_notebooks.py            # write notebooks/*.ipynb (no outputs)
    python tools/build_notebooks.py --execute  # ... then run each one with nbconvert so it
                                               # is committed with its outputs

The notebooks are generated from this file so that their text stays reviewable as Python.
Conventions (see notebooks/README.md):

* every notebook runs top to bottom on the simulator in a few seconds;
* cells tagged `nbval-check-output` print deterministic text; nbval (`--nbval-lax`,
  the README's test command) compares them with the stored output after the
  substitutions in notebooks/nbval_sanitize.cfg; every other cell only has to run;
* the first code cell calls `pypto_lab.set_plotlyjs("none")`: figures are stored as
  plotly's own JSON (drawn by JupyterLab and VS Code) instead of inlining plotly.js.
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parents[1]
NB_DIR = ROOT / "notebooks"
CHECK = "nbval-check-output"


def md(text: str) -> nbformat.NotebookNode:
    return nbformat.v4.new_markdown_cell(textwrap.dedent(text).strip())


def code(src: str, *, check: bool = False) -> nbformat.NotebookNode:
    cell = nbformat.v4.new_code_cell(textwrap.dedent(src).strip())
    if check:
        cell.metadata["tags"] = [CHECK]
    return cell


SETUP = code("""
    %load_ext pypto_lab
    import numpy as np
    import pypto.language as pl
    import pypto_lab

    pypto_lab.set_plotlyjs("none")  # store figures as plotly JSON, not 4.6 MB of plotly.js each
""")


def notebook(cells: list) -> nbformat.NotebookNode:
    nb = nbformat.v4.new_notebook()
    nb.cells = cells
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3",
                                 "language": "python"}
    nb.metadata["language_info"] = {"name": "python"}
    return nb


# --- 1. first kernel -------------------------------------------------------------------

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


# --- 2. outputs and the unwritten region -----------------------------------------------

NB2 = [
    md("""
    # 2 · Output directions and the unwritten `pl.Out` region

    Every tensor parameter has a **direction**, and the runtime acts on it:

    | annotation | uploaded before the run | copied back after it |
    |---|---|---|
    | `pl.Tensor[...]` (In) | yes | **no** |
    | `pl.Out[pl.Tensor[...]]` | no: it starts as whatever the device memory held | yes |
    | `pl.InOut[pl.Tensor[...]]` | yes | yes |

    The simulator fills a `pl.Out` buffer with NaN before the run, so any element the
    kernel never writes shows up. This notebook starts with such a kernel, looks at the
    failure, and then fixes it four ways. It ends with the other classic mistake: an output
    declared as a plain `pl.Tensor`.
    """),
    SETUP,
    md("""
    ## A kernel that writes only part of its output

    `y` has 64 rows, but the loop stops at row 48: think of a buffer padded to a tile
    multiple, of which only the first 48 rows hold tokens.
    """),
    code("""
    from pypto.golden import TensorSpec, run_jit, ratio_allclose

    N, WRITTEN, T = 64, 48, 16

    def x_init():
        return np.random.default_rng(0).standard_normal((N, N))

    specs = [TensorSpec("x", [N, N], np.float32, init_value=x_init),
             TensorSpec("y", [N, N], np.float32, is_output=True)]

    def golden(values):
        values["y"][:] = np.exp(values["x"])
    """),
    md("""
    Run it with `--show heatmap`. The heatmap colours each element of `y` by its error
    against the golden: grey within tolerance, red out of it. The block shaded and outlined
    in magenta is the part of `y` that **no task wrote** (the simulator records the last
    writer of every element), labelled with the first suggested fix. Hover over an element
    to see which task wrote it. The dropdown and the buttons above the plot switch the
    output and the error metric (absolute, relative, ULPs).
    """),
    code("""
    %%pypto --run specs golden --show heatmap
    @pl.jit
    def head_rows(x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
        for r in pl.parallel(0, WRITTEN, T):
            with pl.at(level=pl.Level.CORE_GROUP, name_hint="rows"):
                y[r : r + T, :] = pl.exp(x[r : r + T, :])
        return y
    """),
    md("""
    The report names the unwritten region and lists the fixes that fit it, best first. The
    same diagnosis is data on the `RunResult` that `run_jit` returns, so a test can assert
    on it:
    """),
    code("""
    result = run_jit(head_rows, specs, golden, verbose=False)
    unwritten = result.outputs["y"].unwritten
    print("passed:", result.passed)
    print("unwritten (start, stop) per axis:", unwritten.bounds, "-", unwritten.count, "elements")
    for fix in unwritten.fixes:
        print("-", fix)
    """, check=True),
    md("""
    Which fix is right depends on what those rows *mean*, so here are all four.
    """),
    md("""
    ## Fix 1 · the rows are padding: compare only the written part

    `ratio_allclose(valid_rows=48, valid_axis=0)` compares only the first 48 entries along
    axis 0. The kernel is unchanged. (`ratio_allclose` lets a small fraction of elements,
    0.5% by default, be out of tolerance; `max_error_ratio=0.0` makes it strict.)
    """),
    code("""
    only_written = ratio_allclose(valid_rows=WRITTEN, valid_axis=0, max_error_ratio=0.0)
    print(run_jit(head_rows, specs, golden, compare_fn={"y": only_written},
                  verbose=False).report())
    """, check=True),
    md("""
    ## Fix 2 · the tail must read as zero: write zeros, check with `zero_tail=True`

    If a consumer reads the whole buffer, the tail has to be zero, and the check should say
    so: `zero_tail=True` also fails when anything in the dropped tail is not zero. On the
    original kernel it fails (the tail is NaN)…
    """),
    code("""
    tail_is_zero = ratio_allclose(valid_rows=WRITTEN, valid_axis=0, zero_tail=True)
    print(run_jit(head_rows, specs, golden, compare_fn={"y": tail_is_zero},
                  verbose=False).report())
    """, check=True),
    md("""
    …so the kernel has to store the zeros itself, here with a second region.
    """),
    code("""
    @pl.jit
    def head_rows_zero_tail(x: pl.Tensor[[N, N], pl.FP32],
                            y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
        for r in pl.parallel(0, WRITTEN, T):
            with pl.at(level=pl.Level.CORE_GROUP, name_hint="rows"):
                y[r : r + T, :] = pl.exp(x[r : r + T, :])
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="zero_tail"):
            y[WRITTEN:N, :] = pl.full([N - WRITTEN, N], pl.FP32, 0.0)
        return y

    print(run_jit(head_rows_zero_tail, specs, golden, compare_fn={"y": tail_is_zero},
                  verbose=False).report())
    """, check=True),
    md("""
    ## Fix 3 · the tail is don't-care: NaN in the golden, `ignore_nan=True`

    Write NaN into the golden where any value is acceptable, and tell the comparator to skip
    the positions whose **golden** is NaN. (NaN in the kernel's output elsewhere still
    fails.)
    """),
    code("""
    def golden_dont_care(values):
        values["y"][:] = np.exp(values["x"])
        values["y"][WRITTEN:, :] = np.nan

    print(run_jit(head_rows, specs, golden_dont_care,
                  compare_fn={"y": ratio_allclose(ignore_nan=True)}, verbose=False).report())
    """, check=True),
    md("""
    ## Fix 4 · keep what was there: `pl.InOut` with a zero `init_value`

    An `InOut` tensor is uploaded before the run, so elements the kernel does not write keep
    their initial value. With `init_value=0.0` the tail reads as zeros, and a golden that
    expects zeros there passes with the default comparator.
    """),
    code("""
    @pl.jit
    def head_rows_inout(x: pl.Tensor[[N, N], pl.FP32],
                        y: pl.InOut[pl.Tensor[[N, N], pl.FP32]]):
        for r in pl.parallel(0, WRITTEN, T):
            with pl.at(level=pl.Level.CORE_GROUP, name_hint="rows"):
                y[r : r + T, :] = pl.exp(x[r : r + T, :])
        return y

    specs_inout = [TensorSpec("x", [N, N], np.float32, init_value=x_init),
                   TensorSpec("y", [N, N], np.float32, init_value=0.0, is_output=True)]

    def golden_zero_tail(values):
        values["y"][:] = 0.0
        values["y"][:WRITTEN] = np.exp(values["x"][:WRITTEN])

    print(run_jit(head_rows_inout, specs_inout, golden_zero_tail, verbose=False).report())
    """, check=True),
    md("""
    ## The other mistake: an output declared as a plain `pl.Tensor`

    A plain `pl.Tensor` parameter is an input. The kernel may write it on the device, but
    the result is never copied back, so the host reads its initial value (zeros here).
    The compiler warns when it sees an input being written, and the report says what to
    change.
    """),
    code("""
    %%pypto --run specs golden --show heatmap
    @pl.jit
    def forgot_out(x: pl.Tensor[[N, N], pl.FP32], y: pl.Tensor[[N, N], pl.FP32]):
        for r in pl.parallel(0, N, T):
            with pl.at(level=pl.Level.CORE_GROUP, name_hint="rows"):
                y[r : r + T, :] = pl.exp(x[r : r + T, :])
        return y
    """),
    code("""
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # shown once above; keep this cell's text short
        print(run_jit(forgot_out, specs, golden, verbose=False).report())
    """, check=True),
    md("""
    **Next:** [3 · Kernel forms](03_kernel_forms.ipynb).
    """),
]


# --- 3. kernel forms -------------------------------------------------------------------

NB3 = [
    md("""
    # 3 · Kernel forms: `@pl.jit.inline`, `@pl.jit.incore` + `pl.spmd_submit`, `@pl.program`

    The same computation can be written in several forms. They all compile to the same
    kind of program: one **orchestration** function that launches **InCore** functions as
    tasks. This notebook writes a small activation three ways and shows what each form
    compiles to.
    """),
    SETUP,
    code("""
    from pypto.golden import TensorSpec, run, run_jit

    N, T = 64, 16
    specs = [TensorSpec("x", [N, N], np.float32,
                        init_value=lambda: np.random.default_rng(0).standard_normal((N, N))),
             TensorSpec("y", [N, N], np.float32, is_output=True)]

    def golden(values):
        x = values["x"]
        values["y"][:] = x / (1.0 + np.exp(-1.702 * x))   # x * sigmoid(1.702 x)

    def functions(kernel):
        \"\"\"The compiled program's functions and their kinds.\"\"\"
        for f in kernel.compile().program.functions:
            print(f"{f.name:<16} {f.kind.value}")
    """),
    md("""
    ## `@pl.jit.inline`: a helper spliced into its caller

    An inline function is not a function at run time: its body is copied into each call
    site (specialised for the argument types there). Use it to name a piece of math, or to
    share a block of regions between kernels. Here it is called inside a region, so its ops
    become part of that region.
    """),
    code("""
    @pl.jit.inline
    def quick_gelu(t):
        return pl.mul(t, pl.recip(pl.add(pl.exp(pl.mul(t, -1.702)), 1.0)))

    @pl.jit
    def act_inline(x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
        for r in pl.parallel(0, N, T):
            with pl.at(level=pl.Level.CORE_GROUP, name_hint="act"):
                y[r : r + T, :] = quick_gelu(x[r : r + T, :])
        return y

    functions(act_inline)
    print(run_jit(act_inline, specs, golden, verbose=False).report())
    """, check=True),
    md("""
    Nothing named `quick_gelu` is left: the passes spliced it in, then cut the `pl.at` block
    out as `act_inline_act`. The pipeline view shows each pass and the IR it produced; move
    the slider to `3. outline_regions` to see the region become its own function.
    """),
    code("""
    pypto_lab.pipeline_view(act_inline)
    """),
    md("""
    ## `@pl.jit.incore` + `pl.spmd_submit`: write the InCore function yourself

    An `@pl.jit.incore` function *is* the region: it runs on one core and does its own
    tiling. `pl.tile.get_block_idx()` tells it which block of an SPMD launch it is.
    `pl.spmd_submit(kernel, *args, core_num=n)` launches it on `n` blocks and returns the
    outputs and the launch's task id (useful for `deps=`, see notebook 6).
    """),
    code("""
    @pl.jit.incore
    def act_rows(x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
        b = pl.tile.get_block_idx()
        y[b * T : b * T + T, :] = quick_gelu(x[b * T : b * T + T, :])
        return y

    @pl.jit
    def act_spmd(x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
        y, task = pl.spmd_submit(act_rows, x, y, core_num=N // T)
        return y

    functions(act_spmd)
    print(run_jit(act_spmd, specs, golden, verbose=False).report())
    """, check=True),
    md("""
    ## `@pl.program`: all functions in one class

    The program form is the one the compiler prints and reloads. Every method is a function
    with an explicit kind; the orchestration calls the others through `self`.
    `with pl.spmd(n):` around a call launches it on `n` blocks. Programs are run with
    `pypto.golden.run` instead of `run_jit`.
    """),
    code("""
    @pl.program
    class ActProgram:
        @pl.function(type=pl.FunctionType.InCore)
        def act_rows(self, x: pl.Tensor[[N, N], pl.FP32],
                     y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
            b = pl.tile.get_block_idx()
            t = x[b * T : b * T + T, :]
            y[b * T : b * T + T, :] = pl.mul(t, pl.recip(pl.add(pl.exp(pl.mul(t, -1.702)), 1.0)))
            return y

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
            with pl.spmd(N // T):
                y = self.act_rows(x, y)
            return y

    functions(ActProgram)
    print(run(ActProgram, specs, golden, verbose=False).report())
    """, check=True),
    md("""
    All three have the same shape: an orchestration launching one InCore function over four
    row blocks. The region graph of the program form shows it.
    """),
    code("""
    pypto_lab.show_graph(ActProgram)
    """),
    md("""
    **Which form when?** Start with `@pl.jit` + `pl.at` (the compiler writes the InCore
    function and its parameters for you) and factor math into `@pl.jit.inline` helpers.
    Reach for `@pl.jit.incore` when you want to control one core's code directly, and for
    `@pl.program` when you need program-only features such as `pl.submit`.

    **Next:** [4 · Dynamic shapes](04_dynamic_shapes.ipynb).
    """),
]


# --- 4. dynamic shapes -----------------------------------------------------------------

NB4 = [
    md("""
    # 4 · Dynamic shapes: one kernel for decode and prefill

    A decode step feeds one token through a layer; a prefill feeds the whole prompt. With a
    **dynamic** dimension the same compiled kernel serves both. The rules are few but
    strict, and the second half of this notebook breaks each one on purpose to show its
    diagnostic.
    """),
    SETUP,
    md("""
    ## The kernel

    * `TOKENS = pl.dynamic("TOKENS")` names the dimension; it goes in the annotations.
    * `x.bind_dynamic(0, TOKENS)` at the top of the body says that axis 0 of `x` is that
      dimension at run time.
    * `pl.tensor.dim(x, 0)` reads the actual size into a local (`n`) to compute with.
    * Inside a region, tiles have a **fixed** size (`TILE` rows). The last tile may hang
      over the end; `valid_shape=[rows, HIDDEN]` marks how much of it is real, and the
      store writes only that part.
    """),
    code("""
    from pypto.golden import TensorSpec, run_jit

    TOKENS = pl.dynamic("TOKENS")
    HIDDEN, TILE, EPS = 128, 16, 1e-6

    @pl.jit
    def rms_norm(x: pl.Tensor[[TOKENS, HIDDEN], pl.FP32],
                 gamma: pl.Tensor[[1, HIDDEN], pl.FP32],
                 y: pl.Out[pl.Tensor[[TOKENS, HIDDEN], pl.FP32]]):
        x.bind_dynamic(0, TOKENS)
        y.bind_dynamic(0, TOKENS)
        n = pl.tensor.dim(x, 0)
        for r in pl.parallel(0, n, TILE):
            with pl.at(level=pl.Level.CORE_GROUP, name_hint="rows"):
                rows = pl.min(TILE, n - r)
                t = pl.slice(x, [TILE, HIDDEN], [r, 0], valid_shape=[rows, HIDDEN])
                mean_sq = pl.mul(pl.row_sum(pl.mul(t, t)), 1.0 / HIDDEN)
                inv_rms = pl.rsqrt(pl.add(mean_sq, EPS))
                y[r : r + TILE, :] = pl.col_expand_mul(pl.row_expand_mul(t, inv_rms), gamma[:, :])
        return y
    """),
    md("""
    Specs are always concrete, so a test builds one set per mode. The golden is the same.
    """),
    code("""
    def specs_for(tokens):
        rng = np.random.default_rng(tokens)
        return [TensorSpec("x", [tokens, HIDDEN], np.float32,
                           init_value=lambda: rng.standard_normal((tokens, HIDDEN))),
                TensorSpec("gamma", [1, HIDDEN], np.float32,
                           init_value=lambda: rng.uniform(0.5, 1.5, (1, HIDDEN))),
                TensorSpec("y", [tokens, HIDDEN], np.float32, is_output=True)]

    def golden(values):
        x = values["x"]
        values["y"][:] = x / np.sqrt((x * x).mean(axis=1, keepdims=True) + EPS) * values["gamma"]

    compiled = rms_norm.compile()
    for mode, tokens in [("decode", 1), ("prefill", 37)]:
        print(f"{mode}:", run_jit(rms_norm, specs_for(tokens), golden, verbose=False).report())
    print("one compiled program for both:", rms_norm.compile() is compiled)
    """, check=True),
    md("""
    The prefill run has 37 tokens: two full tiles and a tail of 5 rows. In the compiled
    program the first axis is still the symbol `TOKENS`:
    """),
    code("""
    entry = compiled.program.function(compiled.program.entry)
    for p in entry.params:
        print(p.var.name, p.direction.value, p.var.type)
    """, check=True),
    md("""
    ## Each rule, broken on purpose

    The `%%pypto` magic shows a compile error as a located diagnostic (the line, a caret
    under the culprit, and a hint) instead of raising, so each cell below "fails" safely.
    They all reuse `TOKENS`, `HIDDEN` and `TILE` from above.

    ### 1. A dynamic dimension used in the body must be bound

    Without `bind_dynamic` the compiler cannot know which argument carries the size.
    """),
    code("""
    %%pypto
    @pl.jit
    def unbound(x: pl.Tensor[[TOKENS, HIDDEN], pl.FP32],
                y: pl.Out[pl.Tensor[[TOKENS, HIDDEN], pl.FP32]]):
        for t in pl.range(TOKENS):
            with pl.at(level=pl.Level.CORE_GROUP, name_hint="row"):
                y[t : t + 1, :] = pl.exp(x[t : t + 1, :])
        return y
    """),
    md("""
    ### 2. No arithmetic on `pl.dynamic` symbols in the body

    The symbols belong in annotations. Read the sizes with `pl.tensor.dim` and compute with
    the locals.
    """),
    code("""
    %%pypto
    SEQ = pl.dynamic("SEQ")

    @pl.jit
    def flatten(x: pl.Tensor[[TOKENS, SEQ, HIDDEN], pl.FP32],
                y: pl.Out[pl.Tensor[[TOKENS, SEQ, HIDDEN], pl.FP32]]):
        x.bind_dynamic(0, TOKENS)
        x.bind_dynamic(1, SEQ)
        flat = pl.reshape(x, [TOKENS * SEQ, HIDDEN])
        return y
    """),
    md("""
    ### 3. Tiles have compile-time sizes

    Inside a region a slice is an on-chip tile, and its size is a tiling constant. Slice a
    fixed `TILE` window and mark the real part with `valid_shape`, as `rms_norm` does.
    """),
    code("""
    %%pypto
    @pl.jit
    def whole_input_tile(x: pl.Tensor[[TOKENS, HIDDEN], pl.FP32],
                         y: pl.Out[pl.Tensor[[TOKENS, HIDDEN], pl.FP32]]):
        x.bind_dynamic(0, TOKENS)
        y.bind_dynamic(0, TOKENS)
        n = pl.tensor.dim(x, 0)
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="all"):
            y[0:TILE, :] = pl.exp(x[0:n, :])
        return y
    """),
    md("""
    The same rule for the explicit `pl.slice(x, shape, offset)` form:
    """),
    code("""
    %%pypto
    @pl.jit
    def slice_run_time_shape(x: pl.Tensor[[TOKENS, HIDDEN], pl.FP32],
                             y: pl.Out[pl.Tensor[[TOKENS, HIDDEN], pl.FP32]]):
        x.bind_dynamic(0, TOKENS)
        y.bind_dynamic(0, TOKENS)
        n = pl.tensor.dim(x, 0)
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="all"):
            t = pl.slice(x, [n, HIDDEN], [0, 0])
            y[0:TILE, :] = pl.exp(t)
        return y
    """),
    md("""
    ### 4. A computed `pl.create_tensor` shape goes through a named local

    A scratch tensor in the orchestration may have a run-time size, but a product such as
    `2 * tokens` has to be computed on its own line first (`n = 2 * tokens`, then `[n, HIDDEN]`).
    """),
    code("""
    %%pypto
    @pl.jit
    def scratch_shape(x: pl.Tensor[[TOKENS, HIDDEN], pl.FP32],
                      y: pl.Out[pl.Tensor[[TOKENS, HIDDEN], pl.FP32]]):
        x.bind_dynamic(0, TOKENS)
        y.bind_dynamic(0, TOKENS)
        tokens = pl.tensor.dim(x, 0)
        scratch = pl.create_tensor([2 * tokens, HIDDEN], dtype=pl.FP32)
        return y
    """),
    md("""
    ### 5. Pipelining and unrolling are compile-time decisions

    `pl.pipeline`'s `stage` and `pl.unroll`'s bounds must be constants.
    """),
    code("""
    %%pypto
    @pl.jit
    def dynamic_stage(x: pl.Tensor[[TOKENS, HIDDEN], pl.FP32],
                      y: pl.Out[pl.Tensor[[TOKENS, HIDDEN], pl.FP32]]):
        x.bind_dynamic(0, TOKENS)
        y.bind_dynamic(0, TOKENS)
        n = pl.tensor.dim(x, 0)
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="t"):
            for c in pl.pipeline(0, HIDDEN, 32, stage=n):
                y[0:TILE, c : c + 32] = pl.exp(x[0:TILE, c : c + 32])
        return y
    """),
    code("""
    %%pypto
    @pl.jit
    def dynamic_unroll(x: pl.Tensor[[TOKENS, HIDDEN], pl.FP32],
                       y: pl.Out[pl.Tensor[[TOKENS, HIDDEN], pl.FP32]]):
        x.bind_dynamic(0, TOKENS)
        y.bind_dynamic(0, TOKENS)
        n = pl.tensor.dim(x, 0)
        for t in pl.unroll(n):
            with pl.at(level=pl.Level.CORE_GROUP, name_hint="row"):
                y[t : t + 1, :] = pl.exp(x[t : t + 1, :])
        return y
    """),
    md("""
    ### 6. An SPMD block count may scale one run-time size, not multiply two

    `pl.spmd(n * 4)` is fine (one run-time size times a constant); `pl.spmd(n * m)` is not.
    """),
    code("""
    %%pypto
    @pl.jit
    def spmd_blocks(x: pl.Tensor[[TOKENS, HIDDEN], pl.FP32],
                    y: pl.Out[pl.Tensor[[TOKENS, HIDDEN], pl.FP32]]):
        x.bind_dynamic(0, TOKENS)
        y.bind_dynamic(0, TOKENS)
        n = pl.tensor.dim(x, 0)
        m = pl.tensor.dim(y, 0)
        for b in pl.spmd(n * m):
            y[b : b + 1, :] = pl.exp(x[b : b + 1, :])
        return y
    """),
    md("""
    ### 7. A nested inline must not return a reshaped-back view

    An inline helper that flattens its output with a run-time shape and returns the view
    reshaped back cannot be used from another inline helper; return the parameter itself
    (the data is already in it).
    """),
    code("""
    %%pypto
    SEQ = pl.dynamic("SEQ")

    @pl.jit.inline
    def exp_flat(x: pl.Tensor[[TOKENS, SEQ, HIDDEN], pl.FP32],
                 y: pl.Tensor[[TOKENS, SEQ, HIDDEN], pl.FP32]):
        b = pl.tensor.dim(x, 0)
        s = pl.tensor.dim(x, 1)
        bs = b * s
        x_flat = pl.reshape(x, [bs, HIDDEN])
        y_flat = pl.reshape(y, [bs, HIDDEN])
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="exp"):
            y_flat[0:TILE, :] = pl.exp(x_flat[0:TILE, :])
        return pl.reshape(y_flat, [b, s, HIDDEN])

    @pl.jit.inline
    def layer(x: pl.Tensor[[TOKENS, SEQ, HIDDEN], pl.FP32],
              y: pl.Tensor[[TOKENS, SEQ, HIDDEN], pl.FP32]):
        y = exp_flat(x, y)
        return y

    @pl.jit
    def model(x: pl.Tensor[[TOKENS, SEQ, HIDDEN], pl.FP32],
              y: pl.Out[pl.Tensor[[TOKENS, SEQ, HIDDEN], pl.FP32]]):
        x.bind_dynamic(0, TOKENS)
        x.bind_dynamic(1, SEQ)
        y.bind_dynamic(0, TOKENS)
        y.bind_dynamic(1, SEQ)
        y = layer(x, y)
        return y
    """),
    md("""
    Outside the magic, the same errors are ordinary exceptions (`pypto.errors.PyptoError`
    subclasses) raised by `compile()`; catch one to look at its parts.
    """),
    code("""
    from pypto.errors import PyptoError

    try:
        unbound.compile()
    except PyptoError as err:
        print(type(err).__name__, err.code)
        print("hint:", err.hint)
    """, check=True),
    md("""
    **Next:** [5 · Mixed cube + vector regions](05_mixed_cube_vector.ipynb).
    """),
]


# --- 5. mixed cube + vector ------------------------------------------------------------

NB5 = [
    md("""
    # 5 · Mixed cube + vector regions

    An AI core group has one **cube** core (AIC, matrix multiply) and two **vector** cores
    (AIV). A region that does a matmul *and* element-wise work is **mixed**: the compiler
    splits it into an AIC part and an AIV part joined by a cross-core pipe, and the vector
    epilogue runs on the AIVs while the cube computes the next tile.

    This notebook writes a projection with a bias + SiLU epilogue and looks at how it is
    split, how much on-chip memory it needs, and what the two optimisation hints do.
    """),
    SETUP,
    code("""
    import ml_dtypes
    from pypto.golden import TensorSpec, run_jit

    M, K, N, TM = 256, 128, 256, 64
    bf16 = ml_dtypes.bfloat16
    rng = np.random.default_rng(0)
    specs = [TensorSpec("x", [M, K], bf16, init_value=lambda: rng.standard_normal((M, K)) * 0.1),
             TensorSpec("w", [K, N], bf16, init_value=lambda: rng.standard_normal((K, N)) * 0.1),
             TensorSpec("bias", [1, N], np.float32, init_value=lambda: rng.standard_normal((1, N))),
             TensorSpec("y", [M, N], np.float32, is_output=True)]

    def golden(values):
        h = values["x"].astype(np.float32) @ values["w"].astype(np.float32) + values["bias"]
        values["y"][:] = h / (1.0 + np.exp(-h))   # SiLU
    """),
    md("""
    ## The projection

    `pl.matmul(..., out_dtype=pl.FP32)` runs on the cube and accumulates in FP32. The bias
    add and SiLU that follow are vector ops. Two hints go in `optimizations=`:

    * `pl.split(pl.SplitMode.UP_DOWN)`: each of the two AIVs takes half of the rows of
      the cube's result (`LEFT_RIGHT` would split columns);
    * `pl.cross_core_slot(slot_num=4)`: the AIC→AIV pipe is a ring of 4 slots, so the cube
      can run up to 4 tiles ahead of the vectors (the default is 2).

    `--show graph,passes` adds the region graph and the pipeline view: the graph draws
    the mixed region with its AIC and AIV halves joined by the pipe; below the pass list,
    the stage schematic shows the AIC feeding AIV0 and AIV1.
    """),
    code("""
    %%pypto --run specs golden --rtol 1e-3 --atol 1e-3 --show graph,passes
    @pl.jit
    def projection(x: pl.Tensor[[M, K], pl.BF16], w: pl.Tensor[[K, N], pl.BF16],
                   bias: pl.Tensor[[1, N], pl.FP32], y: pl.Out[pl.Tensor[[M, N], pl.FP32]]):
        for i in pl.parallel(0, M, TM):
            with pl.at(level=pl.Level.CORE_GROUP, name_hint="proj",
                       optimizations=[pl.split(pl.SplitMode.UP_DOWN),
                                      pl.cross_core_slot(slot_num=4)]):
                acc = pl.matmul(x[i : i + TM, :], w, out_dtype=pl.FP32)
                h = pl.col_expand_add(acc, bias[:, :])
                y[i : i + TM, :] = pl.mul(h, pl.recip(pl.add(pl.exp(pl.mul(h, -1.0)), 1.0)))
        return y
    """),
    md("""
    ## Reading the summary

    The region is `mixed`: one cube op (the matmul), MTE ops (loads and the store) and
    vector ops (the epilogue). The **UB estimate** is the peak Unified Buffer use of one
    AIV (the tiles it keeps alive at the same time) against the platform's budget; the
    summary shows it in red when it does not fit.
    """),
    code("""
    from pypto_lab.api import region_rows
    from pypto_lab.model import KernelModel

    def ub_of(kernel):
        row = region_rows(KernelModel.of(kernel.compile()))[0]
        return f"{row[0]:<6} {row[2]:<6} UB {row[4]:<28} {row[6]}"

    print(ub_of(projection))
    """, check=True),
    md("""
    ## What the hints change

    Two more versions of the same kernel: one without hints, one with `pl.split` only. The
    epilogue is moved into an inline helper so the versions differ only in their `with`
    line. Without `pl.split` each AIV would hold whole 64-row tiles, which does not fit;
    with it, each holds 32-row halves. `cross_core_slot` sets how far ahead the cube may
    run (the `slots=` in the pipe column); it does not change the estimate of this kernel.
    """),
    code("""
    @pl.jit.inline
    def bias_silu(acc, bias):
        h = pl.col_expand_add(acc, bias)
        return pl.mul(h, pl.recip(pl.add(pl.exp(pl.mul(h, -1.0)), 1.0)))

    @pl.jit
    def projection_no_hints(x: pl.Tensor[[M, K], pl.BF16], w: pl.Tensor[[K, N], pl.BF16],
                            bias: pl.Tensor[[1, N], pl.FP32],
                            y: pl.Out[pl.Tensor[[M, N], pl.FP32]]):
        for i in pl.parallel(0, M, TM):
            with pl.at(level=pl.Level.CORE_GROUP, name_hint="proj"):
                acc = pl.matmul(x[i : i + TM, :], w, out_dtype=pl.FP32)
                y[i : i + TM, :] = bias_silu(acc, bias[:, :])
        return y

    @pl.jit
    def projection_split(x: pl.Tensor[[M, K], pl.BF16], w: pl.Tensor[[K, N], pl.BF16],
                         bias: pl.Tensor[[1, N], pl.FP32],
                         y: pl.Out[pl.Tensor[[M, N], pl.FP32]]):
        for i in pl.parallel(0, M, TM):
            with pl.at(level=pl.Level.CORE_GROUP, name_hint="proj",
                       optimizations=[pl.split(pl.SplitMode.UP_DOWN)]):
                acc = pl.matmul(x[i : i + TM, :], w, out_dtype=pl.FP32)
                y[i : i + TM, :] = bias_silu(acc, bias[:, :])
        return y

    for label, kernel in [("no hints", projection_no_hints), ("split", projection_split),
                          ("split + 4 slots", projection)]:
        print(f"{label:<16}", ub_of(kernel))
    """, check=True),
    md("""
    ## Over budget is an error at run time

    The compiler only estimates; the simulator enforces the budget when it runs the region,
    the way the real allocator would refuse it. The error names the tiles that are live at
    the peak and suggests the fixes, `pl.split` among them.
    """),
    code("""
    from pypto.errors import PyptoError

    try:
        run_jit(projection_no_hints, specs, golden, rtol=1e-3, atol=1e-3, verbose=False)
    except PyptoError as err:
        print(type(err).__name__, str(err).splitlines()[0])
        print("hint:", err.hint)
    """, check=True),
    md("""
    **Next:** [6 · `pl.spmd`, `pl.parallel` and dependencies](06_spmd_parallel_and_deps.ipynb).
    """),
]


# --- 6. spmd vs parallel, deps ---------------------------------------------------------

NB6 = [
    md("""
    # 6 · `pl.spmd` vs `pl.parallel` + `pl.at`, dependencies and `deps=`

    Two ways to spread work over cores:

    * `for r in pl.parallel(0, N, T): with pl.at(...)` launches **one task per
      iteration**; each task runs the region once.
    * `for b in pl.spmd(n)` launches **one task with `n` blocks**; the body is the region,
      and `b` is the block index.

    Tasks are ordered only by the data they share (a task that reads what another writes
    waits for it) and by explicit `deps=`. Source order orders nothing. This notebook shows
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
    **Next:** [7 · Bringing a pypto-lib kernel file](07_pypto_lib_kernel_files.ipynb).
    """),
]


# --- 7. pypto-lib kernel files ---------------------------------------------------------

NB7 = [
    md("""
    # 7 · Bringing a pypto-lib kernel file

    pypto-lib kernels live in files with a fixed shape: the `@pl.jit` kernel, a
    `build_tensor_specs()` function, a golden function, and a `__main__` block that calls
    `golden.run_jit` and exits non-zero on failure. `pypto-sim FILE.py` runs such a file
    unchanged on the simulator (its `import golden` resolves to `pypto.golden`).

    [`kernels/add_rms_norm.py`](kernels/add_rms_norm.py), next to this notebook, is a small
    file of that shape written for this tutorial: a residual add followed by RMSNorm.
    """),
    SETUP,
    code("""
    from pathlib import Path

    print(Path("kernels/add_rms_norm.py").read_text())
    """),
    md("""
    ## Run it from the shell

    This is what you would type in a terminal (the `!` runs it from the notebook). The
    `[RUN]` lines are the harness's stages; the exit status is the file's own.
    """),
    code("""
    !pypto-sim kernels/add_rms_norm.py
    """, check=True),
    md("""
    The file's own options pass through (`--help` lists them). `pypto-sim` adds
    `-p a2a3sim` when the file takes a platform and none is given.
    """),
    code("""
    !pypto-sim kernels/add_rms_norm.py --tokens 5
    """, check=True),
    md("""
    ## Inspect it in the workbench

    Import the file as a module. `install_golden_alias()` makes `import golden` resolve
    to `pypto.golden` in this process too, the way `pypto-sim` does, so the file's own
    `build_tensor_specs()` works here.
    """),
    code("""
    import sys
    from pypto.cli import install_golden_alias

    install_golden_alias()
    sys.path.insert(0, "kernels")
    import add_rms_norm as lib

    specs = lib.build_tensor_specs(tokens=40)
    golden = lib.golden_add_rms_norm
    [(s.name, s.shape) for s in specs]
    """, check=True),
    md("""
    A `%%pypto` cell only has to *name* the kernel: binding it to a variable is enough for
    the magic to compile it and, with `--run`, to run it with the file's specs and golden.
    """),
    code("""
    %%pypto --run specs golden --rtol 1e-3 --atol 1e-3
    kernel = lib.add_rms_norm
    """),
    code("""
    cell = _
    print(cell.run.report)
    """, check=True),
    md("""
    `pypto_lab.inspect` gathers every view of a kernel in one panel: the summary, the
    region graph, the IR after all passes, and, given a run, the report, the heatmap (all
    grey: every element within tolerance) and the estimated timeline.
    """),
    code("""
    pypto_lab.inspect(cell)
    """),
    md("""
    ## Where to go from here

    * Change `TOKEN_TILE` in the file and re-run the cell above: the summary's UB estimate
      and the timeline follow.
    * Break the kernel (make `y` a plain `pl.Tensor`, or stop the loop early) and look at
      the heatmap, as in notebook 2.
    * `python benchmarks/conformance.py` runs whole lists of pypto-lib files this way.
    """),
]

NOTEBOOKS = {
    "01_first_kernel.ipynb": NB1,
    "02_outputs_and_unwritten_regions.ipynb": NB2,
    "03_kernel_forms.ipynb": NB3,
    "04_dynamic_shapes.ipynb": NB4,
    "05_mixed_cube_vector.ipynb": NB5,
    "06_spmd_parallel_and_deps.ipynb": NB6,
    "07_pypto_lib_kernel_files.ipynb": NB7,
}


def write_all(names: list[str]) -> list[Path]:
    out = []
    for name in names:
        path = NB_DIR / name
        nbformat.validate(notebook(NOTEBOOKS[name]))
        nbformat.write(notebook(NOTEBOOKS[name]), path)
        out.append(path)
    return out


WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"


def execute(path: Path) -> None:
    """Run the notebook in place, then drop what would only bloat or churn the file:
    widget views and their saved state (a heatmap's widget state is megabytes; GitHub
    shows the HTML fallback anyway, and JupyterLab redraws widgets on a re-run)."""
    env = dict(os.environ, PYTHONHASHSEED="0")
    subprocess.run([sys.executable, "-m", "jupyter", "nbconvert", "--to", "notebook",
                    "--execute", "--inplace", "--ExecutePreprocessor.timeout=300",
                    "--ExecutePreprocessor.record_timing=False",
                    "--ExecutePreprocessor.store_widget_state=False",
                    str(path)], check=True, env=env, cwd=path.parent)
    nb = nbformat.read(path, as_version=4)
    nb.metadata.pop("widgets", None)
    for cell in nb.cells:
        for out in cell.get("outputs", []):
            out.get("data", {}).pop(WIDGET_VIEW, None)
    nbformat.write(nb, path)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--execute", action="store_true", help="run each notebook in place")
    ap.add_argument("names", nargs="*", help="notebook file names (default: all)")
    args = ap.parse_args()
    names = args.names or list(NOTEBOOKS)
    for path in write_all(names):
        print("wrote", path.relative_to(ROOT))
        if args.execute:
            execute(path)
            print("  executed, size", path.stat().st_size, "bytes")
    return 0


if __name__ == "__main__":
    sys.exit(main())
