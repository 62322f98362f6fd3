"""MX block-scaled matmul (pl.matmul_mx / _acc / _bias) against an independent numpy
formulation (per-32-group block products weighted by the outer product of the two
groups' scales), the GM packing of scale tensors (MX_A_ZZ / MX_B_NN) against a
reshape/transpose reference, and the located errors of misuse."""
from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

import pypto.language as pl
from pypto.errors import InvalidOperationError
from pypto.ir.equal import assert_structural_equal
from pypto.ir.printer import print_program
from pypto.ops.mx import mx_logical, mx_packed
from tests.frontend.frontend_helpers import assert_at

M, K, N = 32, 128, 64
G = K // 32
E8M0 = ml_dtypes.float8_e8m0fnu
E4M3 = ml_dtypes.float8_e4m3fn
FP4 = ml_dtypes.float4_e2m1fn


def reference(a: np.ndarray, a_codes: np.ndarray, b: np.ndarray, b_codes: np.ndarray
              ) -> np.ndarray:
    """sum over groups g of (A_g @ B_g) * 2**(sa[:, g] - 127) * 2**(sb[g, :] - 127)."""
    out = np.zeros((a.shape[0], b.shape[1]), np.float64)
    for g in range(a.shape[1] // 32):
        block = a[:, 32 * g:32 * g + 32].astype(np.float64) @ b[32 * g:32 * g + 32].astype(
            np.float64)
        scale = np.ldexp(1.0, a_codes[:, g].astype(np.int64) - 127)[:, None] * \
            np.ldexp(1.0, b_codes[g, :].astype(np.int64) - 127)[None, :]
        out += block * scale
    return out.astype(np.float32)


def pack_a(codes: np.ndarray) -> np.ndarray:
    m, g = codes.shape
    return codes.reshape(m // 16, 16, g // 2, 2).transpose(0, 2, 1, 3).reshape(m, g)


def pack_b(codes: np.ndarray) -> np.ndarray:
    g, n = codes.shape
    return codes.reshape(g // 2, 2, n // 16, 16).transpose(2, 0, 3, 1).reshape(g, n)


def inputs(seed: int = 0):
    rng = np.random.default_rng(seed)
    a = rng.integers(-3, 4, (M, K)).astype(E4M3)
    b = rng.integers(-3, 4, (K, N)).astype(E4M3)
    a_codes = rng.integers(124, 131, (M, G)).astype(np.uint8)
    b_codes = rng.integers(124, 131, (G, N)).astype(np.uint8)
    return a, a_codes, b, b_codes


def test_the_packings_match_the_reshape_reference_and_invert():
    rng = np.random.default_rng(1)
    for shape, layout, pack in (((32, 8), "MX_A_ZZ", pack_a), ((8, 48), "MX_B_NN", pack_b)):
        logical = rng.integers(0, 255, shape).astype(np.uint8)
        packed = pack(logical)
        np.testing.assert_array_equal(mx_packed(logical, layout), packed)
        np.testing.assert_array_equal(mx_logical(packed, layout), logical)


@pl.program
class MxMatmul:
    @pl.function(type=pl.FunctionType.InCore)
    def kernel(self, a: pl.Tensor[[M, K], pl.FP8E4M3FN],
               a_scale: pl.Tensor[[M, G], pl.FP8E8M0, pl.MX_A_ZZ],
               b: pl.Tensor[[K, N], pl.FP8E4M3FN],
               b_scale: pl.Tensor[[G, N], pl.FP8E8M0, pl.MX_B_NN],
               bias: pl.Tensor[[1, N], pl.FP32],
               out: pl.Out[pl.Tensor[[M, N], pl.FP32]], out_acc: pl.Out[pl.Tensor[[M, N], pl.FP32]],
               out_bias: pl.Out[pl.Tensor[[M, N], pl.FP32]]
               ) -> tuple[pl.Tensor[[M, N], pl.FP32], pl.Tensor[[M, N], pl.FP32],
                          pl.Tensor[[M, N], pl.FP32]]:
        lhs = pl.move(pl.load(a, [0, 0], [M, K], target_memory=pl.Mem.Mat),
                      target_memory=pl.Mem.Left)
        lhs_s = pl.move(pl.load(a_scale, [0, 0], [M, G], target_memory=pl.Mem.Mat),
                        target_memory=pl.Mem.LeftScale)
        rhs = pl.move(pl.load(b, [0, 0], [K, N], target_memory=pl.Mem.Mat),
                      target_memory=pl.Mem.Right)
        rhs_s = pl.move(pl.load(b_scale, [0, 0], [G, N], target_memory=pl.Mem.Mat),
                        target_memory=pl.Mem.RightScale)
        base = pl.matmul_mx(lhs, lhs_s, rhs, rhs_s)
        out = pl.store(base, [0, 0], out)
        acc = pl.matmul_mx_acc(base, lhs, lhs_s, rhs, rhs_s)
        out_acc = pl.store(acc, [0, 0], out_acc)
        bias_t = pl.move(pl.load(bias, [0, 0], [1, N], target_memory=pl.Mem.Mat),
                         target_memory=pl.Mem.Bias)
        biased = pl.matmul_mx_bias(lhs, lhs_s, rhs, rhs_s, bias_t)
        out_bias = pl.store(biased, [0, 0], out_bias)
        return out, out_acc, out_bias

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[M, K], pl.FP8E4M3FN],
             a_scale: pl.Tensor[[M, G], pl.FP8E8M0, pl.MX_A_ZZ],
             b: pl.Tensor[[K, N], pl.FP8E4M3FN],
             b_scale: pl.Tensor[[G, N], pl.FP8E8M0, pl.MX_B_NN],
             bias: pl.Tensor[[1, N], pl.FP32],
             out: pl.Out[pl.Tensor[[M, N], pl.FP32]], out_acc: pl.Out[pl.Tensor[[M, N], pl.FP32]],
             out_bias: pl.Out[pl.Tensor[[M, N], pl.FP32]]
             ) -> tuple[pl.Tensor[[M, N], pl.FP32], pl.Tensor[[M, N], pl.FP32],
                        pl.Tensor[[M, N], pl.FP32]]:
        out, out_acc, out_bias = self.kernel(a, a_scale, b, b_scale, bias, out, out_acc,
                                             out_bias)
        return out, out_acc, out_bias


def test_matmul_mx_family_matches_the_group_formulation_exactly():
    a, a_codes, b, b_codes = inputs()
    bias = np.linspace(-4, 4, N, dtype=np.float32).reshape(1, N)
    outs = [np.zeros((M, N), np.float32) for _ in range(3)]
    MxMatmul(a, pack_a(a_codes).view(E8M0), b, pack_b(b_codes).view(E8M0), bias, *outs,
             config=pl_a5())
    want = reference(a, a_codes, b, b_codes)
    assert np.abs(want).max() > 1  # the scales matter: codes 124..130 are 2**-3 .. 2**3
    np.testing.assert_array_equal(outs[0], want)
    np.testing.assert_array_equal(outs[1], 2 * want)
    np.testing.assert_array_equal(outs[2], want + bias)


def pl_a5():
    import pypto.sim as sim
    return sim.SimConfig(platform="a5sim")


def test_the_scales_are_read_logically_whatever_the_packing():
    # the same logical scales, packed: a kernel reading the logical codes back agrees
    a, a_codes, b, b_codes = inputs(2)
    outs = [np.zeros((M, N), np.float32) for _ in range(3)]
    wrong = a_codes.view(E8M0)  # unpacked bytes handed in as if packed
    MxMatmul(a, wrong, b, pack_b(b_codes).view(E8M0), np.zeros((1, N), np.float32), *outs,
             config=pl_a5())
    assert not np.array_equal(outs[0], reference(a, a_codes, b, b_codes))


@pl.program
class Fp4Lhs:
    @pl.function(type=pl.FunctionType.InCore)
    def kernel(self, a: pl.Tensor[[M, K], pl.FP4],
               a_scale: pl.Tensor[[M, G], pl.FP8E8M0, pl.MX_A_ZZ],
               b: pl.Tensor[[K, N], pl.FP8E4M3FN],
               b_scale: pl.Tensor[[G, N], pl.UINT8, pl.MX_B_NN],
               out: pl.Out[pl.Tensor[[M, N], pl.FP32]]) -> pl.Tensor[[M, N], pl.FP32]:
        lhs8 = pl.cast(pl.load(a, [0, 0], [M, K]), pl.FP8E4M3FN)
        lhs = pl.move(pl.move(lhs8, target_memory=pl.Mem.Mat), target_memory=pl.Mem.Left)
        lhs_s = pl.move(pl.load(a_scale, [0, 0], [M, G], target_memory=pl.Mem.Mat),
                        target_memory=pl.Mem.LeftScale)
        rhs = pl.move(pl.load(b, [0, 0], [K, N], target_memory=pl.Mem.Mat),
                      target_memory=pl.Mem.Right)
        rhs_s = pl.move(pl.load(b_scale, [0, 0], [G, N], target_memory=pl.Mem.Mat),
                        target_memory=pl.Mem.RightScale)
        out = pl.store(pl.matmul_mx(lhs, lhs_s, rhs, rhs_s), [0, 0], out)
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[M, K], pl.FP4],
             a_scale: pl.Tensor[[M, G], pl.FP8E8M0, pl.MX_A_ZZ],
             b: pl.Tensor[[K, N], pl.FP8E4M3FN],
             b_scale: pl.Tensor[[G, N], pl.UINT8, pl.MX_B_NN],
             out: pl.Out[pl.Tensor[[M, N], pl.FP32]]) -> pl.Tensor[[M, N], pl.FP32]:
        out = self.kernel(a, a_scale, b, b_scale, out)
        return out


