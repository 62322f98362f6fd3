"""Elementwise, comparison/selection, reductions, broadcasts and matmul against numpy."""
from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

from pypto.ir.nodes import Var
from pypto.ir.types import MemorySpace, TileType
from pypto.ops.numeric import valid_shape, with_valid
from pypto.ops.registry import OpError
from tests.ops.helpers import (
    BF16,
    FP16,
    FP32,
    INT8,
    INT16,
    INT32,
    UINT8,
    attr,
    impl,
    lit,
    rule,
    scalar,
    tensor,
    tile,
)

rng = np.random.default_rng(7)
A = rng.standard_normal((4, 8)).astype(np.float32)
B = rng.standard_normal((4, 8)).astype(np.float32) + 3.0
I8 = rng.integers(-100, 100, (4, 8)).astype(np.int8)
I8B = rng.integers(1, 100, (4, 8)).astype(np.int8)
BF = A.astype(ml_dtypes.bfloat16)

BINARY = {
    "add": np.add, "sub": np.subtract, "mul": np.multiply, "maximum": np.maximum,
    "minimum": np.minimum, "fmod": np.fmod, "div": np.divide,
}


@pytest.mark.parametrize("op", sorted(BINARY))
def test_binary_fp32_bf16_and_scalar(op):
    ref = BINARY[op]
    np.testing.assert_allclose(impl(op, A, B), ref(A, B), rtol=1e-6)
    # bf16 operands compute in fp32 (the interpreter rounds to the declared dtype)
    got = impl(op, BF, BF)
    want = ref(BF.astype(np.float32), BF.astype(np.float32))
    np.testing.assert_allclose(np.asarray(got, np.float32), want, rtol=1e-6)
    np.testing.assert_allclose(impl(op, A, 2.0), ref(A, np.float32(2.0)), rtol=1e-6)


@pytest.mark.parametrize("op", ["add", "sub", "mul", "maximum", "minimum"])
def test_binary_int8(op):
    got = np.asarray(impl(op, I8, I8B))
    want = BINARY[op](I8.astype(np.int64), I8B.astype(np.int64))
    np.testing.assert_array_equal(got.astype(np.int64) if op in ("maximum", "minimum")
                                  else got.astype(np.int8), want.astype(np.int8))


def test_integer_division_truncates():
    a = np.array([7, -7, 7, -7], np.int32)
    b = np.array([2, 2, -2, -2], np.int32)
    np.testing.assert_array_equal(impl("div", a, b), [3, -3, -3, 3])


@pytest.mark.parametrize("op,fn", [("adds", np.add), ("subs", np.subtract), ("muls", np.multiply),
                                   ("divs", np.divide), ("maximums", np.maximum),
                                   ("minimums", np.minimum), ("fmods", np.fmod)])
def test_scalar_forms(op, fn):
    np.testing.assert_allclose(impl(op, A, 1.5), fn(A, np.float32(1.5)), rtol=1e-6)


def test_bitwise_and_shifts():
    x = np.array([0b1100, -8, 5], np.int32)
    y = np.array([0b1010, 3, 1], np.int32)
    np.testing.assert_array_equal(impl("and_", x, y), x & y)
    np.testing.assert_array_equal(impl("or_", x, y), x | y)
    np.testing.assert_array_equal(impl("xor", x, y, None), x ^ y)
    np.testing.assert_array_equal(impl("xors", x, 6, None), x ^ 6)
    np.testing.assert_array_equal(impl("ands", x, 6), x & 6)
    np.testing.assert_array_equal(impl("ors", x, 1), x | 1)
    np.testing.assert_array_equal(impl("shl", x, y), x << y)
    np.testing.assert_array_equal(impl("shr", x, y), x >> y)  # arithmetic for signed
    np.testing.assert_array_equal(impl("shls", x, 2), x << 2)
    np.testing.assert_array_equal(impl("shrs", np.array([0xF0000000], np.uint32), 4), [0x0F000000])
    np.testing.assert_array_equal(impl("not_", np.array([0, 5], np.int16)), [-1, -6])


UNARY = {"neg": np.negative, "abs": np.abs, "exp": np.exp, "sqrt": np.sqrt, "sin": np.sin,
         "cos": np.cos, "relu": lambda x: np.maximum(x, 0), "rsqrt": lambda x: 1 / np.sqrt(x),
         "recip": lambda x: 1 / x, "log": np.log}


