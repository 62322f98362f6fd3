"""Kernels with (and without) the bugs the sanitizers look for.

Each buggy kernel has a twin that differs only in the fix; the tests run both."""
import pypto.language as pl

N = 64

# --- races: blocks of one SPMD task --------------------------------------------------------


@pl.jit
def spmd_overlap(x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    for b in pl.spmd(4, name_hint="blk"):
        r = b * 8  # bug: 16-row windows 8 rows apart overlap
        y[r:r + 16, :] = pl.exp(x[r:r + 16, :])
    return y


@pl.jit
def spmd_disjoint(x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    for b in pl.spmd(4, name_hint="blk"):
        r = b * 16
        y[r:r + 16, :] = pl.exp(x[r:r + 16, :])
    return y


@pl.jit
def spmd_read_other(x: pl.Tensor[[N, N], pl.FP32], y: pl.InOut[pl.Tensor[[N, N], pl.FP32]]):
    for b in pl.spmd(4, name_hint="shift"):
        r = b * 16
        nxt = ((b + 1) % 4) * 16  # bug: reads the rows the next block writes
        y[r:r + 16, :] = pl.add(y[nxt:nxt + 16, :], x[r:r + 16, :])
    return y


@pl.jit
def spmd_atomic(x: pl.Tensor[[N, N], pl.FP32], y: pl.InOut[pl.Tensor[[16, N], pl.FP32]]):
    for b in pl.spmd(4, name_hint="reduce"):
        r = b * 16
        t = pl.load(x, [r, 0], [16, N])
        pl.store(t, [0, 0], y, atomic=pl.AtomicType.Add)
    return y


@pl.jit
def spmd_atomic_mixed(x: pl.Tensor[[N, N], pl.FP32], y: pl.InOut[pl.Tensor[[16, N], pl.FP32]]):
    for b in pl.spmd(4, name_hint="reduce"):
        r = b * 16
        t = pl.load(x, [r, 0], [16, N])
        if b == 0:
            pl.store(t, [0, 0], y)  # bug: a plain store among atomic adds
        else:
            pl.store(t, [0, 0], y, atomic=pl.AtomicType.Add)
    return y


@pl.jit
def barrier_sum(x: pl.Tensor[[8, N], pl.FP32], part: pl.Out[pl.Tensor[[8, N], pl.FP32]],
                y: pl.Out[pl.Tensor[[8, N], pl.FP32]]):
    for b in pl.spmd(8, name_hint="reduce", sync_start=True):
        part[b:b + 1, :] = pl.mul(x[b:b + 1, :], 2.0)
        pl.system.syncall()  # orders every block's write before every block's read
        everyone = part[:, :]
        y[b:b + 1, :] = pl.col_sum(everyone)
    return y


@pl.jit
def barrier_missing(x: pl.Tensor[[8, N], pl.FP32], part: pl.Out[pl.Tensor[[8, N], pl.FP32]],
                    y: pl.Out[pl.Tensor[[8, N], pl.FP32]]):
    for b in pl.spmd(8, name_hint="reduce"):
        part[b:b + 1, :] = pl.mul(x[b:b + 1, :], 2.0)
        everyone = part[:, :]  # bug: no syncall between the writes and this read
        y[b:b + 1, :] = pl.col_sum(everyone)
    return y


# --- races: iterations of a pl.parallel loop ------------------------------------------------


@pl.jit
def parallel_overlap(x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    for i in pl.parallel(4):
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="row"):
            y[i * 8:i * 8 + 16, :] = pl.exp(x[i * 8:i * 8 + 16, :])  # bug: overlapping rows
    return y


@pl.jit
def parallel_disjoint(x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    for i in pl.parallel(4):
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="row"):
            y[i * 16:i * 16 + 16, :] = pl.exp(x[i * 16:i * 16 + 16, :])
    return y


@pl.jit
def range_accumulate(x: pl.Tensor[[N, N], pl.FP32], y: pl.InOut[pl.Tensor[[16, N], pl.FP32]]):
    for i in pl.range(4):  # sequential: every iteration waits for the previous one
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="acc"):
            y[:, :] = pl.add(y[:, :], x[i * 16:i * 16 + 16, :])
    return y


@pl.jit
def parallel_accumulate(x: pl.Tensor[[N, N], pl.FP32],
                        y: pl.InOut[pl.Tensor[[16, N], pl.FP32]]):
    for i in pl.parallel(4):  # bug: the iterations all update y
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="acc"):
            y[:, :] = pl.add(y[:, :], x[i * 16:i * 16 + 16, :])
    return y


