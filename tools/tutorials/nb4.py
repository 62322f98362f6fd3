"""Tutorial 4. dynamic shapes."""
from __future__ import annotations

from tutorials.cells import SETUP, code, md

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
