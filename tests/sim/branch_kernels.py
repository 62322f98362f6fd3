"""Kernels for the batching of conditions that differ per block: predicated branches,
agreed conditions, masked tile writes and merged window writes (module level: the
frontend reads their source; `batch_kernels.py` has the other batching cases).

`tests/sim/test_speed_equivalence.py` runs every one of them batched and block by block
and compares outputs bit for bit and traces field for field; `test_predicate.py` and
`test_merged.py` check which batch, how, and why the others do not.
"""
import pypto.language as pl

# --- conditions that differ per block (predicated) --------------------------------------------


@pl.jit
def guarded_rows(ids: pl.Tensor[[64], pl.INT32], table: pl.Tensor[[256, 128], pl.FP32],
                 y: pl.Out[pl.Tensor[[64, 128], pl.FP32]]):
    """Token t's row is ids[t] - 2; below 0 it is padding and gets zeros: the read at a
    negative row is invalid where the condition is false (block by block those blocks
    never make it)."""
    for t in pl.parallel(64):
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="guarded"):
            row = pl.read(ids, [t]) - 2
            if row >= 0:
                r = pl.cast(row, pl.INDEX)
                y[t:t + 1, :] = pl.mul(table[r:r + 1, :], 2.0)
            else:
                y[t:t + 1, :] = pl.full([1, 128], dtype=pl.FP32, value=0.0)
    return y


@pl.jit
def guarded_keep(ids: pl.Tensor[[64], pl.INT32], table: pl.Tensor[[256, 128], pl.FP32],
                 y: pl.Out[pl.Tensor[[64, 128], pl.FP32]]):
    """No else: the rows of padding tokens are never written (they keep the fresh
    buffer's residue, as block by block); the region's loop runs iteration by
    iteration, each predicated over the blocks."""
    for t0 in pl.parallel(0, 64, 8):
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="keep_rows"):
            for k in pl.range(8):
                row = pl.read(ids, [t0 + k]) - 2
                if row >= 0:
                    r = pl.cast(row, pl.INDEX)
                    y[t0 + k:t0 + k + 1, :] = table[r:r + 1, :]
    return y


@pl.jit
def guarded_tail(x: pl.Tensor[[100, 64], pl.FP32], y: pl.Out[pl.Tensor[[128, 64], pl.FP32]]):
    """Whole tiles only: the then-branch's window leaves `x` in the blocks where the
    condition is false (r = 96, 112)."""
    for r in pl.parallel(0, 128, 16):
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="tiles"):
            if r + 16 <= 100:
                y[r:r + 16, :] = pl.exp(x[r:r + 16, :])
            else:
                y[r:r + 16, :] = pl.full([16, 64], dtype=pl.FP32, value=-1.0)
    return y


@pl.jit
def guarded_choice(x: pl.Tensor[[64, 64], pl.FP32], lens: pl.Tensor[[8], pl.INT32],
                   y: pl.Out[pl.Tensor[[64, 64], pl.FP32]]):
    """The branches yield a tile each; the write after the `if` takes each block's."""
    for b in pl.parallel(8):
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="choose"):
            n = pl.read(lens, [b])
            if n > 3 and n != 6:
                v = pl.mul(x[b * 8:b * 8 + 8, :], 2.0)
            else:
                v = pl.add(x[b * 8:b * 8 + 8, :], 1.0)
            y[b * 8:b * 8 + 8, :] = pl.exp(v)
    return y


@pl.jit
def guarded_nested(ids: pl.Tensor[[64], pl.INT32], table: pl.Tensor[[256, 128], pl.FP32],
                   y: pl.Out[pl.Tensor[[64, 128], pl.FP32]]):
    """pypto-lib's shape: tokens past the count are not touched, padding ones get zeros
    (a condition under a condition: the masks and-ed)."""
    for t in pl.parallel(64):
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="nested"):
            if t < 48:
                row = pl.read(ids, [t]) - 2
                if row >= 0:
                    r = pl.cast(row, pl.INDEX)
                    y[t:t + 1, :] = table[r:r + 1, :]
                else:
                    y[t:t + 1, :] = pl.full([1, 128], dtype=pl.FP32, value=0.0)
    return y


@pl.jit
def guarded_loop(x: pl.Tensor[[64, 64], pl.FP32], lens: pl.Tensor[[8], pl.INT32],
                 y: pl.Out[pl.Tensor[[64, 64], pl.FP32]]):
    """A counted loop under the condition: runs predicated (its bounds are the same in
    every block)."""
    for b in pl.parallel(8):
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="loop_under"):
            n = pl.read(lens, [b])
            acc = pl.full([8, 64], dtype=pl.FP32, value=0.0)
            if n > 3:
                for k in pl.range(2):
                    acc = pl.add(acc, x[b * 8:b * 8 + 8, :])
            y[b * 8:b * 8 + 8, :] = acc
    return y