# --- races: directions -----------------------------------------------------------------------


@pl.jit.incore
def overwrite_out(x: pl.Tensor[[N, N], pl.FP32], t: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    t[:, :] = pl.exp(x[:, :])
    return t


@pl.jit.incore
def overwrite_inout(x: pl.Tensor[[N, N], pl.FP32], t: pl.InOut[pl.Tensor[[N, N], pl.FP32]]):
    t[:, :] = pl.exp(x[:, :])
    return t


@pl.jit.incore
def read_into(t: pl.Tensor[[N, N], pl.FP32], x: pl.Tensor[[N, N], pl.FP32],
              y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    y[:, :] = pl.add(t[:, :], x[:, :])
    return y


@pl.jit
def war_out(x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    t = pl.create_tensor([N, N], dtype=pl.FP32, init_value=1.0)
    y = read_into(t, x, y)
    t = overwrite_out(x, t)  # bug: pl.Out, so the runtime does not wait for read_into
    return y


@pl.jit
def war_inout(x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    t = pl.create_tensor([N, N], dtype=pl.FP32, init_value=1.0)
    y = read_into(t, x, y)
    t = overwrite_inout(x, t)  # bug: InOut waits for writers only, not for the reader
    return y


@pl.jit
def war_deps(x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    t = pl.create_tensor([N, N], dtype=pl.FP32, init_value=1.0)
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="reader") as tr:
        y[:, :] = pl.add(t[:, :], x[:, :])
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="writer", deps=[tr]):
        t[:, :] = pl.exp(x[:, :])  # deps= orders the overwrite after the read
    return y


@pl.jit.incore
def write_through_in(x: pl.Tensor[[N, N], pl.FP32], t: pl.Tensor[[N, N], pl.FP32]):
    t[:, :] = pl.exp(x[:, :])  # bug: t is declared pl.In
    return t


@pl.jit
def in_written(x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    t = pl.create_tensor([N, N], dtype=pl.FP32)
    t = write_through_in(x, t)
    y = read_into(t, x, y)
    return y


@pl.jit
def no_dep(x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    t = pl.create_tensor([N, N], dtype=pl.FP32)
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="prod"):
        t[:, :] = pl.exp(x[:, :])
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="cons", no_dep_args=[t]):
        y[:, :] = pl.add(t[:, :], 1.0)  # bug: t is exempted from tracking
    return y


# --- races: manual scopes, deps=, allow_early_resolve --------------------------------------------


@pl.jit
def manual_missing(x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    t = pl.create_tensor([N, N], dtype=pl.FP32)
    with pl.manual_scope():
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="prod") as tp:
            t[:, :] = pl.exp(x[:, :])
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="cons"):  # bug: no deps=[tp]
            y[:, :] = pl.add(t[:, :], 1.0)
    return y


@pl.jit
def manual_deps(x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    t = pl.create_tensor([N, N], dtype=pl.FP32)
    with pl.manual_scope():
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="prod") as tp:
            t[:, :] = pl.exp(x[:, :])
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="cons", deps=[tp]):
            y[:, :] = pl.add(t[:, :], 1.0)
    return y


@pl.jit
def manual_via_dummy(x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    t = pl.create_tensor([N, N], dtype=pl.FP32)
    with pl.manual_scope():
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="prod") as tp:
            t[:, :] = pl.exp(x[:, :])
        join = pl.system.task_dummy(deps=[tp])
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="cons", deps=[join]):
            y[:, :] = pl.add(t[:, :], 1.0)
    return y


