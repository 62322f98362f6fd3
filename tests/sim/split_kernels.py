"""Kernels for the batching of block indices split by a constant, offsets of integers of
unknown range, windows of varying values and branches a batch cannot run (module level:
the frontend reads their source; `batch_kernels.py` has the other batching cases).

`tests/sim/test_speed_equivalence.py` runs every one of them batched and block by block
and compares outputs bit for bit and traces field for field; `test_split_windows.py`
checks which batch, their values, and why the others do not.
"""
import pypto.language as pl

SUB = 3  # sub-blocks per token block
TOKENS = 8  # token blocks
ROWS = 4  # rows per (token block, sub-block)
PAD = (SUB + 1) * ROWS  # a token block's rows: SUB written, the first one not


# --- the block index split into quotient and remainder ---------------------------------------


@pl.jit
def split_rows(x: pl.Tensor[[TOKENS * PAD, 64], pl.FP32],
               y: pl.InOut[pl.Tensor[[TOKENS * PAD, 64], pl.FP32]]):
    """Block `b` is sub-block `b % SUB` (+ 1) of token block `b // SUB`, the token blocks
    in reverse order, as pypto-lib's gathers schedule them: row windows that the
    quotient and remainder place apart (each token block's first window is skipped)."""
    with pl.spmd(TOKENS * SUB, name_hint="split_rows"):
        blk = pl.tile.get_block_idx()
        tb = blk // SUB
        sb = blk - tb * SUB + 1
        r0 = (TOKENS - 1 - tb) * PAD + sb * ROWS
        y[r0:r0 + ROWS, :] = pl.add(x[r0:r0 + ROWS, :], 1.0)
    return y


@pl.jit
def split_rows_mod(x: pl.Tensor[[TOKENS * PAD, 64], pl.FP32],
                   y: pl.InOut[pl.Tensor[[TOKENS * PAD, 64], pl.FP32]]):
    """The remainder as `%`, the rows of each token block in two loop steps."""
    with pl.spmd(TOKENS * SUB, name_hint="split_rows_mod"):
        blk = pl.tile.get_block_idx()
        tb = blk // SUB
        sb = blk % SUB
        for h in pl.range(2):
            r0 = tb * PAD + sb * ROWS + h * 2 + ROWS
            y[r0:r0 + 2, :] = pl.mul(x[r0:r0 + 2, :], 3.0)
    return y


@pl.jit
def split_rows_overlap(x: pl.Tensor[[TOKENS * PAD, 64], pl.FP32],
                       y: pl.InOut[pl.Tensor[[TOKENS * PAD, 64], pl.FP32]]):
    """Quotient and remainder one window apart: block (1, 0) writes block (0, 1)'s rows
    (the later block wins, block by block): NOT disjoint."""
    with pl.spmd(TOKENS * SUB, name_hint="split_overlap"):
        blk = pl.tile.get_block_idx()
        tb = blk // SUB
        sb = blk - tb * SUB
        r0 = tb * ROWS + sb * ROWS
        s0 = blk * ROWS
        y[r0:r0 + ROWS, :] = pl.add(x[s0:s0 + ROWS, :], 1.0)
    return y


# --- offsets of integers of unknown range -----------------------------------------------------


@pl.jit
def grouped_rows(x: pl.Tensor[[8, 64], pl.FP32], base: pl.Scalar[pl.INDEX],
                 y: pl.InOut[pl.Tensor[[48, 16], pl.FP32]]):
    """Head `h` of token `t` goes to row `(h // 2) * 8 + t + base`, columns by `h % 2`
    (pypto-lib's group-major pack): the group is a quotient of a loop index (a uniform
    integer of no known range), a multiple of the 8 tokens apart; `base` is the same
    for every block."""
    with pl.spmd(8, name_hint="pack_groups"):
        t = pl.tile.get_block_idx()
        for hi in pl.range(8):
            g = hi // 2
            col = (hi - g * 2) * 8
            row = g * 8 + t + base
            y[row:row + 1, col:col + 8] = x[t:t + 1, hi * 8:hi * 8 + 8]
    return y


@pl.jit
def grouped_rows_overlap(x: pl.Tensor[[8, 64], pl.FP32],
                         y: pl.InOut[pl.Tensor[[48, 16], pl.FP32]]):
    """Groups 4 rows apart for 8 tokens: token 4 of group 0 is token 0 of group 1 (NOT
    disjoint)."""
    with pl.spmd(8, name_hint="pack_overlap"):
        t = pl.tile.get_block_idx()
        for hi in pl.range(8):
            g = hi // 2
            col = (hi - g * 2) * 8
            row = g * 4 + t
            y[row:row + 1, col:col + 8] = x[t:t + 1, hi * 8:hi * 8 + 8]
    return y


# --- windows of varying values ----------------------------------------------------------------


