"""Block identity, task handles, the syncall barrier and arrays."""
from __future__ import annotations

from pypto.errors import PyptoTypeError
from pypto.ir import dtypes
from pypto.ir.types import NONE, ArrayType, ScalarType, TensorType
from pypto.ops.facts import Batch, Family, Role
from pypto.ops.registry import OpError, Unit, defop
from pypto.ops.rules import array_type, dtype_arg, int_arg, py_value, type_of

_INDEX = ScalarType(dtypes.INDEX)
_TASK = ScalarType(dtypes.TASK_ID)


def _block_idx():
    """This block's index within its SPMD launch (0 .. core_num - 1)."""
    return _INDEX


def _block_num():
    """Number of blocks of the current SPMD launch."""
    return _INDEX


def _subblock_idx():
    """The AIV lane (0 or 1) of a split vector execution."""
    return _INDEX


defop("get_block_idx", unit=Unit.SCALAR, wants_ctx=True, role=Role.BLOCK_INDEX,
      batch=Batch(Family.INDEX_SCALAR),
      impl=lambda *, ctx: ctx.block_idx,
      names=("pl.get_block_idx", "pl.tile.get_block_idx", "pl.tensor.get_block_idx"))(_block_idx)
defop("get_block_num", unit=Unit.SCALAR, wants_ctx=True,
      impl=lambda *, ctx: ctx.block_num,
      names=("pl.get_block_num", "pl.tile.get_block_num", "pl.tensor.get_block_num"))(_block_num)
defop("get_subblock_idx", unit=Unit.SCALAR, wants_ctx=True, role=Role.SUBBLOCK_INDEX,
      impl=lambda *, ctx: ctx.subblock_idx,
      names=("pl.get_subblock_idx", "pl.tile.get_subblock_idx",
             "pl.tensor.get_subblock_idx"))(_subblock_idx)


def _task_dummy(deps=None):
    """A dependency-only join task that completes when every TaskId in `deps` has (an
    empty fan-in is written `deps=[]`)."""
    if deps is None:
        raise OpError("requires keyword argument 'deps' (write deps=[] for no fan-in)",
                      error=PyptoTypeError, hint="pl.system.task_dummy(deps=[tid, ...])")
    for item in getattr(deps, "items", (deps,)):
        t = getattr(item, "type", None)
        if not (isinstance(t, (ScalarType, ArrayType)) and t.dtype == dtypes.TASK_ID):
            raise OpError(f"deps= takes TaskIds (from `as tid`, pl.submit or a pl.array of "
                          f"TASK_ID), got {t}", arg="deps", error=PyptoTypeError)
    return _TASK


defop("system.task_dummy", unit=Unit.ORCH, wants_ctx=True, role=Role.TASK_JOIN,
      bind_error=PyptoTypeError,
      impl=lambda deps=None, *, ctx: ctx.new_task_id(),
      names=("pl.system.task_dummy",))(_task_dummy)


def _task_invalid():
    """The "no producer" TaskId sentinel."""
    return _TASK


defop("system.task_invalid", unit=Unit.ORCH, impl=lambda: -1,
      names=("pl.system.task_invalid",))(_task_invalid)


_SYNCALL_CORE_TYPES = ("aiv_only", "aic_only", "mix")
_MAX_USED_CORES = (1 << 31) - 1  # the participant count is an INT32 operand


def _syncall(core_type="mix", mode="hard", gm_workspace=None, used_cores=None):
    """Barrier across every block of the current SPMD launch. The hard (FFTS) form takes
    no operands; the soft form polls a shared GM INT32 workspace and needs the
    participant count (0: the launch's own), as in the real `pl.system.syncall`."""
    kind, cores = py_value(mode), py_value(core_type)
    if kind == "hard":
        for name, given in (("gm_workspace", gm_workspace), ("used_cores", used_cores)):
            if py_value(given) is not None:
                raise OpError(f"syncall(mode='hard') takes no {name}", arg=name,
                              hint="pass mode='soft' for the GM-polling barrier")
    elif kind != "soft":
        raise OpError(f"syncall mode must be 'hard' or 'soft', got {kind!r}", arg="mode")
    if cores not in _SYNCALL_CORE_TYPES:
        raise OpError(f"syncall core_type must be one of {', '.join(_SYNCALL_CORE_TYPES)}, "
                      f"got {cores!r}", arg="core_type")
    if kind == "soft":
        _soft_syncall_operands(gm_workspace, used_cores)
    return NONE


