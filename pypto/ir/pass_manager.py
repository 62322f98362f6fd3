"""`pypto.ir.pass_manager`: the names of the compiler's optimisation strategies.

The real toolchain has one strategy, `Default` (its full tensor-oriented pipeline);
pypto-lab runs its own pass list (`pypto.passes`) whatever the strategy, so this is the
name callers pass, accepted with that one meaning.
"""
from __future__ import annotations

from enum import Enum


class OptimizationStrategy(Enum):
    """How the compiler's pass pipeline is chosen."""

    Default = "Default"  # the full pipeline


__all__ = ["OptimizationStrategy"]
