"""Enums and small value classes of the `pl` namespace."""
from __future__ import annotations

import inspect
from enum import Enum, IntEnum

from pypto.errors import PyptoSyntaxError
from pypto.ir.nodes import FunctionKind
from pypto.ir.options import (  # noqa: F401
    AtomicType,
    CrossCoreSlot,
    Optimization,
    PadValue,
    Split,
    SplitMode,
    TensorLayout,
)
from pypto.ir.types import MemorySpace

Mem = MemorySpace


class Level(Enum):
    AIV = "AIV"
    AIC = "AIC"
    CORE_GROUP = "CORE_GROUP"
    CHIP_DIE = "CHIP_DIE"
    CHIP = "CHIP"
    HOST = "HOST"
    CLUSTER_0 = "CLUSTER_0"
    CLUSTER_1 = "CLUSTER_1"
    CLUSTER_2 = "CLUSTER_2"
    GLOBAL = "GLOBAL"
    # aliases
    L2CACHE = "CHIP_DIE"
    PROCESSOR = "CHIP"
    UMA = "CHIP"
    NODE = "HOST"
    POD = "CLUSTER_0"
    CLOS1 = "CLUSTER_1"
    CLOS2 = "CLUSTER_2"


# the real `ir.level_to_linqu_level`: how far up the machine each level sits
LINQU_LEVEL = {Level.AIV: 0, Level.AIC: 0, Level.CORE_GROUP: 0, Level.CHIP_DIE: 1,
               Level.CHIP: 2, Level.HOST: 3, Level.CLUSTER_0: 4, Level.CLUSTER_1: 5,
               Level.CLUSTER_2: 6, Level.GLOBAL: 7}


class FunctionType(Enum):
    Opaque = FunctionKind.OPAQUE.value
    Orchestration = FunctionKind.ORCHESTRATION.value
    InCore = FunctionKind.INCORE.value
    AIC = FunctionKind.AIC.value
    AIV = FunctionKind.AIV.value
    Group = FunctionKind.GROUP.value
    Inline = FunctionKind.INLINE.value
    Spmd = "Spmd"
    Graph = "Graph"


class ArgDirection(Enum):
    """How a task takes one argument at its call site (the runtime's argument kinds);
    `pl.adir.<name>` spells each member."""

    Input = "input"  # read only
    Output = "output"  # a buffer the runtime allocates for the task to write
    InOut = "inout"  # read, then written
    OutputExisting = "output_existing"  # written into the caller's existing tensor
    NoDep = "no_dep"  # an existing tensor the scheduler tracks no dependency on
    Scalar = "scalar"  # a scalar argument


class Role(Enum):
    Orchestrator = "Orchestrator"
    SubWorker = "SubWorker"


ND = TensorLayout.ND
DN = TensorLayout.DN
NZ = TensorLayout.NZ
MX_A_ZZ = TensorLayout.MX_A_ZZ
MX_B_NN = TensorLayout.MX_B_NN


class TileLayout(Enum):
    none_box = "none_box"
    row_major = "row_major"
    col_major = "col_major"


class ScopeMode(IntEnum):
    AUTO = 0
    MANUAL = 1


class PipeType(Enum):
    MTE1 = "MTE1"
    MTE2 = "MTE2"
    MTE3 = "MTE3"
    M = "M"
    V = "V"
    S = "S"
    FIX = "FIX"
    ALL = "ALL"


class ForKind(Enum):
    Sequential = "Sequential"
    Parallel = "Parallel"
    Unroll = "Unroll"
    Pipeline = "Pipeline"


class MaskPattern(IntEnum):
    P0101 = 1
    P1010 = 2
    P0001 = 3
    P0010 = 4
    P0100 = 5
    P1000 = 6
    P1111 = 7


class CompactMode(Enum):
    null = "null"
    normal = "normal"


AUTO = -1


# --- optimizations ------------------------------------------------------------------


# (Optimization, Split, CrossCoreSlot: pypto.ir.options, where the passes recognise them)


def split(mode: SplitMode, *, slot_num: int | None = None, **unknown: object) -> Split:
    """`pl.split(mode)`: the optimization entry that splits a region's vector work
    across the two AIV lanes (`slot_num=` is the deprecated spelling of
    `pl.cross_core_slot`). An unknown keyword is the real parser's located
    ParserSyntaxError, not Python's TypeError: `**unknown` catches it, and the
    signature shown is the real one."""
    if unknown:
        raise PyptoSyntaxError(f"pl.split: Unknown keyword argument '{next(iter(unknown))}'",
                               hint="pl.split takes the mode and, deprecated, slot_num=")
    if slot_num is not None:
        _positive_slots("pl.split", slot_num)
    return Split(SplitMode(mode), slot_num)


def cross_core_slot(*, slot_num: int) -> CrossCoreSlot:
    """`pl.cross_core_slot(slot_num=N)`: the ring depth of the cube<->vector pipe."""
    _positive_slots("pl.cross_core_slot", slot_num)
    return CrossCoreSlot(slot_num)


split.__signature__ = inspect.signature(split).replace(  # type: ignore[attr-defined]
    parameters=list(inspect.signature(split).parameters.values())[:2])


def _positive_slots(what: str, slot_num: object) -> None:
    if isinstance(slot_num, bool) or not isinstance(slot_num, int) or slot_num < 1:
        raise PyptoSyntaxError(f"{what}(slot_num=...) must be positive, got {slot_num!r}",
                               hint="a pipe holds at least one slot; the default is 2")