def test_an_fp4_lhs_cast_to_fp8_and_uint8_scale_codes():
    rng = np.random.default_rng(3)
    fp4_values = np.array([0, .5, 1, 1.5, 2, 3, 4, 6, -.5, -1, -1.5, -2, -3, -4, -6])
    a = rng.choice(fp4_values, (M, K)).astype(FP4)
    _, a_codes, b, b_codes = inputs(3)
    out = np.zeros((M, N), np.float32)
    Fp4Lhs(a, pack_a(a_codes).view(E8M0), b, pack_b(b_codes), out, config=pl_a5())
    np.testing.assert_array_equal(out, reference(a.astype(E4M3), a_codes, b, b_codes))


def test_the_mx_kernel_round_trips_through_the_text_form():
    prog = MxMatmul.compile().program
    text = print_program(prog)
    assert "pl.matmul_mx_acc(base, lhs, lhs_s, rhs, rhs_s)" in text
    assert "pl.Tensor[[32, 4], pl.FP8E8M0, pl.MX_A_ZZ]" in text
    assert_structural_equal(pl.parse(text), prog)



@pl.program
class Fp4NoCast:
    @pl.function(type=pl.FunctionType.InCore)
    def kernel(self, a: pl.Tensor[[M, K], pl.FP4],
               a_scale: pl.Tensor[[M, G], pl.FP8E8M0, pl.MX_A_ZZ],
               b: pl.Tensor[[K, N], pl.FP8E4M3FN],
               b_scale: pl.Tensor[[G, N], pl.FP8E8M0, pl.MX_B_NN],
               out: pl.Out[pl.Tensor[[M, N], pl.FP32]]) -> pl.Tensor[[M, N], pl.FP32]:
        lhs = pl.move(pl.load(a, [0, 0], [M, K], target_memory=pl.Mem.Mat),
                      target_memory=pl.Mem.Left)
        lhs_s = pl.move(pl.load(a_scale, [0, 0], [M, G], target_memory=pl.Mem.Mat),
                        target_memory=pl.Mem.LeftScale)
        rhs = pl.move(pl.load(b, [0, 0], [K, N], target_memory=pl.Mem.Mat),
                      target_memory=pl.Mem.Right)
        rhs_s = pl.move(pl.load(b_scale, [0, 0], [G, N], target_memory=pl.Mem.Mat),
                        target_memory=pl.Mem.RightScale)
        out = pl.store(pl.matmul_mx(lhs, lhs_s, rhs, rhs_s), [0, 0], out)  # ERR:fp4
        return out