def _soft_syncall_operands(gm_workspace, used_cores) -> None:
    if py_value(gm_workspace) is None:
        raise OpError("soft syncall requires gm_workspace (a shared, zero-initialized GM INT32 "
                      "tensor)",
                      hint="pass gm_workspace=<an INT32 kernel parameter of at least 16 "
                           "elements>")
    if not isinstance(type_of(gm_workspace), TensorType):
        raise OpError(f"soft syncall gm_workspace must be a tensor, got {type_of(gm_workspace)}",
                      arg="gm_workspace")
    count = py_value(used_cores)
    if count is None:
        raise OpError("soft syncall requires an explicit used_cores",
                      hint="pass used_cores=0 only when the device launch matches the "
                           "logical grid")
    if isinstance(count, int) and not isinstance(count, bool):
        if not 0 <= count <= _MAX_USED_CORES:
            raise OpError(f"soft syncall used_cores must be in the INT32 range "
                          f"[0, {_MAX_USED_CORES}], got {count}", arg="used_cores")
        return
    t = type_of(used_cores)
    if not (isinstance(t, ScalarType) and t.dtype == dtypes.INT32):
        raise OpError(f"soft syncall used_cores must be a non-negative int or an INT32 scalar, "
                      f"got {t or repr(count)}", arg="used_cores")


defop("system.syncall", unit=Unit.SCALAR, wants_ctx=True, role=Role.BARRIER,
      impl=lambda core_type="mix", mode="hard", gm_workspace=None, used_cores=None, *, ctx:
      ctx.barrier(),
      names=("pl.system.syncall",))(_syncall)


def _count():
    """Device geometry for `pl.spmd(core_num)`."""
    return ScalarType(dtypes.INT32)


defop("system.available_cluster_count", unit=Unit.ORCH, wants_ctx=True,
      impl=lambda *, ctx: ctx.platform.clusters,
      names=("pl.system.available_cluster_count",))(_count)
defop("system.available_aiv_count", unit=Unit.ORCH, wants_ctx=True,
      impl=lambda *, ctx: ctx.platform.aiv_cores,
      names=("pl.system.available_aiv_count",))(_count)


# --- arrays -------------------------------------------------------------------------


def _array_create(extent, dtype):
    """A small on-core array of `extent` integers, booleans or TaskIds."""
    n = int_arg(extent, "extent")
    dt = dtype_arg(dtype, "dtype")
    if not (dt.is_int() or dt in (dtypes.BOOL, dtypes.TASK_ID)):
        raise OpError(f"array elements must be integers, BOOL or TASK_ID, not {dt!r}", arg="dtype")
    return ArrayType(n, dt)


defop("array.create", unit=Unit.SCALAR,
      impl=lambda extent, dtype: [(-1 if dtype == dtypes.TASK_ID else 0)] * int(extent),
      names=("pl.array.create",))(_array_create)


def _get_element(array, index):
    """`array[index]`."""
    return ScalarType(array_type(array, "array").dtype)


defop("array.get_element", unit=Unit.SCALAR, role=Role.ARRAY_GET,
      impl=lambda array, index: array[int(index)],
      names=("pl.array.get_element",))(_get_element)


def _update_element(array, index, value):
    """A new array equal to `array` with `array[index] = value` (functional update)."""
    return array_type(array, "array")


def _update_impl(array, index, value):
    out = list(array)
    out[int(index)] = value
    return out


defop("array.update_element", unit=Unit.SCALAR, impl=_update_impl, role=Role.ARRAY_SET,
      names=("pl.array.update_element",))(_update_element)