@pytest.mark.parametrize("op", sorted(UNARY))
def test_unary(op):
    x = B if op in ("sqrt", "rsqrt", "log", "recip") else A
    np.testing.assert_allclose(impl(op, x), UNARY[op](x.astype(np.float64)), rtol=2e-6)
    if op not in ("sin", "cos"):
        xb = x.astype(ml_dtypes.bfloat16)
        np.testing.assert_allclose(np.asarray(impl(op, xb), np.float64),
                                   UNARY[op](xb.astype(np.float64)), rtol=2e-6)


def test_lrelu_prelu_ternaries_rem():
    np.testing.assert_allclose(impl("lrelu", A, 0.1), np.where(A > 0, A, 0.1 * A), rtol=1e-6)
    slope = np.full_like(A, 0.25)
    np.testing.assert_allclose(impl("prelu", A, slope, None), np.where(A > 0, A, A * 0.25))
    np.testing.assert_allclose(impl("addc", A, B, A), A + B + A, rtol=1e-6)
    np.testing.assert_allclose(impl("subc", A, B, A), A - B - A, rtol=1e-6)
    np.testing.assert_allclose(impl("addsc", A, 2.0, B), A + 2 + B, rtol=1e-6)
    np.testing.assert_allclose(impl("subsc", A, 2.0, B), A - 2 - B, rtol=1e-6)
    a = np.array([7, -7, 7, -7], np.int32)
    b = np.array([3, 3, -3, -3], np.int32)
    np.testing.assert_array_equal(impl("rem", a, b, None), [1, 2, -2, -1])  # sign of divisor
    np.testing.assert_array_equal(impl("rems", a, 3, None), [1, 2, 1, 2])


def test_part_ops_use_valid_regions():
    a = with_valid(np.ones((2, 4), np.float32), (2, 2))
    b = with_valid(np.full((2, 4), 10, np.float32), (1, 4))
    got = impl("part_add", a, b)
    want = np.array([[11, 11, 10, 10], [1, 1, 11, 11]], np.float32)
    # row 0: both valid in cols 0-1, only b in 2-3; row 1: only a in 0-1, neither in 2-3
    np.testing.assert_array_equal(got[0], want[0])
    np.testing.assert_array_equal(got[1, :2], [1, 1])
    assert valid_shape(got) == (2, 4)
    np.testing.assert_array_equal(impl("part_max", A, B), np.maximum(A, B))
    np.testing.assert_array_equal(impl("part_min", A, B), np.minimum(A, B))
    np.testing.assert_array_equal(impl("part_mul", A, B), A * B)


# --- cmp / sel ---------------------------------------------------------------------------------


@pytest.mark.parametrize("code,fn", list(enumerate([np.equal, np.not_equal, np.less,
                                                    np.less_equal, np.greater,
                                                    np.greater_equal])))
def test_tensor_cmp_values_in_lhs_dtype(code, fn):
    x = np.array([[1, 2, 3, np.nan]], np.float32)
    y = np.array([[2, 2, 2, 2]], np.float32)
    got = impl("cmp", x, y, code)
    assert got.dtype == np.float32
    np.testing.assert_array_equal(got, fn(x, y).astype(np.float32))
    xi = np.array([[1, 2, 3]], np.int8)
    assert impl("cmp", xi, 2, code).dtype == np.int8


def test_tile_cmp_packs_bits_and_sel_consumes_them():
    x = rng.standard_normal((3, 40)).astype(np.float32)
    y = rng.standard_normal((3, 40)).astype(np.float32)
    mask = impl("tile.cmp", x, y, 4)
    assert mask.dtype == np.uint8 and mask.shape == (3, 32)
    bits = np.unpackbits(mask, axis=-1, bitorder="little")[:, :40].astype(bool)
    np.testing.assert_array_equal(bits, x > y)
    assert not mask[:, 5:].any()
    np.testing.assert_array_equal(impl("sel", mask, x, y, None), np.where(x > y, x, y))
    m2 = impl("cmps", x, 0.0, "lt")
    np.testing.assert_array_equal(impl("sels", m2, x, None, -1.0), np.where(x < 0, x, -1.0))


