"""`pypto.backend.pto_backend`: the real toolchain's PTO code generator.

pypto-lab generates no device code (the simulator runs the IR), so of this module only
the error type a caller may catch is meaningful here: `PartialCodegenError`, the real
compiler's report that code generation failed for some of a program's kernels. The one
kernel shape known to end there is refused by the parser with a located error of that
class (`OutRebindError`); a program that guards a compile with it runs unchanged.
"""
from __future__ import annotations

from pypto.errors import OutRebindError, PartialCodegenError

__all__ = ["OutRebindError", "PartialCodegenError"]
