# Absurd sizes: loop bounds, tensors, tiles, block counts and compile-time arithmetic far
# past anything real. Each must end quickly in a located error, never a hang or an
# exhausted memory.
import pypto.language as pl

N = 64
T = 16
HUGE = 10 ** 12


# %% loop_bound_1e12: SimulationError
@pl.jit
def kernel(x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    for i in pl.range(HUGE):  # ERR
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="r"):
            y[0:T, :] = x[0:T, :]
    return y


# %% parallel_bound_1e12: SimulationError
@pl.jit
def kernel(x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    for i in pl.parallel(0, HUGE, 1):  # ERR
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="r"):
            y[0:T, :] = x[0:T, :]
    return y


# %% loop_bound_past_int64: SimulationError
@pl.jit
def kernel(x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    for i in pl.range(2 ** 70):  # ERR
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="r"):
            y[0:T, :] = x[0:T, :]
    return y


# %% loop_inside_region_1e12: SimulationError
@pl.jit
def kernel(x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="r"):
        acc = pl.full([T, N], pl.FP32, 0.0)
        for k in pl.range(HUGE):  # ERR
            acc = pl.add(acc, x[0:T, :])
        y[0:T, :] = acc
    return y


# %% unroll_1e12: PyptoError
@pl.jit
def kernel(x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    for i in pl.unroll(HUGE):  # ERR
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="r"):
            y[0:T, :] = x[0:T, :]
    return y


# %% unroll_1e6: PyptoError
@pl.jit
def kernel(x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    for i in pl.unroll(1000000):  # ERR
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="r"):
            y[0:T, :] = x[0:T, :]
    return y


# %% pipeline_stage_1e12: PyptoError
@pl.jit
def kernel(x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="r"):
        for c in pl.pipeline(0, N, T, stage=HUGE):
            y[0:T, c:c + T] = x[0:T, c:c + T]  # ERR
    return y


# %% spmd_blocks_1e9: PyptoError
@pl.jit
def kernel(x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    for b in pl.spmd(10 ** 9, name_hint="blocks"):  # ERR
        y[0:T, :] = x[0:T, :]
    return y


# %% spmd_submit_core_num_1e12: PyptoError
@pl.jit.incore
def body(x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    y[0:T, :] = x[0:T, :]
    return y


@pl.jit
def kernel(x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    y, tid = pl.spmd_submit(body, x, y, core_num=HUGE)  # ERR
    return y


# %% create_tensor_100GB: PyptoError
@pl.jit
def kernel(x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    big = pl.create_tensor([160000, 160000], pl.FP32)  # ERR
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="r"):
        big[0:T, 0:N] = x[0:T, :]
        y[0:T, :] = big[0:T, 0:N]
    return y


# %% create_tensor_1e24_elements: PyptoError
@pl.jit
def kernel(x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    big = pl.create_tensor([HUGE, HUGE], pl.FP32)  # ERR
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="r"):
        y[0:T, :] = x[0:T, :]
    return y


# %% create_tensor_dim_past_int64: PyptoError
@pl.jit
def kernel(x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    big = pl.create_tensor([2 ** 64, 4], pl.FP32)  # ERR
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="r"):
        y[0:T, :] = x[0:T, :]
    return y


# %% full_tile_1e10_elements: PyptoError
@pl.jit
def kernel(x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="r"):
        t = pl.full([100000, 100000], pl.FP32, 0.0)  # ERR
        y[0:T, :] = x[0:T, :]
    return y


# %% create_tile_huge: PyptoError
@pl.jit
def kernel(x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="r"):
        t = pl.create_tile([1 << 20, 1 << 20], pl.FP32)  # ERR
        y[0:T, :] = x[0:T, :]
    return y


# %% tile_over_budget: PyptoError
@pl.jit
def kernel(x: pl.Tensor[[N, 65536], pl.FP32], y: pl.Out[pl.Tensor[[N, 65536], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="r"):
        t = x[:, :]  # ERR
        y[:, :] = pl.exp(t)
    return y


# %% slice_1e12_window: PyptoError
@pl.jit
def kernel(x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="r"):
        t = pl.slice(x, [HUGE, HUGE], [0, 0])  # ERR
        y[0:T, :] = t[0:T, 0:N]
    return y


# %% load_1e12_window: PyptoError
@pl.jit
def kernel(x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="r"):
        t = pl.load(x, [0, 0], [HUGE, 16])  # ERR
        pl.store(t, [0, 0], y)
    return y


# %% reshape_1e12: PyptoError
@pl.jit
def kernel(x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    z = pl.reshape(x, [HUGE, HUGE])  # ERR
    return y


# %% power_folding_1e10_digits: PyptoError
@pl.jit
def kernel(x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    k = 10 ** 10 ** 10  # ERR
    return y


# %% shift_folding_huge: PyptoError
@pl.jit
def kernel(x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    k = 1 << HUGE  # ERR
    return y


# %% list_repeat_folding_huge: PyptoError
@pl.jit
def kernel(x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    k = [0] * HUGE  # ERR
    return y


# %% string_repeat_folding_huge: PyptoError
@pl.jit
def kernel(x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    k = "ab" * HUGE  # ERR
    return y


# %% comprehension_over_1e12: PyptoError
@pl.jit
def kernel(x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    k = [i for i in range(HUGE)]  # ERR
    return y


# %% annotation_1e12_square_compiles: ok
@pl.jit
def kernel(x: pl.Tensor[[HUGE, HUGE], pl.FP32], y: pl.Out[pl.Tensor[[HUGE, HUGE], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="r"):
        y[0:T, 0:T] = x[0:T, 0:T]
    return y


# %% static_loop_of_regions_1e6: SimulationError
@pl.jit
def kernel(x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    for i in pl.range(1000000):  # ERR
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="r"):
            y[0:T, :] = x[0:T, :]
    return y


# %% deep_expression: PyptoError
@pl.jit
def kernel(x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    n = pl.tensor.dim(x, 0)
    k = n + n + n + n + n + n + n + n + n + n + n + n + n + n + n + n + n + n + n + n + n + n + n + n + n + n + n + n + n + n + n + n + n + n + n + n + n + n + n + n + n + n + n + n + n + n + n + n + n + n + n + n + n + n + n + n + n + n + n + n + n + n + n + n + n + n + n + n + n + n + n + n + n + n + n + n + n + n + n + n + n + n + n + n + n + n + n + n + n + n + n + n + n + n + n + n + n + n + n + n + n + n + n + n + n + n + n + n + n + n + n + n + n + n + n + n + n + n + n + n + n + n + n + n + n + n + n + n + n + n + n + n + n + n + n + n + n + n + n + n + n + n + n + n + n + n + n + n + n + n + n + n + n + n + n + n + n + n + n + n + n + n + n + n + n + n + n + n + n + n + n + n + n + n + n + n + n + n + n + n + n + n + n + n + n + n + n + n + n + n + n + n + n + n + n + n + n + n + n + n + n + n + n + n + n + n + n + n + n + n + n + n
    pl.static_assert(False, "deep expressions parse")  # ERR
    return y
