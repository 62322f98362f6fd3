"""Reductions over a tile narrowed to a valid shape read only the valid region (the
hardware's TROW*/TCOL* instructions work on the valid rows x columns, and the real
toolchain's runtime tests assert it); their result carries the narrowed valid shape,
so a store writes only the valid rows / columns."""
import numpy as np
import pytest

import pypto.language as pl
from pypto.ops.numeric import valid_shape, with_valid
from tests.ops.helpers import impl, rule, tile

M, N, VR, VC = 32, 64, 20, 50
POISON = -1000.0


def poisoned():
    """Values 10..46 in the valid [VR, VC] box, POISON everywhere else, with a few
    ties, so a reduction that reads the padding gives itself away."""
    x = (np.arange(M * N, dtype=np.float32).reshape(M, N) % 37) + 10
    x[:VR, 3] = 5.0
    x[:VR, 7] = 5.0
    x[:, VC:] = POISON
    x[VR:, :] = POISON
    return x


ROW = {"row_min": np.min, "row_max": np.max, "row_sum": np.sum, "row_prod": np.prod}
COL = {"col_min": np.min, "col_max": np.max, "col_sum": np.sum, "col_prod": np.prod}


@pytest.mark.parametrize("op", list(ROW) + list(COL))
def test_reduction_reads_the_valid_region_only(op):
    x = poisoned() / 16  # keeps row_prod finite
    args = (with_valid(x, (VR, VC)),) + ((np.empty_like(x),) if op[:3] == "row" else ())
    out = impl(op, *args)
    fn, axis = (ROW[op], 1) if op in ROW else (COL[op], 0)
    want = fn(x[:VR, :VC], axis=axis, keepdims=True)
    if axis == 1:
        np.testing.assert_allclose(out[:VR], want, rtol=1e-6)
        assert valid_shape(out) == (VR, 1)
    else:
        np.testing.assert_allclose(out[:, :VC], want, rtol=1e-6)
        assert valid_shape(out) == (1, VC)


@pytest.mark.parametrize("op, fn, axis", [("row_argmin", np.argmin, 1),
                                          ("row_argmax", np.argmax, 1),
                                          ("col_argmin", np.argmin, 0),
                                          ("col_argmax", np.argmax, 0)])
def test_arg_reductions_index_into_the_valid_region(op, fn, axis):
    x = poisoned()
    out = impl(op, with_valid(x, (VR, VC)), np.empty_like(x))
    want = np.expand_dims(fn(x[:VR, :VC], axis=axis), axis)
    got = out[:VR] if axis == 1 else out[:, :VC]
    assert out.dtype == np.int32 and np.array_equal(got, want)


def test_fully_valid_input_reduces_everything():
    x = poisoned()
    out = impl("row_min", x, np.empty_like(x))
    assert np.array_equal(out, x.min(axis=1, keepdims=True)) and valid_shape(out) == (M, 1)


def test_type_rule_keeps_the_valid_extent_of_the_other_axis():
    t = tile([M, N], valid=(VR, VC))
    assert rule("row_min", t, tile([M, N])).valid_shape == (VR, 1)
    assert rule("col_max", t).valid_shape == (1, VC)
    assert rule("row_sum", tile([M, N]), tile([M, N])).valid_shape is None


@pl.program
class RowMinValid:
    @pl.function(type=pl.FunctionType.InCore)
    def kernel(self, src: pl.Tensor[[M, N], pl.FP32],
               out: pl.InOut[pl.Tensor[[M, 1], pl.FP32]]) -> pl.Tensor[[M, 1], pl.FP32]:
        t: pl.Tile[[M, N], pl.FP32] = pl.load(src, [0, 0], [M, N], valid_shape=[VR, VC])
        tmp: pl.Tile[[M, N], pl.FP32] = pl.tile.create([M, N], dtype=pl.FP32,
                                                       target_memory=pl.MemorySpace.Vec)
        r: pl.Tile[[M, 1], pl.FP32] = pl.tile.row_min(t, tmp)
        return pl.store(r, [0, 0], out)

    @pl.function(type=pl.FunctionType.Orchestration)
    def orchestrator(self, src: pl.Tensor[[M, N], pl.FP32],
                     out: pl.InOut[pl.Tensor[[M, 1], pl.FP32]]) -> pl.Tensor[[M, 1], pl.FP32]:
        return self.kernel(src, out)


def test_kernel_stores_the_valid_rows_of_a_row_min():
    x = poisoned()
    out = np.full((M, 1), 7.0, np.float32)
    RowMinValid(x, out)
    assert np.array_equal(out[:VR, 0], x[:VR, :VC].min(axis=1))
    assert (out[VR:] == 7.0).all()  # rows past the valid shape are not stored


def test_fp16_col_sum_rounds_every_add_in_the_tiles_order():
    rng = np.random.default_rng(3)
    x = rng.standard_normal((32, 64)).astype(np.float16)

    def add(p, q):
        return (p.astype(np.float32) + q.astype(np.float32)).astype(np.float16)

    seq = x[0:1].copy()
    for i in range(1, 32):
        seq = add(seq, x[i:i + 1])
    assert np.array_equal(impl("col_sum", x), seq)
    buf, n = x.copy(), 32
    while n > 1:
        buf[:n // 2] = add(buf[0:n - n % 2:2], buf[1:n - n % 2:2])
        n //= 2
    tree = impl("col_sum", x, np.empty_like(x))
    assert np.array_equal(tree, buf[0:1])
    wide = x.astype(np.float32).sum(axis=0, keepdims=True).astype(np.float16)
    assert not np.array_equal(seq, wide)  # the rounding order shows in the bits