@pl.jit
def window_of_result(x: pl.Tensor[[64, 64], pl.FP32], d: pl.Tensor[[64, 1], pl.FP32],
                     y: pl.Out[pl.Tensor[[64, 32], pl.FP32]]):
    """A window of an op's result (`pl.row_expand_div(o, d)[0:8, :]`), then a window of
    that (a tensor of the region: on-chip copies)."""
    for r in pl.parallel(0, 64, 8):
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="result_window"):
            full = pl.row_expand_div(x[r:r + 8, :], d[r:r + 8, :])[0:8, :]
            y[r:r + 8, :] = pl.exp(full[:, 16:48])
    return y


@pl.jit
def window_of_tile(x: pl.Tensor[[64, 64], pl.FP32], y: pl.Out[pl.Tensor[[64, 64], pl.FP32]]):
    """Windows of a loaded on-chip tile (views of its storage), read only."""
    for r in pl.parallel(0, 64, 8):
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="tile_window"):
            t = pl.load(x, [r, 0], [8, 64], target_memory=pl.MemorySpace.Vec)
            e = pl.mul(t, 2.0)
            left = e[:, 0:32]
            right = e[:, 32:64]
            pl.store(pl.add(left, right), [r, 0], y)
            pl.store(pl.sub(left, right), [r, 32], y)
    return y


@pl.jit
def write_into_tile_window(x: pl.Tensor[[64, 64], pl.FP32],
                           y: pl.Out[pl.Tensor[[64, 64], pl.FP32]]):
    """A write into a window of a tile writes the tile (block by block, a view): the
    batch refuses it."""
    for r in pl.parallel(0, 64, 8):
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="tile_window_write"):
            t = pl.load(x, [r, 0], [8, 64], target_memory=pl.MemorySpace.Vec)
            e = pl.mul(t, 2.0)
            top = e[0:4, :]
            top[0:1, :] = pl.full([1, 64], dtype=pl.FP32, value=7.0)
            pl.store(e, [r, 0], y)
    return y


# --- a uniform condition with a branch the batch cannot run -----------------------------------


@pl.jit
def tail_branch(x: pl.Tensor[[64, 64], pl.FP32], rows: pl.Scalar[pl.INDEX],
                y: pl.Out[pl.Tensor[[64, 64], pl.FP32]]):
    """Whole tiles take the first branch; `rows` short of them takes the second, which
    writes one element of a varying tile (the batch cannot): a run taking it gives the
    batch up."""
    for r in pl.parallel(0, 64, 16):
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="tail_branch"):
            t = pl.mul(x[r:r + 16, 0:16], 2.0)
            if rows == 16:
                y[r:r + 16, 0:16] = t
            else:
                pl.write(t, [0, 0], 7.0)
                y[r:r + 16, 0:16] = t
            y[r:r + 16, 16:64] = x[r:r + 16, 16:64]
    return y


# --- loops whose bounds differ per block by the same amount -----------------------------------


@pl.jit
def shifted_rows(x: pl.Tensor[[64, 64], pl.FP32], y: pl.Out[pl.Tensor[[64, 64], pl.FP32]]):
    """Each block walks its own 8 rows in steps of 4: `pl.range(t0, t0 + 8, 4)`."""
    with pl.spmd(8, name_hint="shifted_rows"):
        t0 = pl.tile.get_block_idx() * 8
        for t in pl.range(t0, t0 + 8, 4):
            y[t:t + 4, :] = pl.add(x[t:t + 4, :], 1.0)
    return y


@pl.jit
def shifted_rows_guarded(x: pl.Tensor[[64, 64], pl.FP32], rows: pl.Scalar[pl.INDEX],
                         y: pl.InOut[pl.Tensor[[64, 64], pl.FP32]]):
    """The rows past `rows` are left alone (a condition that differs per block inside
    the shifted loop), the sum of a row's halves carried through an inner loop."""
    for b in pl.spmd(16, name_hint="shifted_guarded"):
        token_block = b // 2
        half = b % 2
        t0 = token_block * 8
        for t in pl.range(t0, t0 + 8, 1):
            if t < rows:
                acc = pl.full([1, 32], dtype=pl.FP32, value=0.0)
                for k in pl.range(2):
                    acc = pl.add(acc, x[t:t + 1, k * 32:k * 32 + 32])
                y[t:t + 1, half * 32:half * 32 + 32] = pl.mul(acc, 2.0)
    return y


@pl.jit
def uneven_rows(x: pl.Tensor[[64, 64], pl.FP32], y: pl.InOut[pl.Tensor[[64, 64], pl.FP32]]):
    """Block `b` runs `b` iterations: the trip counts differ (NOT batched)."""
    with pl.spmd(8, name_hint="uneven_rows"):
        b = pl.tile.get_block_idx()
        for t in pl.range(b * 8, b * 9, 1):
            y[t:t + 1, :] = pl.add(x[t:t + 1, :], 1.0)
    return y
