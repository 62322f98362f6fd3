"""What the passes and the simulator ask about an op, declared on its registry entry.

Each fact is a property of the op's meaning (or of its numpy implementation), stated
once next to its type rule. Code outside `pypto.ops` reads these facts and never
compares op names: a new op that is a view, a window, a matmul or an in-place ufunc
works everywhere once its `defop` line says so.

* `View` — the result shares storage with the first operand.
* `WindowRead` / `WindowWrite` — the op reads a box of a tensor at offsets into a
  value (slice / load) or writes a value into one (assemble / store): the parameters
  that hold the tensor, the offsets and the extent (reads) or the value (writes).
* `Matmul` — a cube matrix product: which parameters feed the cube (staged in L1,
  moved to L0A / L0B) and which one is the accumulator the result updates in place.
* `Ufunc` — for float32 / float64 operands of the op's own dtype the impl is exactly
  this numpy ufunc (or its `reduce` along one axis), so a caller may apply the ufunc
  itself (into a destination, without the impl's dispatch) and get the same bits.
* `Role` — the ops whose meaning is not data in, data out: allocation, element access,
  block indices, barriers and task handles. Each role names one behaviour that the
  passes and the simulator implement.
* `symbol` — the Python operator a scalar op implements (`+`, `//`, `not`, ...).
* `shape_param` — the parameter holding the shape of the buffer the op makes.
* `memory_param` — the parameter naming the on-chip memory the result lands in.
* `affinity` — the side (cube / vector) that owns the result, whoever fills it.
* `divisor` — the parameter an op divides by (division, remainder): with an integer
  result, a zero there has the defined result of `pypto.ops.intdiv` and is what the
  simulator's `div` check reports.
* `Batch` — how the simulator's batch engine runs the op for all blocks of a launch at
  once: its `Family` (each family has one rule, `pypto.sim.batch.rules`: admission,
  the batched computation and what a partial tile does), and what that rule needs to
  know of the op (a tag arity, a tag rule, its own batched form, its integer-array
  form). An op without one runs block by block wherever an operand differs per block
  (but for an integer scalar call: `Family.PER_BLOCK`).
"""
from __future__ import annotations

from collections.abc import Callable
from enum import Enum
from typing import Any

import numpy as np

from pypto.ir.record import record


class View(Enum):
    """How the result of an op shares storage with its first operand."""

    # Always the same storage, reinterpreted: reshape, set_validshape, transpose_view,
    # reinterpret_view, tensor.view.
    ALIAS = "alias"
    # A box of the operand: the same storage in orchestration and when the operand is an
    # on-chip tile; inside a region a window of a GM tensor is a load into a new tile
    # (slice, fillpad).
    WINDOW = "window"


@record(slots=False)
class WindowRead:
    """A box of a tensor at offsets, read into a value."""

    tensor: str  # the parameter holding the tensor
    offset: str  # the parameter holding the offsets of the box
    shape: str  # the parameter holding the box's extent


@record(slots=False)
class WindowWrite:
    """A value written into a box of a tensor at offsets (the tensor is written in place)."""

    tensor: str  # the parameter holding the tensor written
    offset: str  # the parameter holding the offsets of the box
    source: str  # the parameter holding the value written


Window = WindowRead | WindowWrite


@record(slots=False)
class Matmul:
    """A cube matrix product `lhs @ rhs` (plus `acc` when it accumulates in place)."""

    lhs: str = "lhs"
    rhs: str = "rhs"
    acc: str | None = None  # the accumulator: the result is this buffer, updated
    # the real compiler's AutoTileMatmulL0 cuts it into L0-sized tiles when its operands
    # are Mat-resident (tile.matmul / matmul_acc / matmul_bias and their batched forms)
    l0_tiled: bool = False


@record(slots=False)
class Ufunc:
    """The numpy ufunc the impl is, for float32 / float64 operands of the op's dtype."""

    fn: np.ufunc
    arity: int = 2  # leading operands it takes (the rest must be left at their defaults)
    reduce_axis: int | None = None  # set: the impl is `fn.reduce(x, axis, keepdims=True)`


