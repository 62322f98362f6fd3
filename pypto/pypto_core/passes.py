"""Configuration names of the real compiler's pass layer."""
from __future__ import annotations

from enum import Enum

from pypto.pypto_core import l0_tile_chooser  # ChooseL0Tile, under its real name


class MemoryPlanner(Enum):
    """Who plans on-chip buffer addresses in the real compiler (PyPTO's own reuse and
    allocation passes, its DSA-RP planner, or ptoas). The simulator keeps every tile
    in its own array and has no address planning, so each choice runs the same; the
    on-chip budget estimate (`compiled.regions`) does not depend on it either."""

    PYPTO = "pypto"
    DSA_RP = "dsa_rp"
    PTOAS = "ptoas"


__all__ = ["MemoryPlanner", "l0_tile_chooser"]
