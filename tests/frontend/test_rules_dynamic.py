"""Rules of dynamic shapes: DynVar arithmetic, composite shapes, bind_dynamic, tiling.
Each test asserts the exception family, the message and the exact line:column of the
offending token (`# ERR:<tag>`)."""
from __future__ import annotations

from frontend_helpers import B_DYN, CHUNK, S_DYN, D, N, T, compile_error

import pypto.language as pl
from pypto.errors import DynamicShapeError, PyptoSyntaxError

HERE = __file__



# --- dynamic shapes -----------------------------------------------------------------------


@pl.jit
def dynvar_arith(x: pl.Tensor[[B_DYN, S_DYN, D], pl.FP32],
                 y: pl.Out[pl.Tensor[[B_DYN, S_DYN, D], pl.FP32]]):
    x.bind_dynamic(0, B_DYN)
    x.bind_dynamic(1, S_DYN)
    y.bind_dynamic(0, B_DYN)
    y.bind_dynamic(1, S_DYN)
    flat = pl.reshape(x, [B_DYN * S_DYN, D])  # ERR:dyn_arith
    return y


def test_dynvar_arithmetic_in_a_body():
    err = compile_error(dynvar_arith, DynamicShapeError, "arithmetic on pl.dynamic symbols", HERE,
                        "dyn_arith", "B_DYN * S_DYN")
    assert "pl.tensor.dim" in err.hint


@pl.jit
def dim_locals(x: pl.Tensor[[B_DYN, S_DYN, D], pl.FP32],
               y: pl.Out[pl.Tensor[[B_DYN, S_DYN, D], pl.FP32]]):
    x.bind_dynamic(0, B_DYN)
    x.bind_dynamic(1, S_DYN)
    y.bind_dynamic(0, B_DYN)
    y.bind_dynamic(1, S_DYN)
    b = pl.tensor.dim(x, 0)
    s = pl.tensor.dim(x, 1)
    flat = pl.reshape(x, [b * s, D])
    flat2 = pl.reshape(x, [b * CHUNK // CHUNK * s, D])
    return y


def test_dim_locals_and_composite_reshape_are_fine():
    dim_locals.compile()


@pl.jit
def create_composite(x: pl.Tensor[[B_DYN, D], pl.FP32], y: pl.Out[pl.Tensor[[B_DYN, D], pl.FP32]]):
    x.bind_dynamic(0, B_DYN)
    y.bind_dynamic(0, B_DYN)
    s = pl.tensor.dim(x, 0)
    scratch = pl.create_tensor([CHUNK * s, D], dtype=pl.FP32)  # ERR:ct_comp
    return y


def test_composite_create_tensor_shape():
    err = compile_error(create_composite, DynamicShapeError, "computed into a named local", HERE,
                        "ct_comp", "CHUNK * s")
    assert "CHUNK * s" in err.hint


@pl.jit
def create_named(x: pl.Tensor[[B_DYN, D], pl.FP32], y: pl.Out[pl.Tensor[[B_DYN, D], pl.FP32]]):
    x.bind_dynamic(0, B_DYN)
    y.bind_dynamic(0, B_DYN)
    s = pl.tensor.dim(x, 0)
    chunk_s = CHUNK * s
    a = pl.create_tensor([chunk_s, D], dtype=pl.FP32)
    b = pl.create_tensor([T * 4, D], dtype=pl.FP32)
    c = pl.create_tensor([s * CHUNK, D], dtype=pl.FP32)
    return y


def test_named_and_constant_create_tensor_shapes_are_fine():
    # A named local, a folded compile-time product, and a product led by the run-time dim
    # (the form tier-2 kernels use, e.g. `pl.create_tensor([t_dim * H, 1], ...)`).
    create_named.compile()


@pl.jit
def unbound_use(x: pl.Tensor[[B_DYN, D], pl.FP32], y: pl.Out[pl.Tensor[[B_DYN, D], pl.FP32]]):
    for b in pl.range(B_DYN):  # ERR:unbound
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="row"):
            y[b:b + 1, :] = pl.exp(x[b:b + 1, :])
    return y


def test_dynamic_dim_used_without_bind_dynamic():
    err = compile_error(unbound_use, DynamicShapeError, "dynamic dim B_DYN is used in the entry "
                        "body but not bound", HERE, "unbound", "B_DYN")
    assert "x.bind_dynamic(0, B_DYN)" in err.hint


@pl.jit
def bound_use(x: pl.Tensor[[B_DYN, D], pl.FP32], y: pl.Out[pl.Tensor[[B_DYN, D], pl.FP32]]):
    x.bind_dynamic(0, B_DYN)
    for b in pl.range(B_DYN):
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="row"):
            y[b:b + 1, :] = pl.exp(x[b:b + 1, :])
    return y


