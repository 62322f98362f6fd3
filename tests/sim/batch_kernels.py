"""Kernels for the batching cases (module level: the frontend reads their source).

`tests/sim/test_speed_equivalence.py` runs every one of them batched and block by block
and compares outputs bit for bit and traces field for field; `test_batch_cases.py`
checks which of them batch and why the others do not.
"""
import pypto.language as pl

M, N, TM, TN = 256, 512, 64, 128

# --- sequential loops around a launch ---------------------------------------------------


@pl.jit
def range_inner(x: pl.Tensor[[M, N], pl.FP32], y: pl.Out[pl.Tensor[[M, N], pl.FP32]]):
    """The inner loop sequential, as pypto-lib writes them: independent tiles."""
    for i in pl.parallel(0, M, TM):
        for j in pl.range(0, N, TN):
            with pl.at(level=pl.Level.CORE_GROUP, name_hint="add"):
                y[i:i + TM, j:j + TN] = pl.add(x[i:i + TM, j:j + TN], 1.0)
    return y


@pl.jit
def range_only(x: pl.Tensor[[M, N], pl.FP32], y: pl.Out[pl.Tensor[[M, N], pl.FP32]]):
    for i in pl.range(0, M, TM):
        for j in pl.range(0, N, TN):
            with pl.at(level=pl.Level.CORE_GROUP, name_hint="scale"):
                y[i:i + TM, j:j + TN] = pl.mul(x[i:i + TM, j:j + TN], 2.0)
    return y


@pl.jit
def pipeline_rows(x: pl.Tensor[[M, N], pl.FP32], y: pl.Out[pl.Tensor[[M, N], pl.FP32]]):
    for i in pl.pipeline(0, M, TM, stage=2):
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="exp_rows"):
            y[i:i + TM, :] = pl.exp(x[i:i + TM, :])
    return y


@pl.jit
def range_chain(y: pl.InOut[pl.Tensor[[8, 64], pl.FP32]]):
    """Each iteration reads the row the previous one wrote: NOT independent."""
    for i in pl.range(0, 7, 1):
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="chain"):
            y[i + 1:i + 2, :] = pl.add(y[i:i + 1, :], 1.0)
    return y


@pl.jit
def range_overlap(x: pl.Tensor[[64, 64], pl.FP32], y: pl.InOut[pl.Tensor[[64, 64], pl.FP32]]):
    """Windows 16 rows apart, 32 rows tall: later iterations overwrite earlier ones."""
    for i in pl.range(0, 48, 16):
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="overlap"):
            y[i:i + 32, :] = pl.mul(x[i:i + 32, :], 2.0)
    return y


@pl.jit
def range_same_window(x: pl.Tensor[[4, 32, 64], pl.FP32],
                      y: pl.Out[pl.Tensor[[32, 64], pl.FP32]]):
    """Every iteration writes the same window: the last one wins."""
    for b in pl.range(0, 4, 1):
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="last_wins"):
            y[:, :] = pl.reshape(x[b:b + 1, :, :], [32, 64])
    return y


# --- views and reshapes ---------------------------------------------------------------------


@pl.jit
def reshape_rows(x: pl.Tensor[[M, 64], pl.FP32], y: pl.Out[pl.Tensor[[M, 64], pl.FP32]]):
    """Row statistics reshaped between [1, n] and [n, 1], as pypto-lib kernels do."""
    for i in pl.parallel(0, M, 32):
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="rows"):
            t = x[i:i + 32, :]
            s = pl.reshape(pl.row_sum(t), [1, 32])
            s2 = pl.reshape(pl.mul(s, 0.5), [32, 1])
            y[i:i + 32, :] = pl.row_expand_add(t, s2)
    return y


@pl.jit
def rmw_through_reshape(x: pl.Tensor[[4, 16], pl.FP32],
                        acc: pl.InOut[pl.Tensor[[2, 32], pl.FP32]],
                        y: pl.Out[pl.Tensor[[4, 16], pl.FP32]]):
    """Every iteration adds 1 to `acc` through a reshaped view: 4 adds, not one."""
    for i in pl.parallel(0, 4, 1):
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="rmw"):
            v = pl.reshape(acc, [4, 16])
            v[0:1, :] = pl.add(v[0:1, :], 1.0)
            y[i:i + 1, :] = x[i:i + 1, :]
    return acc, y


# --- footprints spread by the region's own loops -----------------------------------------------

HC, NB, C = 3, 4, 32


