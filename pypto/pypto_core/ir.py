"""`pypto.pypto_core.ir`: the IR enums tests and kernels import from the real toolchain's
native module, with the meaning they have here (`CoreType` of the SoC model,
`MemorySpace` of tiles)."""
from __future__ import annotations

from pypto.backend.soc import CoreType
from pypto.ir.types import MemorySpace

__all__ = ["CoreType", "MemorySpace"]
