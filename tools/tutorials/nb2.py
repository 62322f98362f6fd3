"""Tutorial 2. outputs and the unwritten region."""
from __future__ import annotations

from tutorials.cells import SETUP, code, md

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
    The report names the unwritten region and says what the kernel did: which launches,
    inside which loop, wrote which rows (at their source lines). Its first fix is the
    kernel's: here the loop stops 16 rows short. The test-side fixes come after it, for a
    region that really is don't-care. The same diagnosis is data on the `RunResult` that
    `run_jit` returns, so a test can assert on it:
    """),
    code("""
    result = run_jit(head_rows, specs, golden, verbose=False)
    unwritten = result.outputs["y"].unwritten
    print("passed:", result.passed)
    print("unwritten (start, stop) per axis:", unwritten.bounds, "-", unwritten.count, "elements")
    print("kernel fix:", unwritten.kernel_fix)
    for fix in unwritten.fixes:
        print("- test side:", fix)
    """, check=True),
    md("""
    If those rows should hold results, fix the loop. If they really are padding, which
    test-side fix is right depends on what they *mean*, so here are all four.
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
    ## A large output: pooled, and full resolution where you zoom

    An output more than 160 elements a side is not drawn element by element: the heatmap
    pools it, each cell the **worst** element of a block (the title says how large), so a
    single wrong element still shows. The tail this loop skips is the magenta band at the bottom.
    **Drag a box** over any part of the map, or **click a cell**, and the kernel redraws
    that window from the full-resolution values (hover names each element and its
    writer); **double-click** to see the whole output again. The "next mismatch" button
    walks the windows that hold mismatches. (Zooming asks the running kernel for the
    values: in a notebook reopened without one, the map stays pooled.)
    """),
    code("""
    BIG_ROWS, BIG_COLS, BIG_T = 384, 192, 32

    big_specs = [TensorSpec("x", [BIG_ROWS, BIG_COLS], np.float32,
                            init_value=lambda: np.random.default_rng(0).standard_normal(
                                (BIG_ROWS, BIG_COLS))),
                 TensorSpec("y", [BIG_ROWS, BIG_COLS], np.float32, is_output=True)]
    """),
    code("""
    %%pypto --run big_specs golden --show heatmap
    @pl.jit
    def big_rows(x: pl.Tensor[[BIG_ROWS, BIG_COLS], pl.FP32],
                 y: pl.Out[pl.Tensor[[BIG_ROWS, BIG_COLS], pl.FP32]]):
        for r in pl.parallel(0, BIG_ROWS - BIG_T, BIG_T):
            with pl.at(level=pl.Level.CORE_GROUP, name_hint="rows"):
                y[r : r + BIG_T, :] = pl.exp(x[r : r + BIG_T, :])
        return y
    """),
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
