"""`import pypto.language as pl` — the tile-kernel language.

Only definitions live here; parsing, passes and the simulator are imported
lazily the first time a kernel is compiled, so importing `pl` stays cheap.
"""
from __future__ import annotations

import sys as _sys
import types as _types

from pypto.ir.dtypes import (
    BF16,
    BOOL,
    FP4,
    FP8E4M3FN,
    FP8E5M2,
    FP8E8M0,
    FP16,
    FP32,
    HF4,
    HF8,
    INDEX,
    INT4,
    INT8,
    INT16,
    INT32,
    INT64,
    TASK_ID,
    UINT4,
    UINT8,
    UINT16,
    UINT32,
    UINT64,
    DType,
)
from pypto.ir.nodes import Expr as _Expr
from pypto.ir.nodes import Program as _Program
from pypto.language import arg_direction as adir
from pypto.language import dsl as _dsl
from pypto.language import parser
from pypto.language.dsl import (
    at,
    cluster,
    cond,
    const,
    dump_tag,
    func_attr,
    manual_scope,
    no_dep,
    parallel,
    pipeline,
    range,
    scope,
    split_aiv,
    spmd,
    spmd_submit,
    static_assert,
    static_print,
    submit,
    unroll,
    while_,
    yield_,
)
from pypto.language.enums import (
    AUTO,
    DN,
    MX_A_ZZ,
    MX_B_NN,
    ND,
    NZ,
    AtomicType,
    CompactMode,
    CrossCoreSlot,
    ForKind,
    FunctionType,
    Level,
    MaskPattern,
    Mem,
    MemorySpace,
    Optimization,
    PadValue,
    PipeType,
    Role,
    ScopeMode,
    Split,
    SplitMode,
    TensorLayout,
    TileLayout,
    cross_core_slot,
    split,
)
from pypto.language.jit import (
    FunctionDef,
    InlineFunction,
    JITFunction,
    ProgramDef,
    function,
    inline,
    jit,
    program,
)
from pypto.language.ops import OpStub as _OpStub
from pypto.language.ops import build_namespaces as _build_namespaces
from pypto.language.typing import (
    RUNTIME,
    Array,
    AsyncEvent,
    AsyncSession,
    DynVar,
    InOut,
    MemRef,
    MemRefType,
    Out,
    PrefetchAsyncContext,
    Ptr,
    Scalar,
    Tensor,
    TensorView,
    Tile,
    TileView,
    Tuple,
    dynamic,
)
from pypto.language.typing import ScalarAnnotation as _ScalarAnnotation

DataType = DType
PtrType = Ptr  # the real toolchain's name of the alloc result's type
TaskId: _ScalarAnnotation = Scalar[TASK_ID]  # an annotation object, not a type alias
IntLike = int | Scalar | _Expr  # an integer operand of a helper's signature: a literal or a scalar

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
tile.MemRefType = MemRefType
system = _namespace("pl.system", _spaces.get("pl.system", {}))
system.AUTO = AUTO  # pl.system.reserve_buffer(..., base=pl.system.AUTO), as the real names
# the real pl.tensor holds the call-argument markers too (the same constructs)
tensor.no_dep, tensor.dump_tag = no_dep, dump_tag
array = _namespace("pl.array", _spaces.get("pl.array", {}))
prefetch = _namespace("pl.prefetch", _spaces.get("pl.prefetch", {}))
globals().update(_spaces.get("pl", {}))



# --- the text form: pl.parse / pl.loads ------------------------------------------------


def parse(code: str, filename: str = "<string>",
          source_map: dict[int, tuple[str, int, int]] | None = None):
    """Parse a `@pl.program` class or a `@pl.function` from source text into IR: a
    `Program` or a `Function` (whichever the text holds; exactly one).

    The text is read, not executed, in the form the IR printer writes
    (`pypto.ir.printer.print_program`), so printing a program and parsing the text back
    gives the same IR. Names the text does not define that its signatures use are
    `pl.dynamic` symbols. `source_map` maps a line of `code` to (file, line, column) of
    where it came from, for diagnostics. Malformed text raises a located `PyptoError`;
    text with no or several programs raises `ValueError`.
    """
    # the reader is part of the frontend, imported on first use (importing pl stays cheap)
    from pypto.frontend.text import parse_text

    return parse_text(code, filename, {"pl": _sys.modules[__name__]}, source_map)


def loads(filepath: str):
    """Parse the `@pl.program` or `@pl.function` in the file `filepath` (see `parse`)."""
    with open(filepath, encoding="utf-8") as f:
        code = f.read()
    return parse(code, filename=str(filepath))


def parse_program(code: str, filename: str = "<string>"):
    """`parse`, for text that must hold a `@pl.program` (deprecated: use `parse`)."""
    return _expect_program(parse(code, filename), filename)


def loads_program(filepath: str):
    """`loads`, for a file that must hold a `@pl.program` (deprecated: use `loads`)."""
    return _expect_program(loads(filepath), filepath)


def _expect_program(result, where: str):
    if not isinstance(result, _Program):
        raise ValueError(f"Expected @pl.program but found @pl.function in {where}. Use "
                         "pl.parse() for auto-detection or ensure your code contains "
                         "@pl.program.")
    return result


# the real pl.parser also re-exports the decorators and annotation names it parses
for _name in ("parse", "parse_program", "loads", "loads_program", "function", "inline",
              "program", "InlineFunction", "range", "yield_", "Tensor", "Tile", "Scalar"):
    setattr(parser, _name, globals()[_name])
del _name

__all__ = sorted(n for n in globals() if not n.startswith("_") and n != "annotations")
