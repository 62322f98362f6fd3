"""`pl.expand_clone(src, target)` writes `src`, broadcast to the target's shape, into
the target (the real compiler lowers it to stores into the target) and returns it."""
import numpy as np
import pytest

import pypto.language as pl

B, N, K = 4, 8, 16


def program(in_shape):
    @pl.program
    class Clone:
        @pl.function(type=pl.FunctionType.InCore)
        def kernel(self, x: pl.Tensor[in_shape, pl.FP32],
                   y: pl.Out[pl.Tensor[[B, N, K], pl.FP32]]) -> pl.Tensor[[B, N, K], pl.FP32]:
            out: pl.Tensor[[B, N, K], pl.FP32] = pl.expand_clone(x, y)
            return out

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, x: pl.Tensor[in_shape, pl.FP32],
                 y: pl.Out[pl.Tensor[[B, N, K], pl.FP32]]) -> pl.Tensor[[B, N, K], pl.FP32]:
            y = self.kernel(x, y)
            return y

    return Clone


@pytest.mark.parametrize("in_shape", [[1, N, K], [B, 1, K], [B, N, 1], [B, N, K]])
def test_expand_clone_fills_the_out_parameter(in_shape):
    x = np.arange(np.prod(in_shape), dtype=np.float32).reshape(in_shape)
    y = np.full((B, N, K), np.nan, np.float32)
    program(in_shape)(x, y)
    assert np.array_equal(y, np.broadcast_to(x, (B, N, K)))