@pl.program
class ScaleNotMoved:
    @pl.function(type=pl.FunctionType.InCore)
    def kernel(self, a: pl.Tensor[[M, K], pl.FP8E4M3FN],
               a_scale: pl.Tensor[[M, G], pl.FP8E8M0, pl.MX_A_ZZ],
               b: pl.Tensor[[K, N], pl.FP8E4M3FN],
               b_scale: pl.Tensor[[G, N], pl.FP8E8M0, pl.MX_B_NN],
               out: pl.Out[pl.Tensor[[M, N], pl.FP32]]) -> pl.Tensor[[M, N], pl.FP32]:
        lhs = pl.move(pl.load(a, [0, 0], [M, K], target_memory=pl.Mem.Mat),
                      target_memory=pl.Mem.Left)
        lhs_s = pl.load(a_scale, [0, 0], [M, G], target_memory=pl.Mem.Mat)
        rhs = pl.move(pl.load(b, [0, 0], [K, N], target_memory=pl.Mem.Mat),
                      target_memory=pl.Mem.Right)
        rhs_s = pl.move(pl.load(b_scale, [0, 0], [G, N], target_memory=pl.Mem.Mat),
                        target_memory=pl.Mem.RightScale)
        out = pl.store(pl.matmul_mx(lhs, lhs_s, rhs, rhs_s), [0, 0], out)  # ERR:space
        return out