@pl.jit
def agreed_guard(x: pl.Tensor[[64, 64], pl.FP32], lens: pl.Tensor[[8], pl.INT32],
                 n: pl.Scalar[pl.INDEX], y: pl.Out[pl.Tensor[[64, 64], pl.FP32]]):
    """A bound check (`if b < n`) over a branch that cannot run predicated (an element
    written into a tile): batched when every block takes the same branch, else
    block by block; a condition per block inside it runs predicated."""
    for b in pl.parallel(8):
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="agreed"):
            if b < n:
                m = pl.read(lens, [b])
                acc = pl.full([8, 64], dtype=pl.FP32, value=0.0)
                pl.write(acc, [0, 0], 1.0)
                for k in pl.range(4):
                    if m > k:
                        acc = pl.add(acc, x[b * 8:b * 8 + 8, :])
                y[b * 8:b * 8 + 8, :] = acc
            else:
                y[b * 8:b * 8 + 8, :] = pl.full([8, 64], dtype=pl.FP32, value=-1.0)
    return y


@pl.jit
def agreed_under_mask(x: pl.Tensor[[64, 64], pl.FP32], lens: pl.Tensor[[8], pl.INT32],
                      y: pl.Out[pl.Tensor[[64, 64], pl.FP32]]):
    """A branch that cannot run predicated under a condition under a condition that
    differs per block: a predicated branch never runs for all blocks, so both run only
    when the blocks agree."""
    for b in pl.parallel(8):
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="under_mask"):
            n = pl.read(lens, [b])
            if n > 1:
                y[b * 8:b * 8 + 8, :] = x[b * 8:b * 8 + 8, :]
                if n > 3:
                    acc = pl.full([8, 64], dtype=pl.FP32, value=0.0)
                    pl.write(acc, [0, 0], 1.0)
                    y[b * 8:b * 8 + 8, :] = pl.add(acc, x[b * 8:b * 8 + 8, :])
    return y


@pl.jit
def guarded_stage(ids: pl.Tensor[[64, 8], pl.INT32], table: pl.Tensor[[256, 128], pl.FP32],
                  y: pl.Out[pl.Tensor[[512, 128], pl.FP32]]):
    """Rows gathered into a staging tile under a per-row condition (the padding rows
    keep the tile's zeros), the tile then written whole: each block's tile, written
    under the mask of the blocks taking the branch."""
    for t in pl.parallel(64):
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="stage"):
            stage = pl.full([8, 128], dtype=pl.FP32, value=0.0)
            for k in pl.range(8):
                raw = pl.read(ids, [t, k])
                if raw >= 2:
                    r = pl.cast(raw, pl.INDEX)
                    stage[k:k + 1, :] = table[r:r + 1, :]
            y[t * 8:t * 8 + 8, :] = stage
    return y


@pl.jit
def guarded_stage_uniform(ids: pl.Tensor[[64, 8], pl.INT32],
                          y: pl.Out[pl.Tensor[[512, 128], pl.FP32]]):
    """A uniform value written into a tile under a condition per block: the tile
    becomes each block's own, written for the blocks taking the branch."""
    for t in pl.parallel(64):
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="stage_uniform"):
            stage = pl.full([8, 128], dtype=pl.FP32, value=0.0)
            for k in pl.range(8):
                raw = pl.read(ids, [t, k])
                if raw >= 2:
                    stage[k:k + 1, :] = pl.full([1, 128], dtype=pl.FP32, value=1.0)
            y[t * 8:t * 8 + 8, :] = stage
    return y


@pl.jit
def guarded_assemble(x: pl.Tensor[[64, 64], pl.FP32], lens: pl.Tensor[[8], pl.INT32],
                     y: pl.Out[pl.Tensor[[64, 64], pl.FP32]]):
    """An imperative write (`pl.assemble`, an Eval statement) of a window of a block's
    own tile under a condition per block."""
    for b in pl.parallel(8):
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="guarded_assemble"):
            n = pl.read(lens, [b])
            t = pl.exp(x[b * 8:b * 8 + 8, :])
            if n > 3:
                pl.assemble(y, t[0:4, :], [b * 8, 0])
    return y


@pl.jit
def tile_flags(x: pl.Tensor[[64, 64], pl.FP32], mask: pl.Tensor[[8, 4], pl.INT32],
               y: pl.Out[pl.Tensor[[64, 64], pl.FP32]]):
    """A flag read from each block's own tile (a row of a mask) at the same index decides
    per block (pypto-lib's `pl.read(m_mask_row, [0, sb])`)."""
    for b in pl.parallel(8):
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="tile_flags"):
            row = mask[b:b + 1, :]
            acc = x[b * 8:b * 8 + 8, :]
            for k in pl.unroll(1, 4):
                flag = pl.read(row, [0, k])
                if flag > 3:
                    acc = pl.add(acc, 1.0)
            y[b * 8:b * 8 + 8, :] = acc
    return y


