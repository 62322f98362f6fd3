"""Kernels of tiles with valid shapes that run batched (`pypto.sim.batch.masks`,
`mask_windows`, `rules`), traced too; `test_speed_equivalence.py` runs each of them
batched and block by block. Written the way pypto-lib's DeepSeek hc_pre writes them."""
from __future__ import annotations

import pypto.language as pl


@pl.jit
def row_gates(x: pl.Tensor[[16, 512], pl.FP32], w: pl.Tensor[[8, 512], pl.FP32],
              y: pl.Out[pl.Tensor[[16, 8], pl.FP32]]):
    """hc_pre's gate: one block per row; its 8-row windows hold one valid row (those of
    the last blocks reach past the tensor, their valid row does not), dotted with the
    weight rows by row sums, the sums assembled into a column, transposed into a row of
    which the valid part is stored."""
    for task in pl.spmd(16, name_hint="row_gates"):
        dot = pl.tile.full([8, 8], dtype=pl.FP32, value=0.0)
        for kb in pl.range(2):
            k0 = kb * 256
            xc = pl.load(x, [task, k0], [8, 256], valid_shape=[1, 256],
                         target_memory=pl.MemorySpace.Vec)
            w0 = pl.load(w, [0, k0], [8, 256], valid_shape=[1, 256],
                         target_memory=pl.MemorySpace.Vec)
            w1 = pl.load(w, [1, k0], [8, 256], valid_shape=[1, 256],
                         target_memory=pl.MemorySpace.Vec)
            tmp = pl.tile.create([8, 256], dtype=pl.FP32, target_memory=pl.MemorySpace.Vec)
            c0 = pl.row_sum(pl.mul(xc, w0), tmp)
            c1 = pl.row_sum(pl.mul(xc, w1), tmp)
            r0 = pl.set_validshape(pl.reshape(c0, [1, 8]), 1, 1)
            r1 = pl.set_validshape(pl.reshape(c1, [1, 8]), 1, 1)
            v = pl.tile.full([8, 8], dtype=pl.FP32, value=0.0)
            v0 = pl.tile.assemble(v, r0, [0, 0])
            v1 = pl.tile.assemble(v0, r1, [1, 0])
            dot = pl.add(dot, v1)
        row = pl.transpose(dot, axis1=0, axis2=1)
        pl.store(pl.set_validshape(row, 1, 8), [task, 0], y)
    return y


@pl.jit
def gate_softmax(m: pl.Tensor[[32, 16], pl.FP32], inv: pl.Tensor[[32, 1], pl.FP32],
                 y: pl.Out[pl.Tensor[[32, 4], pl.FP32]]):
    """comb_sinkhorn's softmax: 8-wide tiles of which 4 columns are valid, padded with
    the minimum before a row max and with zeros after it; the valid columns stored."""
    for ob in pl.spmd(4, name_hint="gate_softmax"):
        t0 = ob * 8
        g = pl.load(m, [t0, 4], [8, 8], valid_shape=[8, 4], target_memory=pl.MemorySpace.Vec)
        iv = pl.load(inv, [t0, 0], [8, 1], target_memory=pl.MemorySpace.Vec)
        base = pl.load(m, [0, 8], [1, 8], target_memory=pl.MemorySpace.Vec)
        scaled = pl.mul(pl.row_expand_mul(g, iv), 0.5)
        row = pl.add(scaled, pl.col_expand(scaled, base))
        row_p = pl.fillpad(row, pad_value=pl.PadValue.min)
        tmp = pl.create_tile([8, 8], dtype=pl.FP32, target_memory=pl.MemorySpace.Vec)
        e = pl.exp(pl.row_expand_sub(row_p, pl.row_max(row_p, tmp)))
        soft = pl.add(pl.row_expand_div(e, pl.row_sum(e, tmp)), 1e-6)
        eff = pl.fillpad(pl.set_validshape(soft, 8, 4), pad_value=pl.PadValue.zero)
        out = pl.div(eff, pl.add(eff, 1.0))
        pl.store(pl.set_validshape(out, 8, 4), [t0, 0], y)
    return y


@pl.jit
def tail_valid_rows(x: pl.Tensor[[100, 64], pl.FP32], y: pl.Out[pl.Tensor[[100, 64], pl.FP32]],
                    z: pl.Out[pl.Tensor[[112, 64], pl.FP32]]):
    """A valid shape set per block (each column's last tile has 4 rows, so the batch
    does not split): its valid part is stored, and assembled into a zeroed tile that is
    stored whole - traced, each block's accesses and copies are its own extent's."""
    for c in pl.parallel(0, 64, 32):
        for r in pl.parallel(0, 112, 16):
            with pl.at(level=pl.Level.CORE_GROUP, name_hint="tail_valid"):
                rows = pl.min(16, 100 - r)
                t = pl.load(x, [r, c], [16, 32], valid_shape=[rows, 32],
                            target_memory=pl.MemorySpace.Vec)
                s = pl.set_validshape(pl.exp(t), rows, 32)
                pl.store(s, [r, c], y)
                v = pl.tile.full([16, 32], dtype=pl.FP32, value=0.0)
                v = pl.tile.assemble(v, s, [0, 0])
                pl.store(v, [r, c], z)
    return y, z


