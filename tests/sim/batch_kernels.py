"""Kernels for the batching cases (module level: the frontend reads their source).

`tests/sim/test_speed_equivalence.py` runs every one of them batched and block by block
and compares outputs bit for bit and traces field for field; `test_batch_cases.py`
checks which of them batch and why the others do not.
"""
import pypto.language as pl

M, N, TM, TN = 256, 512, 64, 128

# --- sequential loops around a launch ---------------------------------------------------


@pl.jit
def range_inner(x: pl.Tensor[[M, N], pl.FP32], y: pl.Out[pl.Tensor[[M, N], pl.FP32]]):
    """The inner loop sequential, as pypto-lib writes them: independent tiles."""
    for i in pl.parallel(0, M, TM):
        for j in pl.range(0, N, TN):
            with pl.at(level=pl.Level.CORE_GROUP, name_hint="add"):
                y[i:i + TM, j:j + TN] = pl.add(x[i:i + TM, j:j + TN], 1.0)
    return y


@pl.jit
def range_only(x: pl.Tensor[[M, N], pl.FP32], y: pl.Out[pl.Tensor[[M, N], pl.FP32]]):
    for i in pl.range(0, M, TM):
        for j in pl.range(0, N, TN):
            with pl.at(level=pl.Level.CORE_GROUP, name_hint="scale"):
                y[i:i + TM, j:j + TN] = pl.mul(x[i:i + TM, j:j + TN], 2.0)
    return y


@pl.jit
def pipeline_rows(x: pl.Tensor[[M, N], pl.FP32], y: pl.Out[pl.Tensor[[M, N], pl.FP32]]):
    for i in pl.pipeline(0, M, TM, stage=2):
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="exp_rows"):
            y[i:i + TM, :] = pl.exp(x[i:i + TM, :])
    return y


@pl.jit
def range_chain(y: pl.InOut[pl.Tensor[[8, 64], pl.FP32]]):
    """Each iteration reads the row the previous one wrote: NOT independent."""
    for i in pl.range(0, 7, 1):
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="chain"):
            y[i + 1:i + 2, :] = pl.add(y[i:i + 1, :], 1.0)
    return y


@pl.jit
def range_overlap(x: pl.Tensor[[64, 64], pl.FP32], y: pl.InOut[pl.Tensor[[64, 64], pl.FP32]]):
    """Windows 16 rows apart, 32 rows tall: later iterations overwrite earlier ones."""
    for i in pl.range(0, 48, 16):
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="overlap"):
            y[i:i + 32, :] = pl.mul(x[i:i + 32, :], 2.0)
    return y


@pl.jit
def range_same_window(x: pl.Tensor[[4, 32, 64], pl.FP32],
                      y: pl.Out[pl.Tensor[[32, 64], pl.FP32]]):
    """Every iteration writes the same window: the last one wins."""
    for b in pl.range(0, 4, 1):
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="last_wins"):
            y[:, :] = pl.reshape(x[b:b + 1, :, :], [32, 64])
    return y
