"""Tutorial 11. Precision: two kernels that lose precision where their golden does not (a
cast that rounds ties away from zero, a quantisation through bf16), each found with the
float64 shadow and the cast audit, then fixed to match the golden exactly."""
from __future__ import annotations

from tutorials.cells import SETUP, code, md

NB11 = [
    md("""
    # 11 · Precision: where do the values drift?

    Most "the kernel is wrong" reports that pypto-lib's precision guide walks through are
    not wrong indices but lost precision: a `pl.cast` that rounds differently from the
    golden, a value narrowed to bf16 on the way somewhere, a golden that computes in
    another dtype. On the device you find the op by hand: tag intermediates, dump them,
    write a reference for each, and walk them until the error jumps.

    The simulator has every intermediate already. `--precision` (the harness's
    `runtime_cfg={"sim_shadow": "fp64"}`, `pypto-sim --shadow fp64`) runs the kernel a
    second time with every float in float64 and every cast between floats the identity,
    compares each intermediate with its float64 shadow in the order the run reached it, and
    names the **first divergence**: the first op whose error jumps past its inputs'. The
    cast audit beside it reads the casts themselves: their rounding mode against the
    golden's, how many elements landed on an exact tie in this run, and casts through an
    intermediate dtype.
    """),
    SETUP,
    code("""
    import ml_dtypes
    from pypto.golden import TensorSpec

    R, C = 64, 128
    # 7-bit values in [2, 4): their squares have up to 14 significant bits, and one in
    # sixty-four lands exactly between two bf16 numbers (bf16 keeps 8): a tie
    x0 = ((np.arange(R * C) % 64 + 64) / 32).astype(np.float32).reshape(R, C)

    square_specs = [TensorSpec("x", [R, C], np.float32, init_value=lambda: x0),
                    TensorSpec("y", [R, C], ml_dtypes.bfloat16, is_output=True)]

    def square_golden(values):
        values["y"][:] = (values["x"] * values["x"]).astype(ml_dtypes.bfloat16)
    """),
    md("""
    ## A cast that rounds ties away from zero

    `pl.cast(v, pl.BF16)` rounds with the default mode `"round"`: to nearest, **ties away
    from zero**. numpy's `astype` and torch's `.to()` round ties **to even**. The two agree
    on every value except an exact tie, and a product of a few-bit values is often one.
    The comparison is exact (`--rtol 0 --atol 0`): a bf16 output either matches or not.
    """),
    code("""
    %%pypto --run square_specs square_golden --rtol 0 --atol 0 --precision
    @pl.jit
    def square(x: pl.Tensor[[R, C], pl.FP32], y: pl.Out[pl.Tensor[[R, C], pl.BF16]]):
        for r in pl.parallel(0, R, 32):
            with pl.at(level=pl.Level.CORE_GROUP):
                y[r : r + 32, :] = pl.cast(pl.mul(x[r : r + 32, :], x[r : r + 32, :]), pl.BF16)
        return y
    """),
    md("""
    The ladder shows the product exact (float32 holds it) and the error appearing at the
    cast: the first divergence is line 6 of the cell. The drift map of that cast shows the
    differences are rare and one bf16 step each. The cast audit (`result.cast_audit` of the
    harness, printed in the run's report when an output fails) says why, with this run's
    count of ties:
    """),
    code("""
    run = _.kernels[0].run
    first = run.shadow.first
    print("first divergence:", first.site.op, "->", first.site.dtype.name, "at line", first.site.span.line)
    ties, total = first.ties
    print(f"exact ties at that cast: {ties} of {total}")
    print("mismatched elements:", run.outputs[0].check.mismatch.count)
    (finding,) = run.raw.cast_audit.findings
    print(finding.kind)
    print(finding.fix)
    """, check=True),
    md("""
    Every mismatched element is a tie: the kernel is right up to the rounding rule. Round
    as the golden does, `mode="rint"` (ties to even):
    """),
    code("""
    %%pypto --run square_specs square_golden --rtol 0 --atol 0
    @pl.jit
    def square_rint(x: pl.Tensor[[R, C], pl.FP32], y: pl.Out[pl.Tensor[[R, C], pl.BF16]]):
        for r in pl.parallel(0, R, 32):
            with pl.at(level=pl.Level.CORE_GROUP):
                y[r : r + 32, :] = pl.cast(pl.mul(x[r : r + 32, :], x[r : r + 32, :]), pl.BF16,
                                           mode="rint")
        return y
    """),
    code("""
    print("passed:", _.kernels[0].run.passed)
    """, check=True),
    md("""
    ## A quantisation through bf16

    int8 quantisation scales a float32 value and rounds it to an integer. Going through
    bf16 first (`fp32 -> bf16 -> int8`, common when the scaled value is kept in bf16)
    rounds **twice**. bf16 keeps 8 significant bits, so between 64 and 128 it steps by
    0.5: 100.7 becomes 100.5 on the first hop and 100 on the second (ties to even), where
    one rounding gives 101; 101.3 becomes 101.5 and then 102 instead of 101. The golden
    quantises straight from float32.
    """),
    code("""
    u0 = np.linspace(-300.0, 300.0, R * C, dtype=np.float32).reshape(R, C)
    INV_SCALE = 0.41

    quant_specs = [TensorSpec("u", [R, C], np.float32, init_value=lambda: u0),
                   TensorSpec("q", [R, C], np.int8, is_output=True)]

    def quant_golden(values):
        scaled = values["u"] * np.float32(INV_SCALE)
        values["q"][:] = np.clip(np.rint(scaled), -128, 127).astype(np.int8)
    """),
    code("""
    %%pypto --run quant_specs quant_golden --rtol 0 --atol 0 --precision
    @pl.jit
    def quantise(u: pl.Tensor[[R, C], pl.FP32], q: pl.Out[pl.Tensor[[R, C], pl.INT8]]):
        for r in pl.parallel(0, R, 32):
            with pl.at(level=pl.Level.CORE_GROUP):
                scaled = pl.cast(pl.mul(u[r : r + 32, :], INV_SCALE), pl.BF16, mode="rint")
                q[r : r + 32, :] = pl.cast(scaled, pl.INT8, mode="rint")
        return q
    """),
    code("""
    run = _.kernels[0].run
    first = run.shadow.first
    print("first divergence:", first.site.op, "->", first.site.dtype.name, "at line", first.site.span.line)
    print("mismatched elements:", run.outputs[0].check.mismatch.count)
    (finding,) = run.raw.cast_audit.findings
    print(finding.kind, "|", finding.fix)
    """, check=True),
    md("""
    The shadow names the bf16 hop (line 6), not the store and not the int8 cast, and the
    audit names the chain (the int8 cast on line 7, through line 6). Quantise straight
    from the float32 value:
    """),
    code("""
    %%pypto --run quant_specs quant_golden --rtol 0 --atol 0
    @pl.jit
    def quantise_once(u: pl.Tensor[[R, C], pl.FP32], q: pl.Out[pl.Tensor[[R, C], pl.INT8]]):
        for r in pl.parallel(0, R, 32):
            with pl.at(level=pl.Level.CORE_GROUP):
                q[r : r + 32, :] = pl.cast(pl.mul(u[r : r + 32, :], INV_SCALE), pl.INT8,
                                           mode="rint")
        return q
    """),
    code("""
    print("passed:", _.kernels[0].run.passed)
    """, check=True),
    md("""
    **What to take away.** When many elements are off by a little, run with `--precision`
    before reading indices: the first divergence is the op to look at, the ladder shows how
    the error grows after it, and the cast audit says whether a rounding mode or a chain of
    casts is the cause. The same report prints from `pypto-sim KERNEL.py --shadow fp64`.
    The shadow runs the kernel twice more, block by block: expect it to take several times
    the plain run.

    **Back to:** [1 · First kernel](01_first_kernel.ipynb).
    """),
]
