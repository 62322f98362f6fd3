# Unknown ops, near-miss names, wrong namespaces, wrong arity, keyword typos and argument
# kinds an op cannot take.
import pypto.language as pl

N = 64
T = 16


# %% unknown_op: InvalidOperationError
@pl.jit
def kernel(x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="r"):
        y[0:T, :] = pl.softmax(x[0:T, :])  # ERR
    return y


# %% near_miss_op: InvalidOperationError
@pl.jit
def kernel(x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="r"):
        y[0:T, :] = pl.row_maxx(x[0:T, :])  # ERR
    return y


# %% capitalised_op: InvalidOperationError
@pl.jit
def kernel(x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="r"):
        y[0:T, :] = pl.Exp(x[0:T, :])  # ERR
    return y


# %% unknown_namespace: InvalidOperationError
@pl.jit
def kernel(x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="r"):
        y[0:T, :] = pl.vector.exp(x[0:T, :])  # ERR
    return y


# %% op_in_system_namespace: InvalidOperationError
@pl.jit
def kernel(x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="r"):
        y[0:T, :] = pl.system.exp(x[0:T, :])  # ERR
    return y


# %% no_arguments: InvalidOperationError
@pl.jit
def kernel(x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="r"):
        y[0:T, :] = pl.add()  # ERR
    return y


# %% one_too_many: InvalidOperationError
@pl.jit
def kernel(x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="r"):
        a = x[0:T, :]
        y[0:T, :] = pl.add(a, a, a)  # ERR
    return y


# %% keyword_typo: InvalidOperationError
@pl.jit
def kernel(a: pl.Tensor[[N, N], pl.BF16], b: pl.Tensor[[N, N], pl.BF16],
           c: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="r"):
        c[0:T, 0:T] = pl.matmul(a[0:T, :], b[:, 0:T], outdtype=pl.FP32)  # ERR
    return c


# %% keyword_given_twice: InvalidOperationError
@pl.jit
def kernel(x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="r"):
        a = x[0:T, :]
        y[0:T, :] = pl.add(a, a, lhs=a)  # ERR
    return y


# %% dtype_where_shape_expected: InvalidOperationError
@pl.jit
def kernel(x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="r"):
        t = pl.full(pl.FP32, [T, N], 0.0)  # ERR
        y[0:T, :] = t
    return y


# %% shape_not_a_list: InvalidOperationError
@pl.jit
def kernel(x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="r"):
        t = pl.full(T, pl.FP32, 0.0)  # ERR
        y[0:T, :] = t
    return y


# %% cast_to_not_a_dtype: InvalidOperationError
@pl.jit
def kernel(x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="r"):
        y[0:T, :] = pl.cast(x[0:T, :], "float16")  # ERR
    return y


# %% cast_bad_mode: InvalidOperationError
@pl.jit
def kernel(x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.INT32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="r"):
        y[0:T, :] = pl.cast(x[0:T, :], pl.INT32, mode="banker")  # ERR
    return y


# %% tensor_where_scalar_expected: InvalidOperationError
@pl.jit
def kernel(x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="r"):
        a = x[0:T, :]
        y[0:T, :] = pl.expands(a, a)  # ERR
    return y


# %% scalar_where_tensor_expected: InvalidOperationError
@pl.jit
def kernel(x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="r"):
        y[0:T, :] = pl.exp(1.5)  # ERR
    return y


# %% transpose_same_axis: InvalidOperationError
@pl.jit
def kernel(x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="r"):
        y[0:T, 0:T] = pl.transpose(x[0:T, 0:T], 1, 1)  # ERR
    return y


# %% transpose_axis_out_of_range: InvalidOperationError
@pl.jit
def kernel(x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="r"):
        y[0:T, 0:T] = pl.transpose(x[0:T, 0:T], 0, 5)  # ERR
    return y


