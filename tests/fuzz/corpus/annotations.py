# Bad parameter annotations: rejected when the module is imported ("definition") or when
# the kernel compiles; either way located in the user's file.
import pypto.language as pl

N = 64
T = 16
M = pl.dynamic("M")


# %% shape_not_a_list: definition
@pl.jit
def kernel(x: pl.Tensor[N, pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):  # ERR
    return y


# %% missing_dtype: definition
@pl.jit
def kernel(x: pl.Tensor[[N, N]], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):  # ERR
    return y


# %% dtype_is_a_string: PyptoTypeError
@pl.jit
def kernel(x: pl.Tensor[[N, N], "float32"], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):  # ERR
    return y


# %% negative_dim: PyptoTypeError
@pl.jit
def kernel(x: pl.Tensor[[-N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):  # ERR
    return y


# %% float_dim: PyptoTypeError
@pl.jit
def kernel(x: pl.Tensor[[1.5, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):  # ERR
    return y


# %% string_dim: PyptoTypeError
@pl.jit
def kernel(x: pl.Tensor[["M", N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):  # ERR
    return y


# %% scalar_of_not_a_dtype: PyptoTypeError
@pl.jit
def kernel(x: pl.Tensor[[N, N], pl.FP32], n: pl.Scalar[pl.Tensor],  # ERR
           y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    return y


# %% tile_of_not_a_dtype: PyptoTypeError
@pl.jit.incore
def kernel(x: pl.Tile[[T, T], pl.Level], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):  # ERR
    return y


# %% inout_scalar: PyptoTypeError
@pl.jit
def kernel(x: pl.Tensor[[N, N], pl.FP32], n: pl.InOut[pl.Scalar[pl.INT32]],  # ERR
           y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    return y


# %% out_of_out: PyptoTypeError
@pl.jit
def kernel(x: pl.Tensor[[N, N], pl.FP32],
           y: pl.Out[pl.Out[pl.Tensor[[N, N], pl.FP32]]]):  # ERR
    return y


# %% annotation_is_none: PyptoTypeError
@pl.jit
def kernel(x: None, y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):  # ERR
    return y


# %% string_annotation_is_a_bare_tensor: ok
@pl.jit
def kernel(x: "pl.Tensor[[N, N], pl.FP32]", y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    return y


# %% missing_annotation: PyptoError
@pl.jit
def kernel(x, y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):  # ERR
    return y


# %% varargs: UnsupportedFeatureError
@pl.jit
def kernel(*xs):  # ERR
    return xs


# %% keyword_only_parameter: UnsupportedFeatureError
@pl.jit
def kernel(x: pl.Tensor[[N, N], pl.FP32], *, y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):  # ERR
    return y


# %% dynamic_with_bad_name: definition
Q = pl.dynamic("not a name")  # ERR


@pl.jit
def kernel(x: pl.Tensor[[Q, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    return y


# %% dynamic_arith_unbound: PyptoError
@pl.jit
def kernel(x: pl.Tensor[[M * M, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):  # ERR
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="r"):
        y[0:T, :] = x[0:T, :]
    return y


# %% dynamic_dim_read_with_tensor_dim: ok
@pl.jit
def kernel(x: pl.Tensor[[M, N], pl.FP32], y: pl.Out[pl.Tensor[[M, N], pl.FP32]]):
    n = pl.tensor.dim(x, 0)
    for r in pl.range(0, n, T):
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="r"):
            y[r:r + T, :] = x[r:r + T, :]
    return y


# %% bind_dynamic_on_scalar: PyptoTypeError
@pl.jit
def kernel(x: pl.Tensor[[M, N], pl.FP32], n: pl.Scalar[pl.INDEX],
           y: pl.Out[pl.Tensor[[M, N], pl.FP32]]):
    n.bind_dynamic(0, M)  # ERR
    return y


# %% bind_dynamic_axis_out_of_range: PyptoTypeError
@pl.jit
def kernel(x: pl.Tensor[[M, N], pl.FP32], y: pl.Out[pl.Tensor[[M, N], pl.FP32]]):
    x.bind_dynamic(5, M)  # ERR
    return y


# %% jit_unknown_option: definition
@pl.jit(autoscope=True)  # ERR
def kernel(x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    return y
