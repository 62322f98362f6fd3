"""Tile-size sweeps: one kernel over a grid of tiling constants, each point a Dask task.

    from pypto.scale import sweep
    r = sweep("examples/intermediate/gemm.py", {"M_TILE": [32, 64, 128], "K_TILE": [32, 64]})
    print(r.table()); r.best

A kernel is parameterised by its module-level constants (`pypto.scale.constants`): each
point reruns the kernel's module with those assignments rewritten, then compiles the
kernel, checks its regions' on-chip estimates against the platform budget, runs it
through the golden harness and reads the cost model's estimated time from the trace
(`pypto.golden.record.estimated_us`: the sum of the tasks' estimates). A point that
does not compile or does not fit is not simulated.

What runs at a point: `kernel` (default: the module's one `@pl.jit` entry kernel),
`specs` (a list of TensorSpec, a callable returning one, or the name of a module
function - default `build_tensor_specs`, so specs follow the constants) and `golden`
(a golden_fn, the name of one, default the module's one `golden_*` function).

Where it runs (`client`): a `distributed.Client`; "local" for a LocalCluster started
for this sweep; None for the default client when one exists (`distributed.Client()`
made earlier, e.g. in the notebook), else this process, one point after another.
"""
from __future__ import annotations

import itertools
import textwrap
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from pypto.scale.cluster import as_completed, default_client, open_client
from pypto.scale.sweep_point import SweepCase, SweepPoint, case_for, evaluate

__all__ = ["SweepCase", "SweepPoint", "SweepResult", "grid_points", "sweep"]


def grid_points(grid: dict[str, list]) -> list[dict]:
    if not grid:
        raise ValueError("a sweep needs at least one constant and its values")
    for name, values in grid.items():
        if not list(values):
            raise ValueError(f"{name}: no values to sweep")
    names = list(grid)
    return [dict(zip(names, combo)) for combo in itertools.product(*grid.values())]


def _bytes(n: int) -> str:
    """A ring heap's bytes, short: 512 B, 32 KiB, 1.5 MiB."""
    return f"{n / 2**20:.1f} MiB" if n >= 2**20 else f"{n // 1024} KiB" if n >= 1024 \
        else f"{n} B"


def _why(p: SweepPoint) -> str:
    """What sets a point's estimate, in words (the table's last columns)."""
    e = p.estimate
    if e is None:
        return ""
    return (f": bound by the {e.bound}, {e.launch_us:.2f} us of it launching {e.tasks} "
            "task(s)")