def test_cmp_rules():
    t = rule("cmp", tensor([4, 8], BF16), tensor([4, 8], BF16), lit(4))
    assert t.dtype == BF16 and t.shape == (4, 8)
    mt = rule("cmp", tile([4, 40]), tile([4, 40]), lit(0))
    assert isinstance(mt, TileType) and mt.dtype == UINT8 and mt.shape == (4, 32)
    m = Var("mask", mt)
    from pypto.ops.registry import get
    assert get("cmp").extra["resolve"](mt) == "tile.cmp"
    assert get("cmp").extra["resolve"](t) is None
    with pytest.raises(OpError, match="unknown comparison"):
        rule("cmp", tensor([4]), lit(1.0), lit(9))
    with pytest.raises(OpError, match="scalar"):
        rule("cmps", tile([4, 8]), tile([4, 8]))
    with pytest.raises(OpError, match="tmp"):
        rule("sel", m, tile([4, 40]), tile([4, 40]), lit(0))
    with pytest.raises(OpError, match="predicate bits"):
        rule("sel", tile([4, 2], UINT8), tile([4, 40]), tile([4, 40]), tile([1, 32], UINT8))
    assert rule("sels", m, tile([4, 40]), tile([1, 32], UINT8), scalar(FP32)).shape == (4, 40)


# --- reductions and broadcasts --------------------------------------------------------------


@pytest.mark.parametrize("op,fn,axis", [("row_sum", np.sum, -1), ("row_max", np.max, -1),
                                        ("row_min", np.min, -1), ("row_prod", np.prod, -1),
                                        ("col_sum", np.sum, -2), ("col_max", np.max, -2),
                                        ("col_min", np.min, -2), ("col_prod", np.prod, -2)])
def test_reductions(op, fn, axis):
    args = (A,) if op in ("col_max", "col_min", "col_prod") else (A, None)
    np.testing.assert_allclose(impl(op, *args), fn(A.astype(np.float64), axis=axis, keepdims=True),
                               rtol=1e-5)
    bargs = (BF,) + args[1:]
    # bf16 col_sum adds row after row in bf16, rounding every add (TCOLSUM; see
    # test_valid_region_reductions); the other reductions compute in fp32
    rtol = 2e-2 if op == "col_sum" else 1e-5
    np.testing.assert_allclose(np.asarray(impl(op, *bargs), np.float64),
                               fn(BF.astype(np.float64), axis=axis, keepdims=True), rtol=rtol)


def test_arg_reductions_first_on_ties():
    x = np.array([[1, 5, 5, 0], [2, 2, 2, 2]], np.float32)
    np.testing.assert_array_equal(impl("row_argmax", x, None), [[1], [0]])
    np.testing.assert_array_equal(impl("row_argmin", x, None), [[3], [0]])
    np.testing.assert_array_equal(impl("col_argmax", x, None), [[1, 0, 0, 1]])
    np.testing.assert_array_equal(impl("col_argmin", x, None), [[0, 1, 1, 0]])
    assert impl("row_argmax", x.astype(ml_dtypes.bfloat16), None).dtype == np.int32


def test_reduction_scratch_rules():
    assert rule("row_sum", tensor([4, 8])).shape == (4, 1)
    with pytest.raises(OpError, match="needs a scratch tile 'tmp_tile'"):
        rule("row_sum", tile([4, 8]))
    assert rule("row_sum", tile([4, 8]), tile([4, 8])).shape == (4, 1)
    with pytest.raises(OpError, match="takes no scratch"):
        rule("row_max", tensor([4, 8]), tile([4, 8]))
    with pytest.raises(OpError, match="smaller"):
        rule("row_max", tile([4, 8]), tile([4, 4]))
    assert rule("col_sum", tile([4, 8])).shape == (1, 8)
    assert rule("row_argmax", tile([4, 8]), tile([4, 8])).dtype == INT32
    with pytest.raises(OpError, match="scratch"):
        rule("row_argmax", tile([4, 8]))
    with pytest.raises(OpError, match="scratch"):
        rule("xor", tile([4, 8], INT32), tile([4, 8], INT32))


@pytest.mark.parametrize("kind", ["row", "col"])
@pytest.mark.parametrize("op,fn", [("add", np.add), ("sub", np.subtract), ("mul", np.multiply),
                                   ("div", np.divide), ("max", np.maximum), ("min", np.minimum),
                                   ("expdif", lambda a, b: np.exp(a - b))])
