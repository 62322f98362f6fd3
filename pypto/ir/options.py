"""Values the IR carries as compile-time attributes that the passes and the ops act on:
pad values, and the per-region optimizations of a launch (`pl.split`,
`pl.cross_core_slot`). They live here, on the ground, so that the layers above can
recognise them by type; `pypto.language` hands them to users as `pl.*`."""
from __future__ import annotations

from enum import Enum, IntEnum

from pypto.ir.record import record


class AtomicType(IntEnum):
    """How a store meets what is there: overwrite (`None_`) or add (`Add`); an op's
    `atomic=` argument carries its integer value."""

    None_ = 0
    Add = 1


class SplitMode(IntEnum):
    NONE = 0
    UP_DOWN = 1
    LEFT_RIGHT = 2


class PadValue(Enum):
    null = "null"
    zero = "zero"
    max = "max"
    min = "min"


class TensorLayout(Enum):
    """How a tensor's elements lie in global memory (`pl.ND`, `pl.NZ`, ...)."""

    ND = "ND"
    DN = "DN"
    NZ = "NZ"
    MX_A_ZZ = "MX_A_ZZ"
    MX_B_NN = "MX_B_NN"


class Optimization:
    """Base of the per-region hints listed in `pl.at(..., optimizations=[...])`."""


@record(slots=False)
class Split(Optimization):
    """Ping-pong the vector half of a mixed cube+vector region across two AIV lanes."""

    mode: SplitMode
    slot_num: int | None = None


@record(slots=False)
class CrossCoreSlot(Optimization):
    """Ring depth of the compiler-inserted cube<->vector pipe (default 2)."""

    slot_num: int = 2


__all__ = ["CrossCoreSlot", "Optimization", "PadValue", "Split", "SplitMode", "TensorLayout"]
