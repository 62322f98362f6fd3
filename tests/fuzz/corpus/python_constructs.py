# Non-`pl` Python inside kernels: every construct is a located user error naming it.
# Cases sit at different depths (orchestration body, loop body, region, inline helper).
import pypto.language as pl

N = 64
T = 16
FLAG = 1


# %% class_in_region: UnsupportedFeatureError
@pl.jit
def kernel(x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="r"):
        class Helper:  # ERR
            scale = 2.0
        y[0:T, :] = x[0:T, :]
    return y


# %% lambda_as_op: UnsupportedFeatureError
@pl.jit
def kernel(x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="r"):
        f = lambda v: pl.exp(v)  # ERR
        y[0:T, :] = f(x[0:T, :])
    return y


# %% lambda_call_inline: UnsupportedFeatureError
@pl.jit
def kernel(x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="r"):
        y[0:T, :] = (lambda v: v)(x[0:T, :])  # ERR
    return y


# %% try_in_loop: UnsupportedFeatureError
@pl.jit
def kernel(x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    for r in pl.range(0, N, T):
        try:  # ERR
            with pl.at(level=pl.Level.CORE_GROUP, name_hint="r"):
                y[r:r + T, :] = x[r:r + T, :]
        finally:
            pass
    return y


# %% try_star: UnsupportedFeatureError
@pl.jit
def kernel(x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    try:  # ERR
        pass
    except* ValueError:
        pass
    return y


# %% global_in_region: UnsupportedFeatureError
@pl.jit
def kernel(x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="r"):
        global FLAG  # ERR
        y[0:T, :] = x[0:T, :]
    return y


# %% yield_statement: UnsupportedFeatureError
@pl.jit
def kernel(x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    yield x  # ERR
    return y


# %% yield_from: UnsupportedFeatureError
@pl.jit
def kernel(x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    m = yield from [1, 2]  # ERR
    return y


# %% async_def_await: UnsupportedFeatureError
@pl.jit
async def kernel(x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    m = await x  # ERR
    return y


# %% async_for: UnsupportedFeatureError
@pl.jit
async def kernel(x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    async for i in x:  # ERR
        pass
    return y


# %% async_with: UnsupportedFeatureError
@pl.jit
async def kernel(x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    async with pl.at(level=pl.Level.CORE_GROUP):  # ERR
        y[0:T, :] = x[0:T, :]
    return y


# %% walrus_in_slice: UnsupportedFeatureError
@pl.jit
def kernel(x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="r"):
        y[0:T, :] = x[(r := 0):T, :]  # ERR
    return y


# %% walrus_in_if: UnsupportedFeatureError
@pl.jit
def kernel(x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    n = pl.tensor.dim(x, 0)
    if (m := n) > 0:  # ERR
        pass
    return y


# %% starred_assignment: PyptoError
@pl.jit
def kernel(x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    a, *rest = [1, 2, 3]  # ERR
    return y


# %% starred_assignment_tensor: PyptoError
@pl.jit
def kernel(x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="r"):
        *head, tail = x[0:T, :]  # ERR
    return y


# %% starred_call_runtime: UnsupportedFeatureError
@pl.jit
def kernel(x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="r"):
        a = x[0:T, :]
        y[0:T, :] = pl.add(*a)  # ERR
    return y


# %% double_star_call: UnsupportedFeatureError
@pl.jit
def kernel(x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="r"):
        a = x[0:T, :]
        y[0:T, :] = pl.exp(**a)  # ERR
    return y


# %% fstring_runtime_value_formats_the_type: ok
@pl.jit
def kernel(x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    n = pl.tensor.dim(x, 0)
    with pl.at(level=pl.Level.CORE_GROUP, name_hint=f"rows_{n}"):
        y[0:T, :] = x[0:T, :]
    return y


# %% fstring_as_value: PyptoError
@pl.jit
def kernel(x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="r"):
        y[0:T, :] = pl.add(x[0:T, :], f"{N}")  # ERR
    return y


# %% set_comprehension: UnsupportedFeatureError
@pl.jit
def kernel(x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    rows = {r for r in range(4)}  # ERR
    return y


# %% dict_comprehension_in_region: UnsupportedFeatureError
@pl.jit
def kernel(x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="r"):
        parts = {k: x[k:k + 1, :] for k in range(2)}  # ERR
    return y


# %% list_comprehension_outside_deps: UnsupportedFeatureError
@pl.jit
def kernel(x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="r"):
        parts = [pl.exp(x[k:k + 1, :]) for k in range(2)]  # ERR
    return y


# %% generator_expression: UnsupportedFeatureError
@pl.jit
def kernel(x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    g = (i for i in range(3))  # ERR
    return y


# %% decorated_nested_def: UnsupportedFeatureError
@pl.jit
def kernel(x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    @pl.jit.inline
    def helper(v):  # ERR
        return v
    return y


# %% nested_def_in_loop: UnsupportedFeatureError
@pl.jit
def kernel(x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    for r in pl.range(4):
        def step(v):  # ERR
            return v
    return y


# %% nested_async_def: UnsupportedFeatureError
@pl.jit
def kernel(x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    async def step(v):  # ERR
        return v
    return y


# %% nested_class_in_inline: UnsupportedFeatureError
@pl.jit.inline
def helper(v):
    class Box:  # ERR
        pass
    return v


@pl.jit
def kernel(x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="r"):
        y[0:T, :] = helper(x[0:T, :])
    return y


# %% match_statement: UnsupportedFeatureError
@pl.jit
def kernel(x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    match N:  # ERR
        case 64:
            pass
    return y


# %% nonlocal_in_kernel: UnsupportedFeatureError
def make():
    scale = 2.0

    @pl.jit
    def kernel(x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
        nonlocal scale  # ERR
        return y
    return kernel


kernel = make()


# %% with_open: PyptoSyntaxError
@pl.jit
def kernel(x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    with open("data.bin") as fh:  # ERR
        pass
    return y


# %% import_in_region: UnsupportedFeatureError
@pl.jit
def kernel(x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="r"):
        import numpy as np  # ERR
        y[0:T, :] = x[0:T, :]
    return y


# %% raise_in_if: UnsupportedFeatureError
@pl.jit
def kernel(x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    n = pl.tensor.dim(x, 0)
    if n > 0:
        raise ValueError("positive")  # ERR
    return y


# %% del_tensor: UnsupportedFeatureError
@pl.jit
def kernel(x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    del x  # ERR
    return y


# %% natural_while_true: PyptoError
@pl.jit
def kernel(x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    while True:  # ERR
        pass
    return y


# %% print_tile: UnsupportedFeatureError
@pl.jit
def kernel(x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="r"):
        print(x[0:T, :])  # ERR
    return y


# %% numpy_call: PyptoError
import numpy as np


@pl.jit
def kernel(x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="r"):
        y[0:T, :] = np.exp(x[0:T, :])  # ERR
    return y


# %% method_on_tile: PyptoError
@pl.jit
def kernel(x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="r"):
        y[0:T, :] = x[0:T, :].sum()  # ERR
    return y


# %% attribute_assignment: UnsupportedFeatureError
@pl.jit
def kernel(x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    y.shape = [4, 4]  # ERR
    return y


# %% ternary_on_tiles: UnsupportedFeatureError
@pl.jit
def kernel(x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    n = pl.tensor.dim(x, 0)
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="r"):
        a = x[0:T, :]
        y[0:T, :] = a if n > 3 else pl.neg(a)  # ERR
    return y


# %% bool_ops_on_tiles: PyptoError
@pl.jit
def kernel(x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="r"):
        a = x[0:T, :]
        y[0:T, :] = a and a  # ERR
    return y


# %% unary_not_on_tile: PyptoError
@pl.jit
def kernel(x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="r"):
        y[0:T, :] = not x[0:T, :]  # ERR
    return y


# %% power_of_tile: UnsupportedFeatureError
@pl.jit
def kernel(x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="r"):
        y[0:T, :] = x[0:T, :] ** 2  # ERR
    return y


# %% string_constant_value: PyptoError
@pl.jit
def kernel(x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="r"):
        y[0:T, :] = "zeros"  # ERR
    return y


# %% complex_literal: PyptoError
@pl.jit
def kernel(x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="r"):
        y[0:T, :] = pl.mul(x[0:T, :], 2j)  # ERR
    return y


# %% ellipsis_statement_is_fine: ok
@pl.jit
def kernel(x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    ...
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="r"):
        y[:, :] = x[:, :]
    return y


# %% docstring_is_fine: ok
@pl.jit
def kernel(x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    """Copy x to y."""
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="r"):
        y[:, :] = x[:, :]
    return y
