"""The platform table: the hardware numbers the compiler passes, the simulator's checks
and its cost model use (one table; everything that needs a capacity reads it here).

Two platforms exist: `a2a3sim` (Ascend910B, the default) and `a5sim` (Ascend950); the
names of the real hardware (`a2a3`, `a5`) compile for the same numbers (`lookup`) but
cannot be simulated (`get_platform`).
Numbers marked "reference" come from the research notes on the real toolchain
(`src/backend/common/soc.cpp`, the backend handlers, the swimlane docs); numbers
marked "assumed" are round figures this simulator picks because the reference
gives none (vector width, GM bandwidth per core, clock). Every estimate built from
them is a *model*, good for comparing two versions of a kernel, not a prediction
of wall time on a chip.
"""
from __future__ import annotations

from dataclasses import field

from pypto.errors import SimulationError
from pypto.ir.record import record

# what a kernel compiles and runs for when nobody names a platform
DEFAULT_PLATFORM = "a2a3sim"


@record(slots=False)
class Platform:
    name: str
    chip: str
    # --- geometry (reference) ---
    clusters: int  # 1 AIC + 2 AIV each
    aic_cores: int
    aiv_cores: int
    # --- on-chip capacities in bytes (reference) ---
    ub_bytes: int  # usable Vec (unified buffer)
    l1_bytes: int  # Mat
    l0a_bytes: int  # Left
    l0b_bytes: int  # Right
    l0c_bytes: int  # Acc
    bias_bytes: int
    # --- cube (reference) ---
    mad_head_cycles: int  # fixed cycles per TMATMUL
    mad_fp32_passes: int  # passes per fractal for FP32 operands (1 for <= 2-byte inputs)
    l1_to_l0a_bpc: float  # bytes / cycle
    l1_to_l0b_bpc: float
    fix_fixed_cycles: float  # per L0C drain
    fix_row_floor: float  # cycles per row, floor
    fix_bpc: float  # bytes / cycle per row
    # --- GM access (reference) ---
    gm_granule: int  # bytes: rows narrower than this still cost a whole burst
    # --- cross-core pipe (reference) ---
    ring_on_chip: bool = False  # the C<->V ring sits in the consumer's SRAM (a5), not in GM
    # --- assumed ---
    clock_ghz: float = 1.8
    vector_bpc: float = 256.0  # vector unit: 256 bytes of operands per cycle
    vector_issue_cycles: float = 8.0  # fixed cost per vector instruction
    gm_bpc: float = 64.0  # GM <-> on-chip bytes per cycle per core (MTE2 / MTE3)
    task_overhead_us: float = 0.8  # pickup latency per task switch (reference: swimlane doc)
    notes: dict = field(default_factory=dict)

    def capacity(self, space: str) -> int:
        """Usable bytes of on-chip memory `space` (Vec, Mat, Left, Right, Acc, Bias); 0 for
        a space without a budget."""
        return {"Vec": self.ub_bytes, "Mat": self.l1_bytes, "Left": self.l0a_bytes,
                "Right": self.l0b_bytes, "Acc": self.l0c_bytes, "Bias": self.bias_bytes
                }.get(space, 0)

    def full_occupancy(self, core_type: str = "mix") -> int:
        """Blocks a hard `syncall` launch may have (one per co-resident core)."""
        return self.aiv_cores if core_type == "aiv_only" else self.aic_cores


A2A3SIM = Platform(
    name="a2a3sim", chip="Ascend910B (A2/A3)", clusters=24, aic_cores=24, aiv_cores=48,
    ub_bytes=188416, l1_bytes=512 * 1024, l0a_bytes=64 * 1024, l0b_bytes=64 * 1024,
    l0c_bytes=128 * 1024, bias_bytes=1024,
    mad_head_cycles=21, mad_fp32_passes=2, l1_to_l0a_bpc=129.7, l1_to_l0b_bpc=85.4,
    fix_fixed_cycles=164.0, fix_row_floor=4.45, fix_bpc=118.0, gm_granule=512,
)

A5SIM = Platform(
    name="a5sim", chip="Ascend950 (A5)", clusters=36, aic_cores=36, aiv_cores=72,
    ub_bytes=240 * 1024, l1_bytes=512 * 1024, l0a_bytes=64 * 1024, l0b_bytes=64 * 1024,
    l0c_bytes=256 * 1024, bias_bytes=4 * 1024,
    mad_head_cycles=25, mad_fp32_passes=8, l1_to_l0a_bpc=206.3, l1_to_l0b_bpc=223.8,
    fix_fixed_cycles=343.4, fix_row_floor=4.59, fix_bpc=30.0, gm_granule=128,
    ring_on_chip=True, gm_bpc=128.0,
)

PLATFORMS = {p.name: p for p in (A2A3SIM, A5SIM)}
_HARDWARE = {"a2a3": "a2a3sim", "a5": "a5sim"}


def lookup(name: str | Platform | None) -> Platform:
    """The numbers of platform `name` for compiling: a simulated platform, the simulated
    twin of real hardware (`a2a3` -> a2a3sim), and a2a3sim for anything else."""
    if isinstance(name, Platform):
        return name
    key = str(name).lower() if name is not None else "a2a3sim"
    return PLATFORMS.get(_HARDWARE.get(key, key), A2A3SIM)


def get_platform(name: str | Platform | None) -> Platform:
    """The simulated platform called `name` (default a2a3sim)."""
    if isinstance(name, Platform):
        return name
    if name is None:
        return A2A3SIM
    key = str(name).lower()
    if key in PLATFORMS:
        return PLATFORMS[key]
    if key in _HARDWARE:
        raise SimulationError(
            f"platform '{name}' is real Ascend hardware; this build of pypto simulates only",
            hint=f"use platform='{_HARDWARE[key]}' to run on the built-in simulator")
    raise SimulationError(f"unknown platform '{name}'",
                          hint="choose one of: " + ", ".join(sorted(PLATFORMS)))
