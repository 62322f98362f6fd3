"""The SoC model of each backend: dies of clusters of cores, each core with its on-chip
memories - the hierarchy the real toolchain describes (`pypto.backend.Backend910B
.instance().soc`), built here from the platform table (`pypto.platform`), so the
numbers a kernel or test reads off the model are the ones the simulator checks against.

Ascend910B (a2a3): one die of 24 single-AIC clusters and 48 single-AIV clusters.
Ascend950 (a5): two dies of 18 mixed clusters (1 AIC + 2 AIV each).
Core counts, and the capacity of each memory space per core, are what the model
answers (`Backend.get_core_count`, `Backend.get_mem_size`); alignments are the real
toolchain's.
"""
from __future__ import annotations

import abc
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import IntEnum

from pypto.ir.types import MemorySpace
from pypto.platform import A2A3SIM, A5SIM, Platform


class CoreType(IntEnum):
    """The kind of an AI core (the values are the runtime's task core types)."""

    CUBE = 0  # AIC
    VECTOR = 1  # AIV


@dataclass(frozen=True)
class Mem:
    """One on-chip memory of a core."""

    mem_type: MemorySpace
    mem_size: int  # usable bytes
    alignment: int  # bytes


@dataclass(frozen=True)
class Core:
    core_type: CoreType
    mems: tuple[Mem, ...]


def _total(counts: Mapping, of) -> int:
    return sum(of(k) * n for k, n in counts.items())


@dataclass(frozen=True)
class Cluster:
    """Cores that are launched together (a cube and its vector lanes on a5)."""

    core_counts: Mapping[Core, int] = field(hash=False)

    def __hash__(self) -> int:
        return hash(tuple(sorted((c.core_type, n) for c, n in self.core_counts.items())))

    def total_core_count(self) -> int:
        return sum(self.core_counts.values())


@dataclass(frozen=True)
class Die:
    cluster_counts: Mapping[Cluster, int] = field(hash=False)

    def __hash__(self) -> int:
        return hash(tuple(sorted((hash(c), n) for c, n in self.cluster_counts.items())))

    def total_cluster_count(self) -> int:
        return sum(self.cluster_counts.values())

    def total_core_count(self) -> int:
        return _total(self.cluster_counts, Cluster.total_core_count)


@dataclass(frozen=True)
class SoC:
    die_counts: Mapping[Die, int] = field(hash=False)

    def total_die_count(self) -> int:
        return sum(self.die_counts.values())

    def total_cluster_count(self) -> int:
        return _total(self.die_counts, Die.total_cluster_count)

    def total_core_count(self) -> int:
        return _total(self.die_counts, Die.total_core_count)


def _cores(p: Platform) -> tuple[Core, Core]:
    """The (AIC, AIV) cores of platform `p`, their memories from its capacity table."""
    cube = [(MemorySpace.Mat, 128), (MemorySpace.Left, 64), (MemorySpace.Right, 64),
            (MemorySpace.Acc, 128), (MemorySpace.Bias, 64)]
    aic = Core(CoreType.CUBE, tuple(Mem(m, p.capacity(m.name), a) for m, a in cube))
    aiv = Core(CoreType.VECTOR, (Mem(MemorySpace.Vec, p.capacity("Vec"), 128),))
    return aic, aiv


def _soc_910b() -> SoC:
    aic, aiv = _cores(A2A3SIM)
    die = Die({Cluster({aic: 1}): A2A3SIM.aic_cores, Cluster({aiv: 1}): A2A3SIM.aiv_cores})
    return SoC({die: 1})


def _soc_950() -> SoC:
    aic, aiv = _cores(A5SIM)
    dies = 2
    mixed = Cluster({aic: 1, aiv: A5SIM.aiv_cores // A5SIM.aic_cores})
    return SoC({Die({mixed: A5SIM.clusters // dies}): dies})


class Backend(abc.ABC):
    """A backend: its SoC model and the platform numbers behind it."""

    type_name = ""
    platform: Platform
    _instance: Backend | None = None

    def __init__(self) -> None:
        self.soc = self.make_soc()

    @abc.abstractmethod
    def make_soc(self) -> SoC:
        """This family's SoC model."""

    @classmethod
    def instance(cls) -> Backend:
        """The one model of this backend."""
        if cls._instance is None or type(cls._instance) is not cls:
            cls._instance = cls()
        return cls._instance

    def get_type_name(self) -> str:
        return self.type_name

    def get_core_count(self, core_type: CoreType) -> int:
        """How many cores of `core_type` the SoC has."""
        return sum(core_n * cluster_n * die_n
                   for die, die_n in self.soc.die_counts.items()
                   for cluster, cluster_n in die.cluster_counts.items()
                   for core, core_n in cluster.core_counts.items()
                   if core.core_type == core_type)

    def get_mem_size(self, mem_type: MemorySpace) -> int:
        """Usable bytes of memory `mem_type` in one core that has it (0: no core has it)."""
        for die in self.soc.die_counts:
            for cluster in die.cluster_counts:
                for core in cluster.core_counts:
                    for m in core.mems:
                        if m.mem_type == mem_type:
                            return m.mem_size
        return 0

    def __repr__(self) -> str:
        return f"{type(self).__name__}(cores={self.soc.total_core_count()})"


class Backend910B(Backend):
    type_name = "910B"
    platform = A2A3SIM

    def make_soc(self) -> SoC:
        return _soc_910b()


class Backend950(Backend):
    type_name = "950"
    platform = A5SIM

    def make_soc(self) -> SoC:
        return _soc_950()


__all__ = ["Backend", "Backend910B", "Backend950", "Cluster", "Core", "CoreType", "Die",
           "Mem", "SoC"]