@pl.jit
def lattice_writes(x: pl.Tensor[[64, C], pl.FP32],
                   y: pl.Out[pl.Tensor[[64, HC * NB * C], pl.FP32]]):
    """Block (t0, nb) writes columns hc * NB * C + nb * C for hc in range(HC): the blocks'
    footprints interleave but never meet (mtp_projection's linear region)."""
    for t0 in pl.parallel(0, 64, 16):
        for nb in pl.parallel(0, NB, 1):
            with pl.at(level=pl.Level.CORE_GROUP, name_hint="lattice"):
                n0 = nb * C
                t = x[t0:t0 + 16, :]
                for hc in pl.range(HC):
                    c0 = hc * (NB * C) + n0
                    y[t0:t0 + 16, c0:c0 + C] = pl.mul(t, 2.0)
    return y


@pl.jit
def lattice_collides(x: pl.Tensor[[64, C], pl.FP32],
                     y: pl.InOut[pl.Tensor[[64, 8 * C], pl.FP32]]):
    """Block nb writes columns (hc + nb) * C: blocks nb and nb + 1 meet."""
    for nb in pl.parallel(0, NB, 1):
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="collide"):
            t = x[0:16, :]
            for hc in pl.range(HC):
                c0 = (hc + nb) * C
                y[0:16, c0:c0 + C] = pl.add(y[0:16, c0:c0 + C], t)
    return y


# --- loop bodies of several launches ---------------------------------------------------------


@pl.jit
def proj_residual(a: pl.Tensor[[64, 128], pl.FP32], b: pl.Tensor[[128, 256], pl.FP32],
                  r: pl.Tensor[[64, 256], pl.FP32], y: pl.Out[pl.Tensor[[64, 256], pl.FP32]]):
    """decode_back's shape: a projection region hands its tile to a residual region."""
    for ob in pl.range(256 // 64):
        o0 = ob * 64
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="proj"):
            acc = pl.matmul(a[:, :], b[:, o0:o0 + 64], out_dtype=pl.FP32)
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="residual"):
            y[:, o0:o0 + 64] = pl.add(acc, r[:, o0:o0 + 64])
    return y


@pl.jit
def two_writers(x: pl.Tensor[[64, 256], pl.FP32], y: pl.Out[pl.Tensor[[64, 256], pl.FP32]],
                z: pl.Out[pl.Tensor[[64, 256], pl.FP32]]):
    """Two launches per iteration writing two outputs; the second reads the first's."""
    for i in pl.parallel(0, 256, 64):
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="first"):
            y[:, i:i + 64] = pl.exp(x[:, i:i + 64])
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="second"):
            z[:, i:i + 64] = pl.add(y[:, i:i + 64], 1.0)
    return y, z


@pl.jit
def reads_next_iteration(x: pl.Tensor[[64, 256], pl.FP32],
                         y: pl.InOut[pl.Tensor[[64, 320], pl.FP32]],
                         z: pl.Out[pl.Tensor[[64, 256], pl.FP32]]):
    """Iteration i's second launch reads columns iteration i + 1's first launch writes:
    splitting the loop per launch would let it see them early. Refused."""
    for i in pl.range(0, 256, 64):
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="write_ahead"):
            y[:, i + 64:i + 128] = pl.exp(x[:, i:i + 64])
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="read_behind"):
            z[:, i:i + 64] = pl.add(y[:, i + 32:i + 96], 1.0)
    return y, z


# --- gathers and per-block integer scalars ----------------------------------------------------


@pl.jit
def gather_rows(ids: pl.Tensor[[64], pl.INT32], table: pl.Tensor[[256, 128], pl.FP32],
                y: pl.Out[pl.Tensor[[64, 128], pl.FP32]]):
    """Embedding rows by token id: the window offset is read from a tensor, per block."""
    for t0 in pl.parallel(0, 64, 8):
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="rows"):
            for k in pl.range(8):
                row = pl.cast(pl.read(ids, [t0 + k]), pl.INDEX)
                y[t0 + k:t0 + k + 1, :] = pl.mul(table[row:row + 1, :], 2.0)
    return y


@pl.jit
def clamped_windows(x: pl.Tensor[[100, 64], pl.FP32], y: pl.Out[pl.Tensor[[112, 64], pl.FP32]]):
    """Each block reads the 16 rows at min(r, 84): the last block's window is clamped."""
    for r in pl.parallel(0, 112, 16):
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="clamp"):
            s = pl.min(r, 84)
            y[r:r + 16, :] = pl.exp(x[s:s + 16, :])
    return y


