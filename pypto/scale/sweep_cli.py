"""`pypto-sim --sweep NAME=V1,V2,... KERNEL.py`: a tile-size sweep from the command line."""
from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path

from pypto.scale.cluster import ScaleError
from pypto.scale.constants import ConstantError
from pypto.scale.sweep import SweepPoint, sweep


class SweepUsageError(ValueError):
    pass


def parse_grid(items: list[str]) -> dict[str, list]:
    """["M_TILE=32,64", "K_TILE=64"] -> {"M_TILE": [32, 64], "K_TILE": [64]}."""
    grid: dict[str, list] = {}
    for item in items:
        name, eq, values = item.partition("=")
        if not eq or not name.strip().isidentifier() or not values.strip():
            raise SweepUsageError(f"--sweep {item!r}: expected NAME=V1,V2,... "
                                  "(e.g. --sweep M_TILE=32,64,128)")
        parsed = []
        for v in values.split(","):
            try:
                parsed.append(int(v) if v.strip().lstrip("+-").isdigit() else float(v))
            except ValueError:
                raise SweepUsageError(f"--sweep {name}: {v!r} is not a number") from None
        grid[name.strip()] = parsed
    return grid


def _point_line(p: SweepPoint) -> str:
    vals = ", ".join(f"{k}={v}" for k, v in p.values.items())
    est = f"{p.est_us:.2f} us" if p.est_us is not None else "-"
    return f"  {vals}: {p.verdict or 'ok'} ({est}, {p.seconds:.1f} s) {p.reason[:100]}"


def run_sweep_command(inv, out: Callable[[str], None]) -> int:
    if len(inv.targets) != 1 or not Path(inv.targets[0]).is_file():
        print("pypto-sim: --sweep takes exactly one kernel file", file=sys.stderr)
        return 2
    try:
        grid = parse_grid(inv.get("--sweep"))
        workers = int(inv.get("--workers")) if inv.get("--workers") else None
        client = None if inv.get("--serial") else "local"
        result = sweep(inv.targets[0], grid, kernel=inv.get("--kernel"),
                       specs=inv.get("--specs"), golden=inv.get("--golden"),
                       scheduler=inv.get("--scheduler"), workers=workers, client=client,
                       on_point=None if inv.get("--quiet") else lambda p: out(_point_line(p)))
    except (SweepUsageError, ConstantError, ScaleError, ValueError) as err:
        print(f"pypto-sim: {err}", file=sys.stderr)
        return 2
    out(result.table())
    if inv.get("--json"):
        Path(inv.get("--json")).write_text(json.dumps(result.to_dict(), indent=1, default=str))
    return 0 if result.best is not None else 1
