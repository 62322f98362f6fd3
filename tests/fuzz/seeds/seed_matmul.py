"""Seed: tiled GEMM with matmul + matmul_acc over K, BF16 inputs, FP32 output."""
import pypto.language as pl

M = 64
K = 128
N = 64
TM = 32
TN = 32
TK = 64


@pl.jit
def kernel(a: pl.Tensor[[M, K], pl.BF16], b: pl.Tensor[[K, N], pl.BF16],
           c: pl.Out[pl.Tensor[[M, N], pl.FP32]]):
    for i in pl.parallel(0, M, TM):
        for j in pl.parallel(0, N, TN):
            with pl.at(level=pl.Level.CORE_GROUP, name_hint="gemm_tile"):
                acc = pl.matmul(a[i:i + TM, 0:TK], b[0:TK, j:j + TN], out_dtype=pl.FP32)
                for k in pl.range(TK, K, TK):
                    acc = pl.matmul_acc(acc, a[i:i + TM, k:k + TK], b[k:k + TK, j:j + TN])
                c[i:i + TM, j:j + TN] = acc
    return c