@pl.jit
def declared_only(x: pl.Tensor[[B_DYN, D], pl.FP32],
                  cache: pl.InOut[pl.Tensor[[S_DYN, D], pl.FP32]],
                  y: pl.Out[pl.Tensor[[B_DYN, D], pl.FP32]]):
    x.bind_dynamic(0, B_DYN)
    y.bind_dynamic(0, B_DYN)
    b = pl.tensor.dim(x, 0)
    for i in pl.range(b):
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="row"):
            y[i:i + 1, :] = pl.exp(x[i:i + 1, :])
    return y


def test_bound_or_unused_dynamic_dims_are_fine():
    bound_use.compile()
    # The cache's block count is declared dynamic but never read: real tier-2 entries
    # leave such dims unbound, so this is not an error.
    declared_only.compile()


@pl.jit
def dynamic_tile(x: pl.Tensor[[B_DYN, D], pl.FP32], y: pl.Out[pl.Tensor[[B_DYN, D], pl.FP32]]):
    x.bind_dynamic(0, B_DYN)
    n = pl.tensor.dim(x, 0)
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="t"):
        t = x[0:n, :]  # ERR:dyn_tile
        y[0:T, :] = pl.exp(t)
    return y


def test_dynamic_tile_size_in_a_region():
    err = compile_error(dynamic_tile, DynamicShapeError, "run-time extent", HERE, "dyn_tile",
                        "0:n")
    assert "valid_shape" in err.hint


@pl.jit
def dynamic_slice_shape(x: pl.Tensor[[B_DYN, D], pl.FP32],
                        y: pl.Out[pl.Tensor[[B_DYN, D], pl.FP32]]):
    x.bind_dynamic(0, B_DYN)
    n = pl.tensor.dim(x, 0)
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="t"):
        t = pl.slice(x, [n, D], [0, 0])  # ERR:dyn_slice
        y[0:T, :] = pl.exp(t)
    return y


def test_dynamic_pl_slice_shape_in_a_region():
    compile_error(dynamic_slice_shape, DynamicShapeError, "pl.slice: this shape entry is a "
                  "run-time value", HERE, "dyn_slice", "n, D]")


@pl.jit
def dynamic_offsets(x: pl.Tensor[[B_DYN, D], pl.FP32], y: pl.Out[pl.Tensor[[B_DYN, D], pl.FP32]]):
    x.bind_dynamic(0, B_DYN)
    y.bind_dynamic(0, B_DYN)
    n = pl.tensor.dim(x, 0)
    for r in pl.parallel(0, n, T):
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="t"):
            q = r // T
            a = x[r:r + T, :]
            b = x[q * T + r:(q + 1) * T + r, :]
            c = pl.slice(x, [T, D], [r, 0], valid_shape=[n - r, D])
            y[r:r + T, :] = pl.add(pl.exp(a), pl.add(b, c))
    return y


def test_dynamic_offsets_and_valid_shapes_are_fine():
    dynamic_offsets.compile()


@pl.jit
def dynamic_stage(x: pl.Tensor[[B_DYN, D], pl.FP32], y: pl.Out[pl.Tensor[[B_DYN, D], pl.FP32]]):
    x.bind_dynamic(0, B_DYN)
    k = pl.tensor.dim(x, 0)
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="t"):
        for i in pl.pipeline(0, N, T, stage=k):  # ERR:stage
            y[i:i + T, :] = pl.exp(x[i:i + T, :])
    return y


def test_dynamic_pipeline_stage():
    """The real parser raises ParserSyntaxError ("pl.pipeline() stage must be a
    compile-time constant integer", `ast_parser.py`'s loop parsing): a syntax error here
    too, not a DynamicShapeError."""
    err = compile_error(dynamic_stage, PyptoSyntaxError, "stage is a tiling constant", HERE,
                        "stage", "k)")
    assert not isinstance(err, DynamicShapeError)


@pl.jit
def dynamic_spmd_factor(x: pl.Tensor[[B_DYN, D], pl.FP32],
                        y: pl.Out[pl.Tensor[[B_DYN, D], pl.FP32]]):
    x.bind_dynamic(0, B_DYN)
    t = pl.tensor.dim(x, 0)
    s = pl.tensor.dim(x, 0)
    for b in pl.spmd(t * s):  # ERR:spmd_factor
        y[b:b + 1, :] = pl.exp(x[b:b + 1, :])
    return y


