# Bad subscripts and windows: negative bounds, steps, too many indices, windows past the
# end (static: compile error; dynamic: run-time fault), empty and reversed windows.
import pypto.language as pl

N = 64
T = 16
SCALARS = {"off": 60}


# %% negative_lower_bound: UnsupportedFeatureError
@pl.jit
def kernel(x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="r"):
        y[0:T, :] = x[-T:0, :]  # ERR
    return y


# %% negative_upper_bound_on_write: UnsupportedFeatureError
@pl.jit
def kernel(x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="r"):
        y[0:-1, :] = x[0:T, :]  # ERR
    return y


# %% step_on_write: UnsupportedFeatureError
@pl.jit
def kernel(x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="r"):
        y[0:2 * T:2, :] = x[0:T, :]  # ERR
    return y


# %% negative_step: UnsupportedFeatureError
@pl.jit
def kernel(x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="r"):
        y[0:T, :] = x[T:0:-1, :]  # ERR
    return y


# %% too_many_indices_on_write: PyptoTypeError
@pl.jit
def kernel(x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="r"):
        y[0:T, :, 0] = x[0:T, :]  # ERR
    return y


# %% too_many_indices_in_orchestration: PyptoTypeError
@pl.jit
def kernel(x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    v = x[0, 0, 0, 0]  # ERR
    return y


# %% static_window_past_the_end: InvalidOperationError
@pl.jit
def kernel(x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="r"):
        y[0:T, :] = x[N - 8:N + 8, :]  # ERR
    return y


# %% static_write_past_the_end: InvalidOperationError
@pl.jit
def kernel(x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="r"):
        y[N - 8:N + 8, :] = x[0:T, :]  # ERR
    return y


# %% dynamic_window_past_the_end: SimulationError
@pl.jit
def kernel(x: pl.Tensor[[N, N], pl.FP32], off: pl.Scalar[pl.INDEX],
           y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="r"):
        y[0:T, :] = x[off:off + T, :]  # ERR
    return y


# %% dynamic_write_past_the_end: SimulationError
@pl.jit
def kernel(x: pl.Tensor[[N, N], pl.FP32], off: pl.Scalar[pl.INDEX],
           y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="r"):
        y[off:off + T, :] = x[0:T, :]  # ERR
    return y


# %% loop_walks_past_the_end: SimulationError
@pl.jit
def kernel(x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    for r in pl.range(0, N + T, T):
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="r"):
            y[0:T, :] = x[r:r + T, :]  # ERR
    return y


# %% spmd_blocks_past_the_end: SimulationError
@pl.jit
def kernel(x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    for b in pl.spmd(N // T + 1, name_hint="b"):
        y[b * T:b * T + T, :] = x[b * T:b * T + T, :]  # ERR
    return y


# %% empty_window: InvalidOperationError
@pl.jit
def kernel(x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="r"):
        y[0:T, :] = x[T:T, :]  # ERR
    return y


# %% reversed_window: InvalidOperationError
@pl.jit
def kernel(x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="r"):
        y[0:T, :] = x[T:0, :]  # ERR
    return y


# %% float_bound: PyptoSyntaxError
@pl.jit
def kernel(x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="r"):
        y[0:T, :] = x[0:16.0, :]  # ERR
    return y


# %% string_index: PyptoSyntaxError
@pl.jit
def kernel(x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    v = x["row", 0]  # ERR
    return y


# %% tensor_as_index: PyptoError
@pl.jit
def kernel(x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    v = x[x, 0]  # ERR
    return y


# %% list_index: PyptoError
@pl.jit
def kernel(x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="r"):
        y[0:T, :] = x[[0, 1, 2], :]  # ERR
    return y


# %% float_scalar_index: PyptoError
@pl.jit
def kernel(x: pl.Tensor[[N, N], pl.FP32], f: pl.Scalar[pl.FP32],
           y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    v = x[f, 0]  # ERR
    return y


# %% dynamic_extent_in_region: DynamicShapeError
@pl.jit
def kernel(x: pl.Tensor[[N, N], pl.FP32], off: pl.Scalar[pl.INDEX],
           y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="r"):
        t = x[0:off, :]  # ERR
    return y


# %% slice_call_offset_negative: PyptoError
@pl.jit
def kernel(x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="r"):
        y[0:T, :] = pl.slice(x, [T, N], [-8, 0])  # ERR
    return y


# %% slice_call_zero_size: InvalidOperationError
@pl.jit
def kernel(x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="r"):
        t = pl.slice(x, [0, N], [0, 0])  # ERR
    return y


# %% slice_call_shape_offset_swapped: InvalidOperationError
@pl.jit
def kernel(x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="r"):
        y[0:T, :] = pl.slice(x, [48, 0], [T, N])  # ERR
    return y


# %% read_past_the_end: SimulationError
@pl.jit
def kernel(x: pl.Tensor[[N, N], pl.FP32], off: pl.Scalar[pl.INDEX],
           y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    v = pl.read(x, [off + 10, 0])  # ERR
    return y


# %% write_negative_index: PyptoError
@pl.jit
def kernel(x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="r"):
        y[:, :] = x[:, :]
        pl.write(y, [-1, 0], 1.0)  # ERR
    return y


# %% element_assignment: UnsupportedFeatureError
@pl.jit
def kernel(x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    y[0, 0] = 1.0  # ERR
    return y
