"""`pypto.backend.pto_backend`: the real toolchain's PTO code generator.

pypto-lab generates no device code (the simulator runs the IR), so of this module only
the error type a caller may catch is meaningful here: `PartialCodegenError`, the real
compiler's report that code generation failed for some of a program's kernels. Nothing
in pypto-lab raises it; a program that guards a compile with it runs unchanged.
"""
from __future__ import annotations


class PartialCodegenError(RuntimeError):
    """Code generation failed for some kernels of a program (never raised by pypto-lab,
    which has no code generator)."""


__all__ = ["PartialCodegenError"]
