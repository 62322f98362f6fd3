"""`import pypto.language as pl` — the tile-kernel language.

Only definitions live here; parsing, passes and the simulator are imported
lazily the first time a kernel is compiled, so importing `pl` stays cheap.
"""
from __future__ import annotations

import types as _types

from pypto.ir.dtypes import (BF16, BOOL, FP4, FP8E4M3FN, FP8E5M2, FP8E8M0, FP16, FP32, HF4, HF8,
                             INDEX, INT4, INT8, INT16, INT32, INT64, TASK_ID, UINT4, UINT8, UINT16,
                             UINT32, UINT64, DType)
from pypto.language import dsl as _dsl
from pypto.language.dsl import (at, cluster, cond, const, dump_tag, func_attr, manual_scope,
                                no_dep, parallel, pipeline, range, scope, split_aiv, spmd,
                                spmd_submit, static_assert, static_print, submit, unroll, while_,
                                yield_)
from pypto.language.enums import (AUTO, DN, MX_A_ZZ, MX_B_NN, ND, NZ, AtomicType, CompactMode,
                                  CrossCoreSlot, ForKind, FunctionType, Level, MaskPattern, Mem,
                                  MemorySpace, Optimization, PadValue, PipeType, Role, ScopeMode,
                                  Split, SplitMode, TensorLayout, TileLayout, cross_core_slot,
                                  split)
from pypto.language.jit import FunctionDef, JITFunction, ProgramDef, function, jit, program
from pypto.language.ops import OpStub as _OpStub
from pypto.language.ops import build_namespaces as _build_namespaces
from pypto.language.typing import (Array, DynVar, InOut, Out, Scalar, Tensor, Tile, Tuple,
                                   dynamic)

DataType = DType
TaskId = Scalar[TASK_ID]

optimizations = _types.SimpleNamespace(Optimization=Optimization, Split=Split,
                                       CrossCoreSlot=CrossCoreSlot, split=split,
                                       cross_core_slot=cross_core_slot)


def _namespace(name: str, stubs: dict) -> _types.SimpleNamespace:
    ns = _types.SimpleNamespace(**stubs)
    ns.__name__ = name
    return ns


_spaces = _build_namespaces()
tensor = _namespace("pl.tensor", _spaces.get("pl.tensor", {}))
tile = _namespace("pl.tile", _spaces.get("pl.tile", {}))
tile.MaskPattern = MaskPattern
system = _namespace("pl.system", _spaces.get("pl.system", {}))
array = _namespace("pl.array", _spaces.get("pl.array", {}))
prefetch = _namespace("pl.prefetch", _spaces.get("pl.prefetch", {}))
globals().update(_spaces.get("pl", {}))
# the parser supplies the split mode of pl.aiv_shard from its enclosing pl.split_aiv loop
aiv_shard = tile.aiv_shard = tensor.aiv_shard = _dsl.aiv_shard

__all__ = sorted(n for n in globals() if not n.startswith("_") and n != "annotations")