@pl.jit
def tail_fillpad(x: pl.Tensor[[100, 64], pl.FP32], y: pl.Out[pl.Tensor[[7, 64], pl.FP32]]):
    """The pad of the last tile (the maximum) replaced by zeros before a column sum."""
    for b in pl.parallel(7):
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="tail_fill"):
            r = b * 16
            rows = pl.min(16, 100 - r)
            t = pl.slice(x, [16, 64], [r, 0], valid_shape=[rows, 64],
                         pad_value=pl.PadValue.max)
            y[b:b + 1, :] = pl.col_sum(pl.fillpad(t, pad_value=pl.PadValue.zero))
    return y


@pl.jit
def tail_linear(x: pl.Tensor[[40, 512], pl.FP32], w: pl.Tensor[[32, 512], pl.FP32],
                y: pl.Out[pl.Tensor[[48, 32], pl.FP32]]):
    """hc_pre's linear: 16-row tiles over 40 rows (the last has 8 valid) times 24 valid
    rows of a 32-row weight, K in two chunks accumulated; the products carry no valid
    shape (their operands' tiles are of other shapes), so they are stored whole."""
    for task in pl.spmd(3, name_hint="tail_linear"):
        t0 = task * 16
        rows = pl.min(16, 40 - t0)
        acc = pl.create_tensor([16, 32], dtype=pl.FP32)
        for kb in pl.range(2):
            k0 = kb * 256
            xc = pl.slice(x, [16, 256], [t0, k0], valid_shape=[rows, 256])
            wc = pl.slice(w, [32, 256], [0, k0], valid_shape=[24, 256])
            if kb == 0:
                acc = pl.matmul(xc, wc, b_trans=True, out_dtype=pl.FP32)
            else:
                acc = pl.matmul_acc(acc, xc, wc, b_trans=True)
        y = pl.assemble(y, acc, [t0, 0])
    return y


@pl.jit
def gate_sigmoid(m: pl.Tensor[[32, 16], pl.FP32], y: pl.Out[pl.Tensor[[32, 4], pl.FP32]]):
    """split_pre_post's gate: a sigmoid by `recip` of 4 valid columns of 8."""
    for ob in pl.spmd(4, name_hint="gate_sigmoid"):
        t0 = ob * 8
        g = pl.load(m, [t0, 0], [8, 8], valid_shape=[8, 4], target_memory=pl.MemorySpace.Vec)
        sig = pl.recip(pl.add(pl.exp(pl.neg(g)), 1.0))
        pl.store(pl.set_validshape(pl.add(sig, 1e-6), 8, 4), [t0, 0], y)
    return y


@pl.jit
def tail_chain(x: pl.Tensor[[112, 64], pl.FP32], y: pl.Out[pl.Tensor[[112, 64], pl.FP32]]):
    """A chain written into its windows whose last op meets a partial tile: the write
    keeps the rows past the valid ones, so no op of the chain may be computed in the
    destination windows (`tag_flow.guarded_places`)."""
    for c in pl.parallel(0, 64, 32):
        for r in pl.parallel(0, 112, 16):
            with pl.at(level=pl.Level.CORE_GROUP, name_hint="tail_chain"):
                rows = pl.min(16, 100 - r)
                t = pl.slice(x, [16, 32], [r, c], valid_shape=[rows, 32])
                y[r:r + 16, c:c + 32] = pl.add(pl.mul(x[r:r + 16, c:c + 32], 2.0), t)
    return y


@pl.jit
def int_linear(q: pl.Tensor[[16, 128], pl.INT8], w: pl.Tensor[[128, 64], pl.INT8],
               y: pl.Out[pl.Tensor[[16, 64], pl.INT32]]):
    """The indexer's int8 projection: 4 valid rows of a 16-row tile (the same in every
    block), times each block's columns of the weight, accumulated in int32."""
    for ot in pl.spmd(2, name_hint="int_linear"):
        o0 = ot * 32
        acc = pl.create_tensor([16, 32], dtype=pl.INT32)
        for kb in pl.range(2):
            k0 = kb * 64
            qt = pl.slice(q, [16, 64], [0, k0], valid_shape=[4, 64])
            wt = w[k0:k0 + 64, o0:o0 + 32]
            if kb == 0:  # noqa: SIM108 - a run-time branch of the kernel
                acc = pl.matmul(qt, wt, out_dtype=pl.INT32)
            else:
                acc = pl.matmul_acc(acc, qt, wt)
        y[0:16, o0:o0 + 32] = acc
    return y


@pl.jit
def bf16_rows(x: pl.Tensor[[64, 64], pl.BF16], y: pl.Out[pl.Tensor[[64, 64], pl.BF16]]):
    """Narrow floats with a valid shape: 8-row windows of 2 valid rows, scaled and
    stored (their valid rows only)."""
    for t in pl.spmd(32, name_hint="bf16_rows"):
        r0 = t * 2
        xt = pl.load(x, [r0, 0], [8, 64], valid_shape=[2, 64], target_memory=pl.MemorySpace.Vec)
        pl.store(pl.mul(pl.add(xt, 1.0), 0.5), [r0, 0], y)
    return y