@pl.jit
def gather_reads_what_it_writes(ids: pl.InOut[pl.Tensor[[64, 8], pl.INT32]],
                                y: pl.Out[pl.Tensor[[64, 8], pl.INT32]]):
    """Block b reads an index from a row block b' writes: not provably independent."""
    for t0 in pl.parallel(0, 64, 8):
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="self_gather"):
            j = pl.cast(pl.read(ids, [t0, 0]), pl.INDEX)
            y[t0:t0 + 8, :] = ids[j:j + 8, :]
            ids[t0:t0 + 8, :] = pl.add(ids[t0:t0 + 8, :], 1)
    return ids, y


# --- a region's own loop run as a batch axis --------------------------------------------------


@pl.jit
def gather_rows_overlap(ids: pl.Tensor[[64], pl.INT32], table: pl.Tensor[[256, 128], pl.FP32],
                        y: pl.Out[pl.Tensor[[64, 128], pl.FP32]]):
    """Iteration k writes rows k and k + 1 of the block's 16: the next one overwrites
    one of them, so the iterations must keep their order."""
    for t0 in pl.parallel(0, 64, 16):
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="rows2"):
            for k in pl.range(15):
                row = pl.cast(pl.read(ids, [t0 + k]), pl.INDEX)
                y[t0 + k:t0 + k + 2, :] = table[row:row + 2, :]
    return y


@pl.jit
def region_loop_branch(x: pl.Tensor[[64, 128], pl.FP32], y: pl.Out[pl.Tensor[[64, 128], pl.FP32]]):
    """The loop's body branches on its variable: as a batch axis the condition differs
    per iteration, and both branches run predicated (`batch/predicate.py`)."""
    for t0 in pl.parallel(0, 64, 8):
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="branch"):
            for k in pl.range(8):
                if k < 4:
                    y[t0 + k:t0 + k + 1, :] = pl.mul(x[t0 + k:t0 + k + 1, :], 2.0)
                else:
                    y[t0 + k:t0 + k + 1, :] = pl.exp(x[t0 + k:t0 + k + 1, :])
    return y


@pl.jit
def region_loop_columns(x: pl.Tensor[[64, 256], pl.FP32], y: pl.Out[pl.Tensor[[64, 256], pl.FP32]]):
    """A column loop in the region, 4 tiles of 64 per block row: one more batch axis."""
    for r in pl.parallel(0, 64, 16):
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="colloop"):
            s = pl.row_sum(x[r:r + 16, 0:64])
            for c in pl.range(0, 256, 64):
                t = x[r:r + 16, c:c + 64]
                y[r:r + 16, c:c + 64] = pl.row_expand_sub(pl.exp(t), s)
    return y


@pl.jit
def gather_row_pairs(ids: pl.Tensor[[32], pl.INT32], table: pl.Tensor[[64, 16], pl.FP32],
                     y: pl.Out[pl.Tensor[[64, 16], pl.FP32]],
                     z: pl.Out[pl.Tensor[[32, 8], pl.FP32]]):
    """Two rows per id straight into y (one block of rows: taken in place), and half a
    row into z (not whole rows: gathered, then written)."""
    for t0 in pl.parallel(0, 32, 8):
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="pairs"):
            for k in pl.range(8):
                row = pl.cast(pl.read(ids, [t0 + k]), pl.INDEX)
                y[2 * (t0 + k):2 * (t0 + k) + 2, :] = table[row:row + 2, :]
                z[t0 + k:t0 + k + 1, :] = table[row:row + 1, 4:12]
    return y, z


@pl.jit
def gather_columns(x: pl.Tensor[[64, 32], pl.FP32], idx: pl.Tensor[[16, 32], pl.INT32],
                   y: pl.Out[pl.Tensor[[64, 32], pl.FP32]]):
    """Rope's column shuffle: `pl.gather(..., dim=-1, index=)` of each block's tile by
    one index tile (the registry entry's batched form)."""
    for r in pl.parallel(0, 64, 16):
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="shuffle"):
            y[r:r + 16, :] = pl.gather(x[r:r + 16, :], dim=-1, index=idx[:, :])
    return y


# --- partial tiles: valid_shape and clamp tails -----------------------------------------------


