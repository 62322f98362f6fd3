"""Tutorial 5. mixed cube + vector."""
from __future__ import annotations

from tutorials.cells import SETUP, code, md

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

    M, K, N, TM = 256, 128, 256, 128
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
    line. Without `pl.split` each AIV would hold whole 128-row tiles, which does not fit;
    with it, each holds 64-row halves. `cross_core_slot` sets how far ahead the cube may
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
