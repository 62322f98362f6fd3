"""Tutorial 3. kernel forms."""
from __future__ import annotations

from tutorials.cells import SETUP, code, md

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
    the slider to `outline_regions` to see the region become its own function.
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
