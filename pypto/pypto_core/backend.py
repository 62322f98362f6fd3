"""`pypto.pypto_core.backend`: the real toolchain's native backend module; here the same
names as `pypto.backend`."""
from __future__ import annotations

from pypto.backend import (
    Backend,
    Backend910B,
    Backend950,
    BackendType,
    Cluster,
    Core,
    Die,
    Mem,
    SoC,
    get_backend_instance,
    get_backend_type,
    is_backend_configured,
    reset_for_testing,
    set_backend_type,
)

__all__ = ["Backend", "Backend910B", "Backend950", "BackendType", "Cluster", "Core", "Die",
           "Mem", "SoC", "get_backend_instance", "get_backend_type", "is_backend_configured",
           "reset_for_testing", "set_backend_type"]