# %% dim_axis_out_of_range_negative: InvalidOperationError
@pl.jit
def kernel(x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    n = pl.tensor.dim(x, -3)  # ERR
    return y


# %% reshape_negative_dim: InvalidOperationError
@pl.jit
def kernel(x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    z = pl.reshape(x, [-1])  # ERR
    return y


# %% reshape_wrong_count: InvalidOperationError
@pl.jit
def kernel(x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    z = pl.reshape(x, [N, N + 1])  # ERR
    return y


# %% row_reduction_of_scalar: InvalidOperationError
@pl.jit
def kernel(x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, 1], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="r"):
        y[0:T, :] = pl.row_sum(3.0)  # ERR
    return y


# %% row_expand_wrong_vector: InvalidOperationError
@pl.jit
def kernel(x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="r"):
        a = x[0:T, :]
        y[0:T, :] = pl.row_expand_sub(a, a)  # ERR
    return y


# %% add_shape_mismatch: InvalidOperationError
@pl.jit
def kernel(x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="r"):
        y[0:T, :] = pl.add(x[0:T, :], x[0:2 * T, :])  # ERR
    return y


# %% mul_shape_mismatch_tensors: InvalidOperationError
@pl.jit
def kernel(x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    z = pl.mul(x, pl.reshape(x, [N * N, 1]))  # ERR
    return y


# %% matmul_k_mismatch: InvalidOperationError
@pl.jit
def kernel(a: pl.Tensor[[N, N], pl.BF16], c: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="r"):
        c[0:T, 0:T] = pl.matmul(a[0:T, 0:T], a[0:2 * T, 0:T], out_dtype=pl.FP32)  # ERR
    return c


# %% matmul_rank1: InvalidOperationError
@pl.jit
def kernel(a: pl.Tensor[[N], pl.BF16], c: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="r"):
        t = pl.matmul(a[0:T], a[0:T], out_dtype=pl.FP32)  # ERR
    return c


# %% matmul_acc_bf16_accumulator: InvalidOperationError
@pl.jit
def kernel(a: pl.Tensor[[N, N], pl.BF16], c: pl.Out[pl.Tensor[[N, N], pl.BF16]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="r"):
        acc = pl.matmul(a[0:T, 0:T], a[0:T, 0:T])
        acc = pl.matmul_acc(acc, a[0:T, 0:T], a[0:T, 0:T])  # ERR
        c[0:T, 0:T] = acc
    return c


# %% sin_int: InvalidOperationError
@pl.jit
def kernel(x: pl.Tensor[[N, N], pl.INT32], y: pl.Out[pl.Tensor[[N, N], pl.INT32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="r"):
        y[0:T, :] = pl.sin(x[0:T, :])  # ERR
    return y


# %% bitwise_on_float: InvalidOperationError
@pl.jit
def kernel(x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="r"):
        a = x[0:T, :]
        y[0:T, :] = pl.and_(a, a)  # ERR
    return y


# %% tile_reduction_scratch_wrong_shape: InvalidOperationError
@pl.jit
def kernel(x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, 1], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="r"):
        t = pl.load(x, [0, 0], [T, N])
        tmp = pl.create_tile([2, 2], pl.FP32)
        pl.store(pl.row_sum(t, tmp), [0, 0], y)  # ERR
    return y


# %% tensor_reduction_with_scratch: InvalidOperationError
@pl.jit
def kernel(x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, 1], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="r"):
        y[0:T, :] = pl.row_sum(x[0:T, :], x[0:T, :])  # ERR
    return y


# %% op_value_is_callable_object: InvalidOperationError
@pl.jit
def kernel(x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="r"):
        y[0:T, :] = pl.add(x[0:T, :], pl.exp)  # ERR
    return y


# %% calling_a_dtype: InvalidOperationError
@pl.jit
def kernel(x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    v = pl.INT32(3)  # ERR
    return y


# %% calling_the_entry_recursively: InvalidOperationError
@pl.jit
def kernel(x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    y = kernel(x, y)  # ERR
    return y


# %% inline_wrong_arity: PyptoError
@pl.jit.inline
def helper(a, b):
    return pl.add(a, b)


@pl.jit
def kernel(x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="r"):
        y[0:T, :] = helper(x[0:T, :])  # ERR
    return y


# %% inline_unknown_keyword: PyptoError
@pl.jit.inline
def helper(a, b):
    return pl.add(a, b)


@pl.jit
def kernel(x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="r"):
        a = x[0:T, :]
        y[0:T, :] = helper(a, b=a, c=a)  # ERR
    return y


# %% incore_wrong_arity: PyptoError
@pl.jit.incore
def body(x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    y[0:T, :] = x[0:T, :]
    return y


@pl.jit
def kernel(x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    y, tid = pl.spmd_submit(body, x, core_num=2)  # ERR
    return y


# %% spmd_submit_keyword_typo: PyptoSyntaxError
@pl.jit.incore
def body(x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    y[0:T, :] = x[0:T, :]
    return y


@pl.jit
def kernel(x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    y, tid = pl.spmd_submit(body, x, y, core_num=2, dep=[])  # ERR
    return y


# %% spmd_submit_core_num_none: PyptoSyntaxError
@pl.jit.incore
def body(x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    y[0:T, :] = x[0:T, :]
    return y


@pl.jit
def kernel(x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    y, tid = pl.spmd_submit(body, x, y, core_num=None)  # ERR
    return y


# %% at_keyword_typo: PyptoSyntaxError
@pl.jit
def kernel(x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP, namehint="r"):  # ERR
        y[0:T, :] = x[0:T, :]
    return y


# %% range_keyword_typo: PyptoSyntaxError
@pl.jit
def kernel(x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="r"):
        acc = x[0:T, :]
        for k, (a,) in pl.range(4, init_value=(acc,)):  # ERR
            a2 = pl.yield_(a)
        y[0:T, :] = a2
    return y


# %% spmd_keyword_typo: PyptoSyntaxError
@pl.jit
def kernel(x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    for b in pl.spmd(4, namehint="b"):  # ERR
        y[b * T:b * T + T, :] = x[b * T:b * T + T, :]
    return y


# %% const_bad_dtype: PyptoSyntaxError
@pl.jit
def kernel(x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    c = pl.const(3, "int8")  # ERR
    return y


# %% dynamic_inside_kernel_is_a_compile_time_value: ok
@pl.jit
def kernel(x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    d = pl.dynamic("Q")
    return y


# %% tensor_method_call: PyptoError
@pl.jit
def kernel(x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    z = x.reshape([N * N])  # ERR
    return y