def test_expand_ops(kind, op, fn):
    vec = B[:, :1] if kind == "row" else B[:1, :]
    np.testing.assert_allclose(impl(f"{kind}_expand_{op}", A, vec), fn(A, vec), rtol=1e-6)


def test_expand_ops_across_ranks():
    # tiles flatten to 2-D, so a [4, 1] row vector serves a [1, 1, 4, 8] x (qwen3 decode_4d)
    x4 = A.reshape(1, 1, 4, 8)
    assert rule("row_expand_mul", tensor([1, 1, 4, 8]), tensor([4, 1])).shape == (1, 1, 4, 8)
    np.testing.assert_allclose(impl("row_expand_mul", x4, B[:, :1]), x4 * B[:, :1], rtol=1e-6)
    col = B[:1, :].reshape(1, 1, 1, 8)
    np.testing.assert_allclose(impl("col_expand_mul", A, col), A * B[:1, :], rtol=1e-6)
    with pytest.raises(OpError, match="one value per row"):
        rule("row_expand_mul", tensor([2, 4, 8]), tensor([4, 1]))
    with pytest.raises(OpError, match=r"\[1, cols\]"):
        rule("col_expand_mul", tensor([4, 8]), tensor([2, 1, 8]))


def test_expand_fill_ops():
    np.testing.assert_array_equal(impl("row_expand", A, B[:, :1]),
                                  np.broadcast_to(B[:, :1], A.shape))
    np.testing.assert_array_equal(impl("col_expand", A, B[:1]), np.broadcast_to(B[:1], A.shape))
    np.testing.assert_array_equal(impl("expands", A, 2.0), np.full_like(A, 2.0))
    np.testing.assert_array_equal(impl("expand_clone", B[:1], A), np.broadcast_to(B[:1], A.shape))


# --- matmul ------------------------------------------------------------------------------------


def test_matmul_bf16_accumulates_in_fp32():
    a = rng.standard_normal((16, 64)).astype(ml_dtypes.bfloat16)
    b = rng.standard_normal((64, 8)).astype(ml_dtypes.bfloat16)
    got = impl("matmul", a, b)
    assert got.dtype == np.float32
    want = a.astype(np.float64) @ b.astype(np.float64)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(impl("matmul", a, b.T.copy(), b_trans=True), want, rtol=1e-5,
                               atol=1e-5)


def test_matmul_int8_accumulates_in_int32():
    a = np.full((2, 300), 127, np.int8)
    b = np.full((300, 2), 127, np.int8)
    got = impl("matmul", a, b)
    assert got.dtype == np.int32 and got[0, 0] == 127 * 127 * 300


@pytest.mark.parametrize("dt, k", [(np.int8, 1024), (np.int8, 1025), (np.uint8, 300),
                                   (np.int16, 4096), (np.int16, 1 << 21 | 1), (np.int32, 64)])
def test_matmul_integer_is_exact_int64_accumulation_wrapped(dt, k):
    # small integer operands take an exact float BLAS path; it must equal int64 sums
    # wrapped to int32, including the extreme values and a transposed batched rhs
    info = np.iinfo(dt)
    a = rng.integers(info.min, info.max, (3, k), dtype=dt, endpoint=True)
    b = rng.integers(info.min, info.max, (2, 5, k), dtype=dt, endpoint=True)
    a[0] = info.min
    b[:, 0] = info.min
    want = (a.astype(np.int64) @ np.swapaxes(b, -1, -2).astype(np.int64)).astype(np.int32)
    got = impl("matmul", a, b, b_trans=True)
    assert got.dtype == np.int32 and np.array_equal(got, want)