@dataclass
class SweepResult:
    """Every point of a sweep, in grid order."""

    kernel: str
    grid: dict
    points: list[SweepPoint]
    seconds: float = 0.0
    where: str = ""
    failures: list = field(default_factory=list)

    @property
    def feasible(self) -> list[SweepPoint]:
        return [p for p in self.points if p.feasible]

    @property
    def best(self) -> SweepPoint | None:
        """The feasible point with the lowest estimated time (None when none is)."""
        ok = [(p.est_us, i, p) for i, p in enumerate(self.feasible) if p.est_us is not None]
        return min(ok)[2] if ok else None

    def table(self) -> str:
        names = list(self.grid)
        head = "  ".join(f"{n:>8}" for n in names)
        rows = [f"{head}  {'compiles':>8} {'fits':>5} {'UB':>5} {'golden':>9} {'heap':>9} "
                f"{'est us':>10} {'tasks':>6} {'launch us':>9} {'bound by':>15}  note"]
        best = self.best
        for p in self.points:
            vals = "  ".join(f"{p.values[n]!s:>8}" for n in names)
            fits = "-" if p.fits is None else ("yes" if p.fits else "NO")
            gold = "-" if p.matches is None else ("pass" if p.matches else p.verdict)
            est = f"{p.est_us:10.2f}" if p.est_us is not None else f"{'-':>10}"
            e = p.estimate
            why = (f"{e.tasks:>6} {e.launch_us:>9.2f} {e.bound:>15}" if e is not None else
                   f"{'-':>6} {'-':>9} {'-':>15}")
            mark = "  <- best" if p is best else ""
            ub = f"{p.ub_use:5.0%}" if p.ub_use is not None else f"{'-':>5}"
            heap = _bytes(p.heap_peak) if p.heap_peak is not None else "-"
            cells = (f"{vals}  {'yes' if p.compiles else 'NO':>8} {fits:>5} {ub} {gold:>9} "
                     f"{heap:>9} {est} {why}  ")
            # a long note (a compile error with its hint) wraps under the note column
            # rather than being cut: the reason is what the user came for
            note = textwrap.wrap(p.reason, 80, break_on_hyphens=False) or [""]
            rows.append(f"{cells}{note[0]}{mark}")
            rows += [" " * len(cells) + more for more in note[1:]]
        rows.append(self.summary())
        return "\n".join(rows)

    def summary(self) -> str:
        best = self.best
        pick = ("best feasible tiling: " + ", ".join(f"{k}={v}" for k, v in best.values.items())
                + f" ({best.est_us:.2f} us estimated{_why(best)})") if best else \
            "no feasible tiling"
        return (f"{self.kernel}: {len(self.points)} points, {len(self.feasible)} feasible; "
                f"{pick}; {self.seconds:.1f} s on {self.where}")

    def to_dict(self) -> dict:
        best = self.best
        return {"kernel": self.kernel, "grid": self.grid, "seconds": round(self.seconds, 2),
                "where": self.where, "best": best.values if best else None,
                "points": [asdict(p) for p in self.points]}


def _run_points(case: SweepCase, points: list[dict], client: Any,
                on_point: Callable[[SweepPoint], None] | None) -> list[SweepPoint]:
    if client is None:
        out = []
        for values in points:
            out.append(evaluate(case, values))
            if on_point:
                on_point(out[-1])
        return out
    futures = {client.submit(evaluate, case, values, pure=False): i
               for i, values in enumerate(points)}
    done: dict[int, SweepPoint] = {}
    for fut in as_completed(list(futures)):
        i = futures[fut]
        if fut.status == "finished":
            done[i] = fut.result()
        else:
            err = fut.exception()
            verdict = "killed" if type(err).__name__ == "KilledWorker" else "error"
            done[i] = SweepPoint(points[i], compiles=False, verdict=verdict,
                                 reason=f"{type(err).__name__}: {err}")
        if on_point:
            on_point(done[i])
    return [done[i] for i in range(len(points))]


def sweep(target: str | Path | Any, grid: dict[str, list], *, kernel: str | None = None,
          specs: Any = None, golden: Any = None, platform: str = "a2a3sim",
          rtol: float | None = None, atol: float | None = None, client: Any = None,
          scheduler: str | None = None, workers: int | None = None,
          on_point: Callable[[SweepPoint], None] | None = None) -> SweepResult:
    """Evaluate `target` (a kernel file, or a `@pl.jit` kernel / `@pl.program` whose
    source is at hand) at every point of `grid` ({constant: [values]}). rtol / atol
    default to the literal ones of the module's own run_jit call, else 1e-5."""
    case = case_for(target, grid, kernel=kernel, specs=specs, golden=golden,
                    platform=platform, rtol=rtol, atol=atol)
    points = grid_points(grid)
    t0 = time.perf_counter()
    if scheduler or client == "local":
        with open_client(scheduler, workers) as c:
            where = f"Dask {'cluster ' + scheduler if scheduler else 'LocalCluster'}"
            results = _run_points(case, points, c, on_point)
    else:
        c = client if client is not None else default_client()
        where = "this process" if c is None else f"Dask ({c.scheduler.address})"
        results = _run_points(case, points, c, on_point)
    return SweepResult(case.label, dict(grid), results, time.perf_counter() - t0, where)
