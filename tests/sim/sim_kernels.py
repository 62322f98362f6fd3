"""Kernels the simulator tests run (module level: the frontend reads their source)."""
import pypto.language as pl

N = pl.dynamic("N")

# --- memory model -------------------------------------------------------------------


@pl.jit
def writes_its_input(x: pl.Tensor[[64, 64], pl.FP32], y: pl.Out[pl.Tensor[[64, 64], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="clobber"):
        t = pl.add(x[:, :], 1.0)
        x[:, :] = t
        y[:, :] = t
    return y


@pl.jit
def half_written(x: pl.Tensor[[64, 64], pl.FP32], y: pl.Out[pl.Tensor[[64, 64], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="top_half"):
        y[0:32, :] = pl.mul(x[0:32, :], 2.0)
    return y


@pl.jit
def half_written_int(x: pl.Tensor[[16, 32], pl.INT32], y: pl.Out[pl.Tensor[[16, 32], pl.INT32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="top_half"):
        y[0:8, :] = x[0:8, :]
    return y


@pl.jit
def reads_its_output(x: pl.Tensor[[32, 32], pl.FP32], y: pl.Out[pl.Tensor[[32, 32], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="rmw"):
        y[:, :] = pl.add(y[:, :], x[:, :])
    return y


@pl.jit
def accumulate(x: pl.Tensor[[32, 32], pl.FP32], y: pl.InOut[pl.Tensor[[32, 32], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="acc"):
        y[:, :] = pl.add(y[:, :], x[:, :])
    return y


@pl.jit
def assign_is_not_write(x: pl.Tensor[[32, 32], pl.FP32], y: pl.Out[pl.Tensor[[32, 32], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="rebind"):
        y = pl.add(x[:, :], 1.0)
    return y


@pl.jit
def bf16_scale(x: pl.Tensor[[32, 64], pl.BF16], y: pl.Out[pl.Tensor[[32, 64], pl.BF16]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="scale"):
        y[:, :] = pl.mul(x[:, :], 3.0)
    return y


@pl.jit
def scratch_tensor(x: pl.Tensor[[32, 32], pl.FP32], y: pl.Out[pl.Tensor[[32, 32], pl.FP32]]):
    tmp = pl.create_tensor([32, 32], pl.FP32)
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="produce"):
        tmp[0:16, :] = pl.add(x[0:16, :], 1.0)
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="consume"):
        y[:, :] = tmp[:, :]
    return y


# --- dynamic shapes and valid regions -------------------------------------------------


@pl.jit
def tail_rows(x: pl.Tensor[[N, 128], pl.FP32], y: pl.Out[pl.Tensor[[N, 128], pl.FP32]]):
    x.bind_dynamic(0, N)
    y.bind_dynamic(0, N)
    n = pl.tensor.dim(x, 0)
    for r in pl.range(0, n, 32):
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="rows"):
            rows = pl.min(32, n - r)
            t = pl.slice(x, [32, 128], [r, 0], valid_shape=[rows, 128])
            y[r:r + 32, :] = pl.add(t, 1.0)
    return y


@pl.jit
def masked_row_max(x: pl.Tensor[[32, 128], pl.FP32], cols: pl.Scalar[pl.INDEX],
                   y: pl.Out[pl.Tensor[[32, 1], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="rowmax"):
        t = x[:, :]
        t = pl.set_validshape(t, 32, cols)
        t = pl.fillpad(t, pad_value=pl.PadValue.min)
        y[:, :] = pl.row_max(t)
    return y


@pl.jit
def unpadded_row_sum(x: pl.Tensor[[32, 128], pl.FP32], cols: pl.Scalar[pl.INDEX],
                     y: pl.Out[pl.Tensor[[32, 1], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="rowsum"):
        t = pl.slice(x, [32, 128], [0, 0], valid_shape=[32, cols])
        y[:, :] = pl.row_sum(t)
    return y


# --- bounds -------------------------------------------------------------------------


@pl.jit
def oob_slice(x: pl.Tensor[[128, 64], pl.FP32], y: pl.Out[pl.Tensor[[128, 64], pl.FP32]]):
    for r in pl.range(0, 160, 32):
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="rows"):
            t = pl.slice(x, [32, 64], [r, 0])
            y[0:32, :] = t
    return y


@pl.jit
def oob_assemble(x: pl.Tensor[[128, 64], pl.FP32], y: pl.Out[pl.Tensor[[128, 64], pl.FP32]]):
    for r in pl.range(0, 128, 32):
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="shifted"):
            t = pl.slice(x, [32, 64], [r, 0])
            y[r + 16:r + 48, :] = t
    return y


@pl.jit
def oob_spmd(x: pl.Tensor[[256, 64], pl.FP32], y: pl.Out[pl.Tensor[[256, 64], pl.FP32]]):
    for b in pl.spmd(5, name_hint="blocks"):
        t = x[b * 64:b * 64 + 64, :]
        y[b * 64:b * 64 + 64, :] = t
    return y


@pl.jit
def oob_load_store(x: pl.Tensor[[64, 64], pl.FP32], off: pl.Scalar[pl.INDEX],
                   y: pl.Out[pl.Tensor[[64, 64], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="tiles"):
        t = pl.load(x, [off, 0], [32, 64])
        pl.store(t, [off, 0], y)
    return y


@pl.jit
def oob_store(x: pl.Tensor[[64, 64], pl.FP32], off: pl.Scalar[pl.INDEX],
              y: pl.Out[pl.Tensor[[64, 64], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="tiles"):
        t = pl.load(x, [0, 0], [32, 64])
        pl.store(t, [off, 0], y)
    return y


@pl.jit
def oob_read(x: pl.Tensor[[8, 8], pl.INT32], i: pl.Scalar[pl.INDEX],
             y: pl.Out[pl.Tensor[[8, 8], pl.INT32]]):
    v = pl.read(x, [i, 0])
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="copy"):
        y[:, :] = x[:, :]
    return y


@pl.jit
def oob_write(x: pl.Tensor[[8, 8], pl.INT32], i: pl.Scalar[pl.INDEX],
              y: pl.Out[pl.Tensor[[8, 8], pl.INT32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="poke"):
        y[:, :] = x[:, :]
        pl.write(y, [i, 3], 7)
    return y


# --- budget and work limits ---------------------------------------------------------


@pl.jit
def too_big_tile(x: pl.Tensor[[64, 4096], pl.FP32], y: pl.Out[pl.Tensor[[64, 4096], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="huge"):
        t = x[:, :]
        y[:, :] = pl.exp(t)
    return y


@pl.jit
def endless(x: pl.Tensor[[8, 8], pl.FP32], n: pl.Scalar[pl.INDEX],
            y: pl.Out[pl.Tensor[[8, 8], pl.FP32]]):
    for i in pl.range(0, n):
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="step"):
            y[:, :] = x[:, :]
    return y


@pl.jit
def huge_scratch(x: pl.Tensor[[8, 8], pl.FP32], y: pl.Out[pl.Tensor[[8, 8], pl.FP32]]):
    big = pl.create_tensor([65536, 65536], pl.FP32)
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="copy"):
        y[:, :] = x[:, :]
    return y


@pl.jit
def dyn_pair(a: pl.Tensor[[N, 16], pl.FP32], b: pl.Tensor[[N, 16], pl.FP32],
             y: pl.Out[pl.Tensor[[N, 16], pl.FP32]]):
    a.bind_dynamic(0, N)
    b.bind_dynamic(0, N)
    y.bind_dynamic(0, N)
    n = pl.tensor.dim(a, 0)
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="sum"):
        y[0:16, :] = pl.add(a[0:16, :], b[0:16, :])
    return y


# --- tasks, graph, SPMD ----------------------------------------------------------------


@pl.jit
def three_regions(x: pl.Tensor[[64, 32], pl.FP32], y: pl.Out[pl.Tensor[[64, 32], pl.FP32]]):
    tmp = pl.create_tensor([64, 32], pl.FP32)
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="top"):
        tmp[0:32, :] = pl.mul(x[0:32, :], 2.0)
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="bottom"):
        tmp[32:64, :] = pl.mul(x[32:64, :], 3.0)
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="combine"):
        y[:, :] = pl.add(tmp[:, :], 1.0)
    return y


@pl.jit
def block_ids(x: pl.Tensor[[8, 16], pl.FP32], y: pl.Out[pl.Tensor[[8, 16], pl.FP32]]):
    for b in pl.spmd(8, name_hint="ids"):
        row = x[b:b + 1, :]
        y[b:b + 1, :] = pl.add(pl.mul(row, 0.0), pl.cast(b, pl.FP32))
    return y


@pl.jit
def block_count(x: pl.Tensor[[4, 16], pl.FP32], y: pl.Out[pl.Tensor[[4, 16], pl.FP32]]):
    with pl.spmd(4, name_hint="count"):
        b = pl.tile.get_block_idx()
        n = pl.tile.get_block_num()
        y[b:b + 1, :] = pl.add(pl.mul(x[b:b + 1, :], 0.0), pl.cast(n * 10 + b, pl.FP32))
    return y


@pl.jit
def barrier_sum(x: pl.Tensor[[8, 64], pl.FP32], part: pl.Out[pl.Tensor[[8, 64], pl.FP32]],
                y: pl.Out[pl.Tensor[[8, 64], pl.FP32]]):
    for b in pl.spmd(8, name_hint="reduce", sync_start=True):
        part[b:b + 1, :] = pl.mul(x[b:b + 1, :], 2.0)
        pl.system.syncall()
        everyone = part[:, :]
        y[b:b + 1, :] = pl.col_sum(everyone)
    return y


@pl.jit
def barrier_mismatch(x: pl.Tensor[[4, 16], pl.FP32], y: pl.Out[pl.Tensor[[4, 16], pl.FP32]]):
    for b in pl.spmd(4, name_hint="uneven"):
        y[b:b + 1, :] = x[b:b + 1, :]
        if b < 2:
            pl.system.syncall()
    return y


@pl.jit
def explicit_deps(x: pl.Tensor[[16, 16], pl.FP32], y: pl.Out[pl.Tensor[[16, 16], pl.FP32]],
                  z: pl.Out[pl.Tensor[[16, 16], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="first") as t0:
        y[:, :] = pl.add(x[:, :], 1.0)
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="second", deps=[t0]):
        z[:, :] = pl.add(x[:, :], 2.0)
    return y


# --- control flow ----------------------------------------------------------------------


@pl.jit
def while_carry(x: pl.Tensor[[16, 16], pl.FP32], y: pl.Out[pl.Tensor[[16, 16], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="w"):
        a = x[:, :]
        for (i, acc) in pl.while_(init_values=(0, a)):
            pl.cond(i < 5)
            acc2 = pl.add(acc, 1.0)
            i2 = i + 1
            i_out, acc_out = pl.yield_(i2, acc2)
        y[:, :] = acc_out
    return y


@pl.jit
def branch_on_data(x: pl.Tensor[[16, 16], pl.FP32], flag: pl.Tensor[[1, 1], pl.INT32],
                   y: pl.Out[pl.Tensor[[16, 16], pl.FP32]]):
    f = pl.read(flag, [0, 0])
    if f > 0:
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="pos"):
            y[:, :] = pl.add(x[:, :], 1.0)
    else:
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="neg"):
            y[:, :] = pl.sub(x[:, :], 1.0)
    return y


@pl.jit
def early_break(x: pl.Tensor[[64, 16], pl.FP32], y: pl.Out[pl.Tensor[[64, 16], pl.FP32]]):
    for i in pl.range(4):
        if i == 2:
            break
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="row"):
            y[i * 16:i * 16 + 16, :] = pl.add(x[i * 16:i * 16 + 16, :], 1.0)
    return y


@pl.jit
def loop_carry(x: pl.Tensor[[16, 16], pl.FP32], y: pl.Out[pl.Tensor[[16, 16], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="acc"):
        acc = pl.full([16, 16], pl.FP32, 0.0)
        for k, (a,) in pl.range(0, 4, init_values=(acc,)):
            a2 = pl.add(a, x[:, :])
            a_out = pl.yield_(a2)
        y[:, :] = a_out
    return y


# --- numerics ----------------------------------------------------------------------------


@pl.jit
def softmax(x: pl.Tensor[[256, 128], pl.FP32], y: pl.Out[pl.Tensor[[256, 128], pl.FP32]]):
    for r in pl.parallel(0, 256, 64):
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="softmax_rows"):
            t = x[r:r + 64, :]
            mx = pl.row_max(t)
            e = pl.exp(pl.row_expand_sub(t, mx))
            s = pl.row_sum(e)
            y[r:r + 64, :] = pl.row_expand_div(e, s)
    return y


@pl.jit
def gemm(a: pl.Tensor[[256, 256], pl.BF16], b: pl.Tensor[[256, 128], pl.BF16],
         c: pl.Out[pl.Tensor[[256, 128], pl.FP32]]):
    for i in pl.parallel(0, 256, 128):
        for j in pl.parallel(0, 128, 64):
            with pl.at(level=pl.Level.CORE_GROUP, name_hint="gemm_tile"):
                acc = pl.matmul(a[i:i + 128, 0:64], b[0:64, j:j + 64], out_dtype=pl.FP32)
                for k in pl.range(64, 256, 64):
                    acc = pl.matmul_acc(acc, a[i:i + 128, k:k + 64], b[k:k + 64, j:j + 64])
                c[i:i + 128, j:j + 64] = acc
    return c


@pl.jit
def rms_norm(x: pl.Tensor[[64, 1024], pl.FP32], w: pl.Tensor[[1, 1024], pl.FP32],
             y: pl.Out[pl.Tensor[[64, 1024], pl.FP32]]):
    for r in pl.parallel(0, 64, 16):
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="rms"):
            ss = pl.full([16, 1], pl.FP32, 0.0)
            for c in pl.range(0, 1024, 256):
                t = x[r:r + 16, c:c + 256]
                ss = pl.add(ss, pl.row_sum(pl.mul(t, t)))
            inv = pl.rsqrt(pl.add(pl.mul(ss, 1.0 / 1024), 1e-6))
            for c in pl.range(0, 1024, 256):
                t = x[r:r + 16, c:c + 256]
                y[r:r + 16, c:c + 256] = pl.col_expand_mul(pl.row_expand_mul(t, inv),
                                                           w[:, c:c + 256])
    return y


@pl.jit
def per_iteration_tiles(x: pl.Tensor[[128, 16], pl.FP32],
                        acc: pl.InOut[pl.Tensor[[16, 16], pl.FP32]],
                        y: pl.Out[pl.Tensor[[128, 16], pl.FP32]]):
    # each iteration: a fresh tile handed to orchestration, used twice, then dropped;
    # `acc` is read and rewritten whole by every iteration
    for i in pl.range(8):
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="make"):
            t = pl.add(x[i * 16:i * 16 + 16, :], 1.0)
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="use"):
            y[i * 16:i * 16 + 16, :] = pl.mul(t, 2.0)
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="accum"):
            acc[:, :] = pl.add(acc[:, :], t)
    return y