@pl.jit
def tail_rows(x: pl.Tensor[[100, 64], pl.FP32], y: pl.Out[pl.Tensor[[100, 64], pl.FP32]]):
    """16-row tiles over 100 rows: the last tile has 4 valid rows."""
    for r in pl.parallel(0, 100, 16):
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="tail"):
            rows = pl.min(16, 100 - r)
            t = pl.slice(x, [16, 64], [r, 0], valid_shape=[rows, 64])
            y[r:r + 16, :] = pl.row_expand_sub(t, pl.row_max(t))
    return y


@pl.jit
def clamp_rows(x: pl.Tensor[[100, 64], pl.FP32], y: pl.Out[pl.Tensor[[112, 64], pl.FP32]]):
    """Clamped 16-row windows: the last one reads 4 rows and zeros past the end."""
    for r in pl.range(0, 112, 16):
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="clamped"):
            t = pl.slice(x, [16, 64], [r, 0], clamp=True)
            y[r:r + 16, :] = pl.add(t, 1.0)
    return y


@pl.jit
def tail_columns(x: pl.Tensor[[64, 100], pl.FP32], y: pl.Out[pl.Tensor[[64, 100], pl.FP32]]):
    """The partial tiles are the inner loop's last: every outer iteration has one."""
    for i in pl.parallel(0, 64, 32):
        for c in pl.parallel(0, 100, 32):
            with pl.at(level=pl.Level.CORE_GROUP, name_hint="cols"):
                cols = pl.min(32, 100 - c)
                t = pl.slice(x, [32, 32], [i, c], valid_shape=[32, cols])
                y[i:i + 32, c:c + 32] = pl.exp(t)
    return y


@pl.jit
def tail_col_sums(x: pl.Tensor[[100, 64], pl.FP32], y: pl.Out[pl.Tensor[[7, 64], pl.FP32]]):
    """Column sums of 16-row tiles over 100 rows: the last tile sums its 4 valid rows
    only, and its pad (the maximum) must not leak into them."""
    for b in pl.parallel(7):
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="colsum"):
            r = b * 16
            rows = pl.min(16, 100 - r)
            t = pl.slice(x, [16, 64], [r, 0], valid_shape=[rows, 64],
                         pad_value=pl.PadValue.max)
            y[b:b + 1, :] = pl.col_sum(pl.add(t, 1.0))
    return y


@pl.jit
def tail_expand_first(x: pl.Tensor[[100, 64], pl.FP32], w: pl.Tensor[[16, 1], pl.FP32],
                      y: pl.Out[pl.Tensor[[100, 64], pl.FP32]]):
    """The row vector first: its tag carries no valid shape of the tile's, and the
    partial tile after it does not make the result partial (block by block, numpy keeps
    the first tagged operand's), so the declared valid shape tags it."""
    for r in pl.parallel(0, 100, 16):
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="expand_first"):
            rows = pl.min(16, 100 - r)
            t = pl.slice(x, [16, 64], [r, 0], valid_shape=[rows, 64])
            s = pl.row_max(t)
            y[r:r + 16, :] = pl.row_expand_mul(pl.col_expand_mul(t, x[0:1, :]),
                                               pl.add(s, w))
    return y


@pl.jit
def partial_first_tiles(x: pl.Tensor[[64, 100], pl.FP32], y: pl.Out[pl.Tensor[[64, 100], pl.FP32]]):
    """The outer loop's last iteration is a column of four partial tiles: the nest
    splits there, and (untraced) the partial tiles run as one batch with masks."""
    for c in pl.parallel(0, 100, 32):
        for i in pl.parallel(0, 64, 16):
            with pl.at(level=pl.Level.CORE_GROUP, name_hint="cols_first"):
                cols = pl.min(32, 100 - c)
                t = pl.slice(x, [16, 32], [i, c], valid_shape=[16, cols])
                y[i:i + 16, c:c + 32] = pl.row_expand_sub(t, pl.row_sum(t))
    return y


@pl.jit
def tail_overrun(x: pl.Tensor[[100, 64], pl.FP32], y: pl.Out[pl.Tensor[[112, 64], pl.FP32]]):
    """The last tile's valid rows run 4 past the tensor: block by block faults there."""
    for r in pl.parallel(0, 112, 16):
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="overrun"):
            rows = pl.min(16, 104 - r)
            t = pl.slice(x, [16, 64], [r, 0], valid_shape=[rows, 64])
            y[r:r + 16, :] = pl.exp(t)
    return y