def test_matmul_family():
    a, b = A[:, :4], B[:4, :]
    acc = np.ones((4, 8), np.float32)
    np.testing.assert_allclose(impl("matmul_acc", acc, a, b), 1 + a @ b, rtol=1e-5)
    np.testing.assert_allclose(impl("matmul_acc", acc, a, b, init_cond=True), a @ b, rtol=1e-5)
    np.testing.assert_allclose(impl("matmul_bias", a, b, B[:1]), a @ b + B[:1], rtol=1e-5)
    ba, bb = rng.standard_normal((2, 3, 4)), rng.standard_normal((2, 4, 5))
    ba, bb = ba.astype(np.float32), bb.astype(np.float32)
    np.testing.assert_allclose(impl("batch_matmul", ba, bb), ba @ bb, rtol=1e-5)
    np.testing.assert_allclose(impl("batch_matmul_acc", np.ones((2, 3, 5), np.float32), ba, bb),
                               1 + ba @ bb, rtol=1e-5)
    v = A[:1, :4]
    np.testing.assert_allclose(impl("gemv", v, b), v @ b, rtol=1e-5)
    np.testing.assert_allclose(impl("gemv_acc", np.ones((1, 8), np.float32), v, b), 1 + v @ b,
                               rtol=1e-5)
    np.testing.assert_allclose(impl("gemv_bias", v, b, B[:1]), v @ b + B[:1], rtol=1e-5)


def test_matmul_rules():
    t = rule("matmul", tensor([16, 32], BF16), tensor([32, 8], BF16))
    assert t.dtype == BF16  # tensor matmul keeps the promoted input dtype
    assert rule("matmul", tensor([16, 32], BF16), tensor([32, 8], BF16),
                out_dtype=attr(FP32)).dtype == FP32
    k = rule("matmul", tile([16, 32], INT8, memory=MemorySpace.Left),
             tile([32, 8], INT8, memory=MemorySpace.Right))
    assert k.dtype == INT32 and k.memory is MemorySpace.Acc
    with pytest.raises(OpError, match="inner dims"):
        rule("matmul", tensor([16, 32]), tensor([16, 8]))
    with pytest.raises(OpError, match="FP32 or INT32 accumulator"):
        rule("matmul_acc", tensor([16, 8], BF16), tensor([16, 32]), tensor([32, 8]))
    assert rule("gemv", tile([1, 32], BF16), tile([32, 16], BF16)).dtype == FP32
    with pytest.raises(OpError, match="row vector"):
        rule("gemv", tile([2, 32]), tile([32, 16]))
    with pytest.raises(OpError, match="acc_phase"):
        rule("gemv", tile([1, 32]), tile([32, 16]), attr("later"))


# --- elementwise rules -----------------------------------------------------------------------


def test_elementwise_rules():
    with pytest.raises(OpError, match="FP32 only"):
        rule("sin", tensor([4], BF16))
    with pytest.raises(OpError, match="identical dtypes"):
        rule("div", tile([4, 8], FP32), tile([4, 8], FP16))
    with pytest.raises(OpError, match="identical shapes"):
        rule("div", tile([4, 8]), tile([4, 1]))
    with pytest.raises(OpError, match="INT16, INT32, FP16 and FP32"):
        rule("div", tile([4, 8], BF16), tile([4, 8], BF16))
    assert rule("div", tensor([4, 8], FP32), tensor([4, 1], FP32)).shape == (4, 8)
    with pytest.raises(OpError, match="do not broadcast"):
        rule("add", tensor([4, 8]), tensor([3, 8]))
    with pytest.raises(OpError, match="cannot mix Tensor and Tile"):
        rule("add", tensor([4, 8]), tile([4, 8]))
    with pytest.raises(OpError, match="integer operands"):
        rule("and_", tensor([4], FP32), tensor([4], FP32))
    with pytest.raises(OpError, match="tile op"):
        rule("addc", tensor([4, 8]), tensor([4, 8]), tensor([4, 8]))
    with pytest.raises(OpError, match="scratch"):
        rule("rem", tile([4, 8], INT32), tile([4, 8], INT32), tile([4, 4], INT32))
    with pytest.raises(OpError, match="high_precision"):
        rule("div", tile([4, 8]), lit(2.0), attr(True))
    with pytest.raises(OpError, match="takes no scratch"):
        rule("rsqrt", tensor([4, 8]), tmp=tile([4, 8]))
    # the tile forms of log / recip take high_precision= (real pl.tile.log signature);
    # rsqrt's tile form takes a scratch tile instead
    assert rule("log", tile([4, 8]), attr(True)).shape == (4, 8)
    assert rule("recip", tile([4, 8]), attr(True)).shape == (4, 8)
    with pytest.raises(OpError, match=r"high_precision= is a tensor-level option of pl\.rsqrt"):
        rule("rsqrt", tile([4, 8]), attr(True))
    assert rule("part_add", tensor([4, 8], INT16), tensor([4, 8], INT32)).dtype == INT32
