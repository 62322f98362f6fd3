# Missing or wrong returns and misplaced scopes.
import pypto.language as pl

N = 64
T = 16


# %% inline_without_return_used: PyptoError
@pl.jit.inline
def helper(a):  # ERR
    b = pl.exp(a)


@pl.jit
def kernel(x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="r"):
        y[0:T, :] = helper(x[0:T, :])
    return y


# %% return_of_undefined: UndefinedNameError
@pl.jit
def kernel(x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="r"):
        y[0:T, :] = x[0:T, :]
    return z  # ERR


# %% return_inside_region: PyptoError
@pl.jit
def kernel(x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="r"):
        y[0:T, :] = x[0:T, :]
        return y  # ERR


# %% return_inside_loop: PyptoError
@pl.jit
def kernel(x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    for r in pl.range(0, N, T):
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="r"):
            y[r:r + T, :] = x[r:r + T, :]
        return y  # ERR
    return y


# %% return_style_kernel_returns_a_region_value: ok
@pl.jit
def kernel(x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="r"):
        t = pl.exp(x[0:T, :])
    return t


# %% compute_outside_region: PyptoError
@pl.jit
def kernel(x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    y[0:T, :] = pl.exp(x[0:T, :])  # ERR
    return y


# %% spmd_inside_at: ScopeError
@pl.jit
def kernel(x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="r"):
        for b in pl.spmd(4):  # ERR
            y[b * T:b * T + T, :] = x[b * T:b * T + T, :]
    return y


# GAP: the reference rejects pl.create_tensor inside an InCore region; pypto-lab makes it
# an on-chip buffer.
# %% create_tensor_in_region_is_a_buffer: ok
@pl.jit
def kernel(x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="r"):
        tmp = pl.create_tensor([T, N], pl.FP32)
        y[0:T, :] = x[0:T, :]
    return y


# %% spmd_submit_in_region: ScopeError
@pl.jit.incore
def body(x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    y[0:T, :] = x[0:T, :]
    return y


@pl.jit
def kernel(x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="r"):
        y, tid = pl.spmd_submit(body, x, y, core_num=2)  # ERR
    return y


# %% get_block_idx_in_orchestration_is_zero: ok
@pl.jit
def kernel(x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    b = pl.tile.get_block_idx()
    return y


# %% cond_outside_while: PyptoSyntaxError
@pl.jit
def kernel(x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="r"):
        pl.cond(True)  # ERR
    return y


# %% syncall_outside_spmd_is_a_no_op: ok
@pl.jit
def kernel(x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    pl.system.syncall()
    return y


# %% scope_without_level: ScopeError
@pl.jit
def kernel(x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    with pl.at():  # ERR
        y[0:T, :] = x[0:T, :]
    return y


# %% level_is_not_a_level: PyptoError
@pl.jit
def kernel(x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    with pl.at(level=3):  # ERR
        y[0:T, :] = x[0:T, :]
    return y


# %% with_two_items: PyptoError
@pl.jit
def kernel(x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP), pl.at(level=pl.Level.CORE_GROUP):  # ERR
        y[0:T, :] = x[0:T, :]
    return y


# %% manual_scope_in_region: PyptoError
@pl.jit
def kernel(x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="r"):
        with pl.manual_scope():  # ERR
            y[0:T, :] = x[0:T, :]
    return y


# %% break_outside_loop_body_region: PyptoError
@pl.jit
def kernel(x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    for i in pl.parallel(4):
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="r"):
            y[0:T, :] = x[0:T, :]
        break  # ERR
    return y


# %% yield_in_plain_loop: PyptoSyntaxError
@pl.jit
def kernel(x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="r"):
        a = x[0:T, :]
        for k in pl.range(4):
            b = pl.yield_(a)  # ERR
    return y


# %% if_on_a_tensor: PyptoError
@pl.jit
def kernel(x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    if x:  # ERR
        pass
    return y


# %% while_without_cond: PyptoSyntaxError
@pl.jit
def kernel(x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="r"):
        for (i,) in pl.while_(init_values=(0,)):
            i2 = i + 1  # ERR
            i_out = pl.yield_(i2)
    return y


# %% while_cond_without_argument: PyptoSyntaxError
@pl.jit
def kernel(x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="r"):
        for (i,) in pl.while_(init_values=(0,)):
            pl.cond()  # ERR
            i_out = pl.yield_(i + 1)
    return y


# %% yield_changes_the_carry_type: PyptoTypeError
@pl.jit
def kernel(x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="r"):
        acc = x[0:T, :]
        for k, (a,) in pl.range(4, init_values=(acc,)):
            a_out = pl.yield_(pl.row_sum(a))  # ERR
        y[0:T, :] = a_out
    return y


# %% implicit_carry_changes_type: PyptoTypeError
@pl.jit
def kernel(x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="r"):
        acc = x[0:T, :]
        for k in pl.range(4):
            acc = pl.row_sum(acc)  # ERR
        y[0:T, :] = acc
    return y


# %% infinite_while: SimulationError
@pl.jit
def kernel(x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="r"):
        for (i,) in pl.while_(init_values=(0,)):  # ERR
            pl.cond(i >= 0)
            i_out = pl.yield_(i + 1)
        y[0:T, :] = x[0:T, :]
    return y
