"""A `pl.tile.slice` of an on-chip tile is a view of its storage: `pl.matmul_acc` into
a column window of a larger Acc tile accumulates into that tile (the MAD writes L0C in
place), which is how a split-N matmul fills one accumulator window by window."""
import numpy as np

import pypto.language as pl
from tests.ops.helpers import impl

M, K, N, NT, KT = 32, 128, 64, 32, 32
TILES = N // NT


@pl.program
class AccWindows:
    @pl.function(type=pl.FunctionType.InCore)
    def windows(self, a: pl.Tensor[[M, K], pl.FP32], b: pl.Tensor[[K, N], pl.FP32],
                c: pl.Out[pl.Tensor[[M, N], pl.FP32]]) -> pl.Tensor[[M, N], pl.FP32]:
        acc = pl.tile.create([M, N], pl.FP32, target_memory=pl.MemorySpace.Acc)
        for t in pl.range(TILES):
            for k0 in pl.range(0, K, KT):
                a_l1 = pl.load(a, offsets=[0, k0], shapes=[M, KT],
                               target_memory=pl.MemorySpace.Mat)
                b_l1 = pl.load(b, offsets=[k0, t * NT], shapes=[KT, NT],
                               target_memory=pl.MemorySpace.Mat)
                a_l0 = pl.move(a_l1, target_memory=pl.MemorySpace.Left)
                b_l0 = pl.move(b_l1, target_memory=pl.MemorySpace.Right)
                win = pl.tile.slice(acc, [M, NT], [0, t * NT])
                win = pl.matmul_acc(win, a_l0, b_l0, init_cond=(k0 == 0))
        return pl.store(acc, offsets=[0, 0], output_tensor=c)

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[M, K], pl.FP32], b: pl.Tensor[[K, N], pl.FP32],
             c: pl.Out[pl.Tensor[[M, N], pl.FP32]]) -> pl.Tensor[[M, N], pl.FP32]:
        return self.windows(a, b, c)


def test_matmul_acc_into_a_window_fills_the_parent_acc_tile():
    rng = np.random.default_rng(0)
    a = rng.standard_normal((M, K), dtype=np.float32)
    b = rng.standard_normal((K, N), dtype=np.float32)
    c = np.full((M, N), np.nan, np.float32)
    AccWindows(a, b, c)
    np.testing.assert_allclose(c, a @ b, rtol=1e-4, atol=1e-4)


def test_a_plain_accumulator_is_not_written_in_place():
    acc = np.ones((4, 4), np.float32)
    out = impl("matmul_acc", acc, np.eye(4, dtype=np.float32), np.eye(4, dtype=np.float32))
    assert (acc == 1).all() and np.array_equal(out, acc + np.eye(4))