@pl.jit
def early_resolve(x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    t = pl.create_tensor([N, N], dtype=pl.FP32)
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="prod", allow_early_resolve=True):
        t[:, :] = pl.exp(x[:, :])
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="cons"):
        y[:, :] = pl.add(t[:, :], 1.0)
    return y


@pl.jit
def early_resolve_manual(x: pl.Tensor[[N, N], pl.FP32],
                         y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    t = pl.create_tensor([N, N], dtype=pl.FP32)
    with pl.manual_scope():
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="prod", allow_early_resolve=True):
            t[:, :] = pl.exp(x[:, :])
        # bug: early resolve lets 'cons' be staged early, but only deps= could order it
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="cons"):
            y[:, :] = pl.add(t[:, :], 1.0)
    return y


# --- uninitialized reads -------------------------------------------------------------------------


@pl.jit
def out_residue(x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="acc"):
        y[0:32, :] = pl.add(y[0:32, :], x[0:32, :])  # bug: y is pl.Out, never written
    return y


@pl.jit
def out_inout(x: pl.Tensor[[N, N], pl.FP32], y: pl.InOut[pl.Tensor[[N, N], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="acc"):
        y[0:32, :] = pl.add(y[0:32, :], x[0:32, :])
    return y


@pl.jit
def out_half_written(x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]],
                     z: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="top"):
        y[0:48, :] = pl.exp(x[0:48, :])
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="all"):
        z[:, :] = pl.add(y[:, :], 1.0)  # bug: rows 48:64 of y were never written
    return z


@pl.jit
def out_fully_written(x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]],
                      z: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="top"):
        y[0:48, :] = pl.exp(x[0:48, :])
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="bottom"):
        y[48:64, :] = pl.exp(x[48:64, :])
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="all"):
        z[:, :] = pl.add(y[:, :], 1.0)
    return z


@pl.jit
def scratch_unwritten(x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    t = pl.create_tensor([N, N], dtype=pl.FP32)  # no init_value: residue
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="use"):
        y[:, :] = pl.add(t[:, :], x[:, :])
    return y


@pl.jit
def scratch_initialised(x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    t = pl.create_tensor([N, N], dtype=pl.FP32, init_value=0.0)
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="use"):
        y[:, :] = pl.add(t[:, :], x[:, :])
    return y


@pl.jit
def tile_read_before_write(x: pl.Tensor[[N, N], pl.FP32],
                           y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="tiles"):
        acc = pl.create_tile([N, N], dtype=pl.FP32)
        xt = pl.load(x, [0, 0], [N, N])
        s = pl.add(acc, xt)  # bug: acc holds residue
        pl.store(s, [0, 0], y)
    return y


@pl.jit
def tile_written_first(x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="tiles"):
        acc = pl.create_tile([N, N], dtype=pl.FP32)
        xt = pl.load(x, [0, 0], [N, N])
        acc = pl.assemble(acc, xt, [0, 0])
        s = pl.add(acc, xt)
        pl.store(s, [0, 0], y)
    return y


@pl.jit
def tile_half_written(x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="tiles"):
        acc = pl.create_tile([N, N], dtype=pl.FP32)
        xt = pl.load(x, [0, 0], [32, N])
        acc = pl.assemble(acc, xt, [0, 0])
        pl.store(acc, [0, 0], y)  # bug: rows 32:64 of acc were never written
    return y


@pl.jit
def orch_read_out(x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    v = pl.read(y, [3, 5])  # bug: y is pl.Out and nothing wrote it yet
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="fill"):
        y[:, :] = pl.add(x[:, :], v)
    return y