@pl.program
class MxLoadToVec:
    @pl.function(type=pl.FunctionType.InCore)
    def kernel(self, a_scale: pl.Tensor[[M, G], pl.FP8E8M0, pl.MX_A_ZZ],
               out: pl.Out[pl.Tensor[[M, G], pl.FP8E8M0]]) -> pl.Tensor[[M, G], pl.FP8E8M0]:
        s = pl.load(a_scale, [0, 0], [M, G])  # ERR:mat
        out = pl.store(s, [0, 0], out)
        return out


@pl.program
class MxSlice:
    @pl.function(type=pl.FunctionType.InCore)
    def kernel(self, a_scale: pl.Tensor[[M, G], pl.FP8E8M0, pl.MX_A_ZZ],
               out: pl.Out[pl.Tensor[[16, G], pl.FP8E8M0]]) -> pl.Tensor[[16, G], pl.FP8E8M0]:
        s = pl.slice(a_scale, [16, G], [0, 0])  # ERR:view
        out = pl.store(s, [0, 0], out)
        return out


@pl.program
class ScaleFromVec:
    @pl.function(type=pl.FunctionType.InCore)
    def kernel(self, s: pl.Tensor[[M, G], pl.FP8E8M0],
               out: pl.Out[pl.Tensor[[M, G], pl.FP8E8M0]]) -> pl.Tensor[[M, G], pl.FP8E8M0]:
        t = pl.move(pl.load(s, [0, 0], [M, G]), target_memory=pl.Mem.LeftScale)  # ERR:from
        out = pl.store(t, [0, 0], out)
        return out


@pytest.mark.parametrize("program, match, tag, token", [
    (Fp4NoCast, "requires lhs dtype FP8E4M3FN, got pl.FP4; native FP4 matmul is not "
     "supported", "fp4", "lhs, lhs_s"),
    (ScaleNotMoved, "'lhs_scale' of pl.matmul_mx must be in LeftScale, got Mat", "space",
     "lhs_s, rhs"),
    (MxLoadToVec, "requires target_memory=pl.Mem.Mat", "mat", "pl.load"),
    (MxSlice, "an MX-layout tensor (MX_A_ZZ) takes no subviews", "view", "a_scale, [16"),
    (ScaleFromVec, "into LeftScale needs a tile in Mat", "from", "pl.load(s"),
])
def test_mx_misuse_is_located(program, match, tag, token):
    with pytest.raises(InvalidOperationError) as info:
        program.compile()
    assert match in info.value.message, info.value.message
    assert_at(info.value, __file__, tag, token)
