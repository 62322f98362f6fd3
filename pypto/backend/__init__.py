"""`pypto.backend`: which Ascend SoC family code is generated for.

The real compiler selects its code generator with a process-wide backend type; here
the simulator stands in for the chip, and the type names the platform pair it runs
(`Ascend910B`: a2a3 / a2a3sim, `Ascend950`: a5 / a5sim). Kernel files and test
harnesses that configure it keep working; the platform a run asks for still decides
which simulator runs it. Each family's SoC model (dies, clusters, cores and their
memories) is `Backend910B.instance().soc` / `Backend950.instance().soc`
(`pypto.backend.soc`).
"""
from __future__ import annotations

from enum import Enum

from pypto.backend.soc import Backend, Backend910B, Backend950, Cluster, Core, Die, Mem, SoC


class BackendType(Enum):
    """An Ascend SoC family, named as in the real toolchain."""

    Ascend910B = "a2a3"
    Ascend950 = "a5"

    @property
    def platform(self) -> str:
        """The device platform of this family ("a2a3" / "a5")."""
        return self.value

    @property
    def sim_platform(self) -> str:
        """The simulator that stands in for it ("a2a3sim" / "a5sim")."""
        return self.value + "sim"

    @classmethod
    def for_platform(cls, platform: str) -> BackendType:
        """The family of a platform name (device or simulator)."""
        for member in cls:
            if platform in (member.platform, member.sim_platform):
                return member
        raise ValueError(f"unknown platform {platform!r}; expected one of a2a3, a2a3sim, "
                         "a5, a5sim")


_configured: list[BackendType] = []  # at most one: the process-wide backend type


def set_backend_type(backend_type: BackendType) -> None:
    """Set the process-wide backend type; setting it again to another type is an error
    (as in the real toolchain) until `reset_for_testing()`."""
    if not isinstance(backend_type, BackendType):
        raise TypeError(f"set_backend_type expects a BackendType, got {backend_type!r}")
    if _configured and _configured[0] is not backend_type:
        raise ValueError(f"backend type is already {_configured[0].name}; cannot change it "
                         f"to {backend_type.name}")
    _configured[:] = [backend_type]


def get_backend_type() -> BackendType:
    """The configured backend type (ValueError when none was set)."""
    if not _configured:
        raise ValueError("backend type has not been configured (call set_backend_type)")
    return _configured[0]


def get_backend_instance() -> Backend:
    """The SoC model of the configured backend type (`pypto.backend.soc`)."""
    family = get_backend_type()
    return (Backend910B if family is BackendType.Ascend910B else Backend950).instance()


def is_backend_configured() -> bool:
    return bool(_configured)


def reset_for_testing() -> None:
    """Forget the configured backend type (tests switch between families)."""
    _configured.clear()


__all__ = [
    "Backend",
    "Backend910B",
    "Backend950",
    "BackendType",
    "Cluster",
    "Core",
    "Die",
    "Mem",
    "SoC",
    "get_backend_instance",
    "get_backend_type",
    "is_backend_configured",
    "reset_for_testing",
    "set_backend_type",
]