@pl.jit
def tail_into_matmul(x: pl.Tensor[[100, 64], pl.FP32], w: pl.Tensor[[64, 32], pl.FP32],
                     y: pl.Out[pl.Tensor[[112, 32], pl.FP32]]):
    """A partial tile into a matmul (no mask rule): the batch splits as before (the
    product is a whole tile: rows past the data are the pad's)."""
    for r in pl.parallel(0, 100, 16):
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="tail_mm"):
            rows = pl.min(16, 100 - r)
            t = pl.slice(x, [16, 64], [r, 0], valid_shape=[rows, 64])
            y[r:r + 16, :] = pl.matmul(t, w[:, :])
    return y


@pl.jit
def per_head_body(q: pl.Tensor[[4, 512], pl.FP32], k: pl.Tensor[[64, 32], pl.FP32],
                  y: pl.Out[pl.Tensor[[4, 256], pl.FP32]]):
    """decode_front's per-head body in small: a region broadcasts a row of q over a
    padded tile (pl.col_expand), the next one scores it against a broadcast column of k
    (pl.row_expand), the last takes a window of that result into the batch row."""
    for b in pl.parallel(4):
        row = pl.create_tensor([1, 256], dtype=pl.FP32)
        for h in pl.parallel(8):
            with pl.at(level=pl.Level.CORE_GROUP, name_hint="load"):
                qb = pl.col_expand(pl.full([16, 64], dtype=pl.FP32, value=0.0),
                                   q[b:b + 1, h * 64:h * 64 + 64])
            with pl.at(level=pl.Level.CORE_GROUP, name_hint="score"):
                kr = pl.row_expand(pl.full([16, 64], dtype=pl.FP32, value=0.0),
                                   k[h:h + 16, 0:1])
                o = pl.row_expand_mul(qb, pl.row_sum(pl.mul(qb, kr)))
            with pl.at(level=pl.Level.CORE_GROUP, name_hint="put"):
                row = pl.assemble(row, o[0:1, 0:32], [0, h * 32])
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="write_back"):
            y = pl.assemble(y, row, [b, 0])
    return y


@pl.jit
def head_projection_body(x: pl.Tensor[[8, 64], pl.FP32], w: pl.Tensor[[8, 64, 128], pl.FP32],
                         y: pl.Out[pl.Tensor[[8, 128], pl.FP32]]):
    """A tile one launch returns, filled in place by the next (a matmul per column
    chunk assembled into it), then a region accumulating chunks into a tile of its own
    and writing its first row: decode_front's s4_q_nope_latent_proj / s4_v_proj."""
    w2 = pl.reshape(w, [8 * 64, 128])
    for h in pl.parallel(8):
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="pad"):
            xb = pl.col_expand(pl.full([16, 64], dtype=pl.FP32, value=0.0), x[h:h + 1, :])
            lat = pl.full([16, 128], dtype=pl.FP32, value=0.0)
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="fill"):
            for c in pl.range(0, 128, 32):
                part = pl.matmul(xb, w2[h * 64:h * 64 + 64, c:c + 32])
                lat = pl.assemble(lat, part, [0, c])
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="acc"):
            acc = pl.full([16, 128], dtype=pl.FP32, value=0.0)
            for c in pl.range(0, 128, 64):
                acc = pl.assemble(acc, pl.add(lat[:, c:c + 64], 1.0), [0, c])
            y[h:h + 1, :] = acc[0:1, :]
    return y


@pl.jit
def local_tile_read_again(x: pl.Tensor[[4, 32], pl.FP32], y: pl.Out[pl.Tensor[[4, 32], pl.FP32]]):
    """A varying write into a tile whose old value is read again afterwards: block by
    block the write is in place, so `t` and `u` are one tile (refused batched)."""
    for i in pl.parallel(4):
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="keep"):
            t = pl.full([1, 32], dtype=pl.FP32, value=0.0)
            u = pl.assemble(t, x[i:i + 1, 0:16], [0, 0])
            v = pl.assemble(u, t[0:1, 0:16], [0, 16])
            y[i:i + 1, :] = v
    return y


# --- an elementwise chain computed in the windows it is written to (`placement`) ---------


@pl.jit
def placed_own_operand(x: pl.Tensor[[64, 64], pl.FP32], y: pl.Out[pl.Tensor[[64, 64], pl.FP32]]):
    """The write's op reads the value it takes again (`row_sum(e)`): still placed."""
    for r in pl.parallel(0, 64, 8):
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="own_operand"):
            t = x[r:r + 8, :]
            e = pl.exp(pl.row_expand_sub(t, pl.row_max(t)))
            y[r:r + 8, :] = pl.row_expand_div(e, pl.row_sum(e))
    return y


