"""Kernels that reach the language under another name than `pl` (each line marked
`# ERR:<tag>` is where the error must point)."""
import pypto
import pypto.language as L
import pypto.language as pl

N = 64
T = 16


@pl.jit
def aliased(x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="rows"):
        y[0:T, :] = L.exp(x[0:T, :])  # ERR:alias
    return y


@pl.jit
def through_package(x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="rows"):
        y[0:T, :] = pypto.language.exp(x[0:T, :])  # ERR:package
    return y


@pl.jit
def aliased_dtype(x: pl.Tensor[[N, N], L.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):  # ERR:ann
    return y


@pl.jit
def plain(x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="rows"):
        y[0:T, :] = pl.exp(x[0:T, :])
    return y