def test_dynamic_spmd_block_factor():
    err = compile_error(dynamic_spmd_factor, DynamicShapeError, "block factor must be a "
                        "compile-time constant", HERE, "spmd_factor", "t * s")
    assert "BLOCKS_PER_TOKEN" in err.hint


@pl.jit
def folded_spmd(x: pl.Tensor[[B_DYN, D], pl.FP32], y: pl.Out[pl.Tensor[[B_DYN, D], pl.FP32]]):
    x.bind_dynamic(0, B_DYN)
    y.bind_dynamic(0, B_DYN)
    t_dim = pl.tensor.dim(x, 0)
    for blk in pl.spmd(t_dim * CHUNK, name_hint="folded"):
        t = blk // CHUNK
        y[t:t + 1, :] = pl.exp(x[t:t + 1, :])
    return y


def test_dynamic_spmd_core_num_times_constant_is_fine():
    folded_spmd.compile()


@pl.jit
def unroll_dynamic(x: pl.Tensor[[B_DYN, D], pl.FP32], y: pl.Out[pl.Tensor[[B_DYN, D], pl.FP32]]):
    x.bind_dynamic(0, B_DYN)
    n = pl.tensor.dim(x, 0)
    for i in pl.unroll(n):  # ERR:unroll
        pass
    return y


def test_unroll_with_a_dynamic_bound():
    # the real parser: ParserSyntaxError "pl.unroll() requires compile-time constant
    # integer bounds"
    err = compile_error(unroll_dynamic, PyptoSyntaxError, "pl.unroll needs compile-time bounds",
                        HERE, "unroll", "pl.unroll")
    assert not isinstance(err, DynamicShapeError)


@pl.jit.inline
def rb_inner(x: pl.Tensor[[B_DYN, S_DYN, D], pl.FP32], y: pl.Tensor[[B_DYN, S_DYN, D], pl.FP32]):
    b = pl.tensor.dim(x, 0)
    s = pl.tensor.dim(x, 1)
    bs = b * s
    x_flat = pl.reshape(x, [bs, D])
    y_flat = pl.reshape(y, [bs, D])
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="copy"):
        y_flat[0:T, :] = pl.exp(x_flat[0:T, :])
    return pl.reshape(y_flat, [b, s, D])  # ERR:reshape_back


@pl.jit.inline
def rb_inner_ok(x: pl.Tensor[[B_DYN, S_DYN, D], pl.FP32],
                y: pl.Tensor[[B_DYN, S_DYN, D], pl.FP32]):
    b = pl.tensor.dim(x, 0)
    s = pl.tensor.dim(x, 1)
    bs = b * s
    x_flat = pl.reshape(x, [bs, D])
    y_flat = pl.reshape(y, [bs, D])
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="copy"):
        y_flat[0:T, :] = pl.exp(x_flat[0:T, :])
    return y


@pl.jit.inline
def rb_outer(x: pl.Tensor[[B_DYN, S_DYN, D], pl.FP32], y: pl.Tensor[[B_DYN, S_DYN, D], pl.FP32]):
    y = rb_inner(x, y)
    return y


@pl.jit.inline
def rb_outer_ok(x: pl.Tensor[[B_DYN, S_DYN, D], pl.FP32],
                y: pl.Tensor[[B_DYN, S_DYN, D], pl.FP32]):
    y = rb_inner_ok(x, y)
    return y


def _rb_entry(body):
    @pl.jit
    def rb_entry(x: pl.Tensor[[B_DYN, S_DYN, D], pl.FP32],
                 y: pl.Out[pl.Tensor[[B_DYN, S_DYN, D], pl.FP32]]):
        x.bind_dynamic(0, B_DYN)
        x.bind_dynamic(1, S_DYN)
        y.bind_dynamic(0, B_DYN)
        y.bind_dynamic(1, S_DYN)
        y = body(x, y)
        return y

    return rb_entry


def test_nested_inline_reshape_back_of_an_out_view():
    err = compile_error(_rb_entry(rb_outer), DynamicShapeError, "ends by reshaping a view of its "
                        "parameter 'y' back", HERE, "reshape_back", "return")
    assert "return 'y' itself" in err.hint


@pl.jit.inline
def rb_outer_discards(x: pl.Tensor[[B_DYN, S_DYN, D], pl.FP32],
                      y: pl.Tensor[[B_DYN, S_DYN, D], pl.FP32]):
    rb_inner(x, y)
    return y


def test_reshape_back_is_fine_when_not_nested_or_when_returning_the_tensor():
    _rb_entry(rb_inner).compile()
    _rb_entry(rb_outer_ok).compile()
    # a statement call discards the reshaped-back value (real tier-3 kernels do this)
    _rb_entry(rb_outer_discards).compile()