@pl.jit
def guarded_stage_two(ids: pl.Tensor[[64, 8], pl.INT32], table: pl.Tensor[[256, 128], pl.FP32],
                      y: pl.Out[pl.Tensor[[512, 128], pl.FP32]]):
    """Both branches write rows of one staging tile (pypto-lib's gather of window and
    compressed rows): each writes its own blocks' rows, the other blocks' are left."""
    for t in pl.parallel(64):
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="stage_two"):
            stage = pl.full([8, 128], dtype=pl.FP32, value=0.0)
            for k in pl.range(8):
                raw = pl.read(ids, [t, k])
                if raw >= 128:
                    r = pl.cast(raw - 128, pl.INDEX)
                    stage[k:k + 1, :] = table[r:r + 1, :]
                else:
                    if raw >= 2:
                        r2 = pl.cast(raw, pl.INDEX)
                        stage[k:k + 1, :] = pl.mul(table[r2:r2 + 1, :], 2.0)
            y[t * 8:t * 8 + 8, :] = stage
    return y


# --- both branches write the same window: one merged write (`pypto.sim.batch.merged`) ---


@pl.jit
def merged_gather(ids: pl.Tensor[[64], pl.INT32], table: pl.Tensor[[256, 128], pl.FP32],
                  x: pl.Tensor[[64, 128], pl.FP32], y: pl.Out[pl.Tensor[[64, 128], pl.FP32]]):
    """Both branches write row t0 + k: the table's rows go straight into y, the other
    branch's blocks (a value of their own, per block) overwrite theirs; which branch
    writes first depends on how many blocks take it."""
    for t0 in pl.parallel(0, 64, 8):
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="merged_gather"):
            for k in pl.range(8):
                row = pl.read(ids, [t0 + k]) - 2
                if row >= 0:
                    r = pl.cast(row, pl.INDEX)
                    y[t0 + k:t0 + k + 1, :] = table[r:r + 1, :]
                else:
                    y[t0 + k:t0 + k + 1, :] = pl.mul(x[t0 + k:t0 + k + 1, :], 3.0)
    return y


@pl.jit
def merged_tiles(x: pl.Tensor[[64, 64], pl.FP32], lens: pl.Tensor[[8], pl.INT32],
                 y: pl.Out[pl.Tensor[[64, 64], pl.FP32]]):
    """Whole tiles, each branch a computed value (a temporary each: no straight path)."""
    for b in pl.parallel(8):
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="merged_tiles"):
            n = pl.read(lens, [b])
            if n > 3:
                t = pl.exp(x[b * 8:b * 8 + 8, :])
                y[b * 8:b * 8 + 8, :] = pl.row_expand_mul(t, pl.row_sum(t))
            else:
                y[b * 8:b * 8 + 8, :] = pl.full([8, 64], dtype=pl.FP32, value=-1.0)
    return y


@pl.jit
def merged_reads_target(x: pl.Tensor[[64, 64], pl.FP32], lens: pl.Tensor[[8], pl.INT32],
                        y: pl.InOut[pl.Tensor[[64, 64], pl.FP32]]):
    """The else branch reads the window both branches write: not merged (it would read
    what the first write wrote), two masked writes."""
    for b in pl.parallel(8):
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="reads_target"):
            n = pl.read(lens, [b])
            if n > 3:
                y[b * 8:b * 8 + 8, :] = pl.mul(x[b * 8:b * 8 + 8, :], 2.0)
            else:
                y[b * 8:b * 8 + 8, :] = pl.add(y[b * 8:b * 8 + 8, :], 1.0)
    return y


@pl.jit
def merged_two_targets(x: pl.Tensor[[64, 64], pl.FP32], lens: pl.Tensor[[8], pl.INT32],
                       y: pl.Out[pl.Tensor[[64, 64], pl.FP32]],
                       z: pl.Out[pl.Tensor[[64, 64], pl.FP32]]):
    """The branches write different tensors: not merged."""
    for b in pl.parallel(8):
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="two_targets"):
            n = pl.read(lens, [b])
            if n > 3:
                y[b * 8:b * 8 + 8, :] = pl.mul(x[b * 8:b * 8 + 8, :], 2.0)
            else:
                z[b * 8:b * 8 + 8, :] = pl.add(x[b * 8:b * 8 + 8, :], 1.0)
    return y, z