@pl.jit
def placed_older_value(x: pl.Tensor[[64, 64], pl.FP32], y: pl.Out[pl.Tensor[[64, 64], pl.FP32]]):
    """The write's op reads a value its other operand overwrites first (`a`, under
    `a + 1` computed in place before `row_sum(a)` is evaluated): nothing is placed."""
    for r in pl.parallel(0, 64, 8):
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="older_value"):
            a = pl.exp(x[r:r + 8, :])
            y[r:r + 8, :] = pl.row_expand_mul(pl.add(a, 1.0), pl.row_sum(a))
    return y


@pl.jit
def gather_straight(ids: pl.Tensor[[64], pl.INT32], table: pl.Tensor[[256, 128], pl.FP32],
                    y: pl.Out[pl.Tensor[[64, 128], pl.FP32]]):
    """The rows themselves: taken straight into y (`gathers.rows_into`)."""
    for t0 in pl.parallel(0, 64, 8):
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="straight"):
            for k in pl.range(8):
                row = pl.cast(pl.read(ids, [t0 + k]), pl.INDEX)
                y[t0 + k:t0 + k + 1, :] = table[row:row + 1, :]
    return y


# --- a row reduction of an elementwise op, a slice of the batch at a time (`ufuncs`) -------


@pl.jit
def chunked_sumsq(x: pl.Tensor[[520, 1024], pl.FP32], w: pl.Tensor[[1, 1024], pl.FP32],
                  y: pl.Out[pl.Tensor[[520, 1], pl.FP32]],
                  z: pl.Out[pl.Tensor[[520, 1], pl.FP32]]):
    """65 blocks of 8 rows (2 MiB of products: sliced), a product with a row every block
    shares (not sliced), a maximum of a difference."""
    for r in pl.parallel(0, 520, 8):
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="sumsq"):
            t = x[r:r + 8, :]
            y[r:r + 8, :] = pl.row_sum(pl.mul(t, t))
            z[r:r + 8, :] = pl.row_max(pl.sub(pl.col_expand_mul(t, w), t))
    return y, z


# --- a product with a stacked (3-D) operand, as expert_routed's exp_*_mm regions ------------


@pl.jit
def stacked_weight_mm(x: pl.Tensor[[64, 256], pl.INT8], w: pl.Tensor[[2, 128, 256], pl.INT8],
                      y: pl.Out[pl.Tensor[[32, 128], pl.INT32]]):
    """A 2-D activation times one expert's [1, N, K] weight slice (b_trans), accumulated
    over K: the product is [1, 16, 32] and is reshaped into the 2-D output. Batched over
    experts too, the activation varies and is 2-D against a 3-D product."""
    for e in pl.range(2):
        for n in pl.parallel(0, 128, 32):
            with pl.at(level=pl.Level.CORE_GROUP, name_hint="stacked_mm"):
                acc = pl.create_tensor([1, 16, 32], dtype=pl.INT32)
                for k in pl.range(0, 256, 64):
                    xk = x[e * 16:e * 16 + 16, k:k + 64]
                    wk = w[e:e + 1, n:n + 32, k:k + 64]
                    if k == 0:
                        acc = pl.matmul(xk, wk, b_trans=True, out_dtype=pl.INT32)
                    else:
                        acc = pl.matmul_acc(acc, xk, wk, b_trans=True)
                y[e * 16:e * 16 + 16, n:n + 32] = pl.reshape(acc, [16, 32])
    return y


@pl.jit
def stacked_rows_assemble(x: pl.Tensor[[128, 256], pl.FP32],
                          w: pl.Tensor[[2, 64, 256], pl.FP32],
                          y: pl.Out[pl.Tensor[[128, 128], pl.FP32]]):
    """The dspark prefill files' proj_a_mm: a block's rows of a 2-D activation times one
    group's [1, N, K] weight slice, the 3-D product assembled into a 2-D tensor (its
    leading unit axis dropped, as the write takes it)."""
    for g in pl.range(2):
        for r in pl.parallel(0, 128, 32):
            with pl.at(level=pl.Level.CORE_GROUP, name_hint="rows_mm"):
                acc = pl.matmul(x[r:r + 32, 0:128], w[g:g + 1, :, 0:128], b_trans=True,
                                out_dtype=pl.FP32)
                acc = pl.matmul_acc(acc, x[r:r + 32, 128:256], w[g:g + 1, :, 128:256],
                                    b_trans=True)
                y = pl.assemble(y, acc, [r, g * 64])
    return y