class Role(Enum):
    """Ops that the passes and the simulator implement by what they do."""

    ALLOC_TENSOR = "alloc_tensor"  # a fresh GM tensor (pl.create_tensor)
    ALLOC_TILE = "alloc_tile"  # a fresh on-chip tile (pl.create_tile)
    ELEMENT_READ = "element_read"  # one element of a tensor (pl.read)
    ELEMENT_WRITE = "element_write"  # one element of a tensor, written in place (pl.write)
    SET_VALID = "set_valid"  # a new valid shape over the same tile (pl.set_validshape)
    RESHAPE = "reshape"  # the same elements under a new shape (pl.reshape)
    BLOCK_INDEX = "block_index"  # the block's index in its SPMD launch
    SUBBLOCK_INDEX = "subblock_index"  # the AIV lane of a split region
    BARRIER = "barrier"  # all blocks of a launch meet (pl.system.syncall)
    TASK_JOIN = "task_join"  # a task that only joins dependencies (pl.system.task_dummy)
    ARRAY_GET = "array_get"  # an element of a scalar array (task ids)
    ARRAY_SET = "array_set"  # a scalar array with one element replaced
    LANE_SHARD = "lane_shard"  # this vector lane's part of an operand (pl.aiv_shard)
    LANE_GATHER = "lane_gather"  # the two vector lanes' parts joined for the cube (pl.aic_gather)
    RESERVE_BUFFER = "reserve_buffer"  # a named on-chip buffer for a pipe's ring
    COMM = "comm"  # talks to other ranks (pld): acts outside its result, may block


class Family(Enum):
    """The batching rule an op follows (one module each in `pypto.sim.batch.rules`)."""

    WINDOW_READ = "window_read"  # a box of a tensor at offsets (its `WindowRead`)
    WINDOW_WRITE = "window_write"  # a value written into a box (its `WindowWrite`)
    # the impl acts on the trailing axes its type rule describes (with operands carrying
    # leading batch axes it computes every batch entry at once) - elementwise ops, their
    # numpy ufunc when `Ufunc` says so
    UFUNC = "ufunc"
    REDUCE = "reduce"  # a row / column reduction on trailing axes (`Ufunc.reduce_axis`)
    EXPAND = "expand"  # a vector broadcast to the shape of the first operand, fresh
    MATMUL = "matmul"  # a float product on trailing axes (its `Matmul`)
    # integer index arithmetic: the block index, `+ - * // %` of integer scalars (its
    # `symbol`), `pl.read` of an integer at an index that differs per block
    INDEX_SCALAR = "index_scalar"
    COMPARE = "compare"  # comparisons and `and / or / not` of integer / bool scalars
    RESHAPE = "reshape"  # the same elements under a new shape
    TAG_ONLY = "tag_only"  # moves a valid-shape tag, computes nothing through it (`TagRule`)
    # integer scalar arithmetic computed per block (pl.min / pl.max); any op's call on
    # integer scalars to an integer scalar goes this way too
    PER_BLOCK = "per_block"
    FORM = "form"  # the op computes a batch itself (`Batch.form`: gather by indices)


class TagRule(Enum):
    """What a `Family.TAG_ONLY` op does to the valid-shape tag of a partial tile."""

    SET = "set"  # tags the data with a new valid shape (pl.set_validshape)
    TRANSPOSE = "transpose"  # swaps two axes into a fresh array: never tagged
    PAD = "pad"  # sets everything outside the valid part to a pad value: never tagged


@record(slots=False)
class Batch:
    """How the batch engine runs the op (see `Family`)."""

    family: Family
    # UFUNC: a partial tile's tag goes through the op as numpy tags the result of a ufunc
    # of its first `tag_arity` operands (None: its `Ufunc` fact's arity; an op without
    # either gives the batch up on a tagged operand)
    tag_arity: int | None = None
    tag_rule: TagRule | None = None  # TAG_ONLY
    # FORM: `f(nb, rank, *operands)` computes a batch of `nb` leading axes (None when it
    # cannot): gather by indices that differ per block
    form: Callable[..., Any] | None = None
    # its calls on integer scalars: one call over integer arrays for all blocks (min /
    # max, integer casts)
    int_array: Callable[..., Any] | None = None


# the families whose impl acts on trailing axes (`OpDef.batchable`)
TRAILING = frozenset((Family.UFUNC, Family.REDUCE, Family.EXPAND, Family.MATMUL))


__all__ = ["TRAILING", "Batch", "Family", "Matmul", "Role", "TagRule", "Ufunc", "View", "Window",
           "WindowRead", "WindowWrite"]
