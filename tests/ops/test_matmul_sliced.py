"""A batched matmul whose widened operands pass `WIDEN_LIMIT` is computed a slice of
batch axes at a time (a batched run's rhs can be a view of a whole weight tensor); the
result must be bit-identical to the product of the whole batch at once."""
import ml_dtypes
import numpy as np
import pytest

import pypto.ops.matmul as mm

BF16 = np.dtype(ml_dtypes.bfloat16)


def _both(monkeypatch, lhs, rhs, a_trans=False, b_trans=False):
    whole = mm._mm(lhs, rhs, a_trans, b_trans)
    calls = []
    real = mm._whole_product

    def counted(*args):
        calls.append(args[0].shape)
        return real(*args)

    monkeypatch.setattr(mm, "WIDEN_LIMIT", 4096)
    monkeypatch.setattr(mm, "_whole_product", counted)
    sliced = mm._mm(lhs, rhs, a_trans, b_trans)
    return whole, sliced, calls


@pytest.mark.parametrize("dtype", [np.int8, BF16, np.float32])
def test_sliced_product_is_bit_identical(monkeypatch, dtype):
    rng = np.random.default_rng(11)
    if dtype is np.int8:
        lhs = rng.integers(-128, 128, (4, 1, 16, 64), dtype=np.int8)
        weights = rng.integers(-128, 128, (4, 3, 64, 32), dtype=np.int8)
    else:
        lhs = rng.standard_normal((4, 1, 16, 64)).astype(dtype)
        weights = rng.standard_normal((4, 3, 64, 32)).astype(dtype)
    whole, sliced, calls = _both(monkeypatch, lhs, weights)
    assert len(calls) > 1, "the product was not sliced"
    assert sliced.shape == whole.shape == (4, 3, 16, 32)
    assert sliced.dtype == whole.dtype
    np.testing.assert_array_equal(sliced.view(np.uint8), whole.view(np.uint8))


def test_sliced_product_with_transposes_and_a_strided_view(monkeypatch):
    rng = np.random.default_rng(5)
    big = rng.integers(-128, 128, (6, 40, 96), dtype=np.int8)
    rhs = big[:, 8:40, ::2]  # a strided window of a larger weight, as a batched run makes
    lhs = rng.integers(-128, 128, (6, 32, 16), dtype=np.int8)
    whole, sliced, calls = _both(monkeypatch, lhs, rhs, a_trans=True, b_trans=False)
    assert len(calls) == 6
    np.testing.assert_array_equal(sliced, whole)
    assert sliced.dtype == np.int32
