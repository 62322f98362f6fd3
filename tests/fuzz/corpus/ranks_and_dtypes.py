# Wrong ranks and wrong dtypes: in annotations, between operands, at assignment targets.
import pypto.language as pl

N = 64
T = 16


# %% leading_unit_axis_may_be_dropped: ok
@pl.jit
def kernel(x: pl.Tensor[[4, N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="r"):
        y[0:T, :] = x[0:1, 0:T, :]
    return y


# %% rank1_into_rank2_window: PyptoError
@pl.jit
def kernel(x: pl.Tensor[[N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="r"):
        y[0:T, 0:T] = x[0:T]  # ERR
    return y


# %% scalar_index_row_into_a_2d_window: PyptoError
# (the real parser: a tensor source must have the window's rank; x[0:1, :] keeps it)
@pl.jit
def kernel(x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="r"):
        y[0:1, :] = pl.exp(x[0, :])  # ERR
    return y


# %% window_extent_mismatch: PyptoError
@pl.jit
def kernel(x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="r"):
        y[0:T, :] = x[0:2 * T, :]  # ERR
    return y


# %% dtype_mismatch_on_write: ok
# (the real parser checks no dtype on a subscript write, nor does tensor.assemble: the
# write converts to the target's dtype)
@pl.jit
def kernel(x: pl.Tensor[[N, N], pl.FP16], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="r"):
        y[0:T, :] = x[0:T, :]
    return y


# %% int_into_float_output: ok
@pl.jit
def kernel(x: pl.Tensor[[N, N], pl.INT32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="r"):
        y[0:T, :] = pl.add(x[0:T, :], 1)
    return y


# %% tensor_add_promotes_mixed_dtypes: ok
@pl.jit
def kernel(x: pl.Tensor[[N, N], pl.INT8], w: pl.Tensor[[N, N], pl.FP32],
           y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="r"):
        y[0:T, :] = pl.add(x[0:T, :], w[0:T, :])
    return y


# %% bool_tensor_arithmetic: InvalidOperationError
@pl.jit
def kernel(x: pl.Tensor[[N, N], pl.BOOL], y: pl.Out[pl.Tensor[[N, N], pl.BOOL]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="r"):
        y[0:T, :] = pl.exp(x[0:T, :])  # ERR
    return y


# %% index_dtype_tensor_is_accepted: ok
@pl.jit
def kernel(x: pl.Tensor[[N, N], pl.INDEX], y: pl.Out[pl.Tensor[[N, N], pl.INDEX]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="r"):
        y[0:T, :] = pl.add(x[0:T, :], 1)
    return y


# %% task_id_tensor: PyptoError
@pl.jit
def kernel(x: pl.Tensor[[N, N], pl.TASK_ID], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="r"):
        y[0:T, :] = pl.cast(x[0:T, :], pl.FP32)  # ERR
    return y


# GAP: the reference rejects 4-bit dtypes in-core on A2/A3; pypto-lab accepts them.
# %% fp4_in_core_on_a2a3_is_accepted: ok
@pl.jit
def kernel(x: pl.Tensor[[N, N], pl.FP4], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="r"):
        y[0:T, :] = pl.cast(x[0:T, :], pl.FP32)
    return y


# %% annotated_local_rank_mismatch: PyptoTypeError
@pl.jit
def kernel(x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="r"):
        a: pl.Tile[[T], pl.FP32] = x[0:T, :]  # ERR
        y[0:T, :] = a
    return y


# %% annotated_local_dtype_mismatch: PyptoTypeError
@pl.jit
def kernel(x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="r"):
        a: pl.Tile[[T, N], pl.FP16] = x[0:T, :]  # ERR
        y[0:T, :] = a
    return y


# %% rebinding_with_another_rank: PyptoError
@pl.jit
def kernel(x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="r"):
        acc = x[0:T, :]
        for k in pl.range(4):
            acc = pl.row_sum(acc)  # ERR
        y[0:T, :] = acc
    return y


# %% tensor_matmul_promotes_mixed_dtypes: ok
@pl.jit
def kernel(a: pl.Tensor[[N, N], pl.BF16], b: pl.Tensor[[N, N], pl.FP32],
           c: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="r"):
        c[0:T, 0:T] = pl.matmul(a[0:T, :], b[:, 0:T], out_dtype=pl.FP32)
    return c


# %% matmul_rank3_times_rank1: InvalidOperationError
@pl.jit
def kernel(a: pl.Tensor[[2, N, N], pl.FP32], b: pl.Tensor[[N], pl.FP32],
           c: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="r"):
        c[0:T, 0:T] = pl.matmul(a[:, 0:T, 0:T], b[0:8])  # ERR
    return c


# %% scalar_float_into_int_scalar: PyptoTypeError
@pl.jit
def kernel(x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    k: pl.Scalar[pl.INT32] = 1.5  # ERR
    return y


# %% scalar_int_float_mix: PyptoError
@pl.jit
def kernel(x: pl.Tensor[[N, N], pl.FP32], n: pl.Scalar[pl.INT32],
           y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    f = pl.const(1.5, pl.FP32)
    k = n + f  # ERR
    return y


# %% read_wrong_rank_offset: InvalidOperationError
@pl.jit
def kernel(x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    v = pl.read(x, [0, 0, 0])  # ERR
    return y


# %% write_wrong_value_kind: InvalidOperationError
@pl.jit
def kernel(x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="r"):
        pl.write(y, [0, 0], x[0:T, :])  # ERR
    return y


# %% assemble_of_a_promoted_row: ok
@pl.jit
def kernel(x: pl.Tensor[[N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="r"):
        y = pl.assemble(y, x[0:T], [0, 0])
    return y


# %% store_into_tile: InvalidOperationError
@pl.jit
def kernel(x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="r"):
        t = pl.load(x, [0, 0], [T, N])
        pl.store(t, [0, 0], t)  # ERR
    return y


# %% load_wrong_rank_shape: InvalidOperationError
@pl.jit
def kernel(x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="r"):
        t = pl.load(x, [0, 0], [T])  # ERR
        pl.store(t, [0, 0], y)
    return y


# %% cmp_bad_code: InvalidOperationError
@pl.jit
def kernel(x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="r"):
        a = x[0:T, :]
        y[0:T, :] = pl.cmp(a, a, cmp_type=9)  # ERR
    return y
