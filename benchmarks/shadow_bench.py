"""The float64 precision shadow's cost against the plain run, on the benchmark set.

For each kernel of `sim_bench.py` (its own four and the pypto-lib-style ones of
`sim_cases.py`): the plain traced run (what the harness runs: checks on, trace on) and
`pypto.precision.shadow.shadow_run` on the same compiled program and arguments (the
probed kernel run, the float64 shadow run, and the comparison), alternated round by
round; CPU seconds of this thread (`time.thread_time`), the minimum over the rounds.
The goal (issue 34): the shadow costs at most 3x the plain run. BLAS is pinned to one
thread.

    python benchmarks/shadow_bench.py [--rounds N] [--only k1,k2]
"""
from __future__ import annotations

import os

for _v in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_v] = "1"

import argparse  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from typing import Any  # noqa: E402

import pypto.sim as sim  # noqa: E402
from pypto.precision.shadow import shadow_run  # noqa: E402
from pypto.sim.entry import run_compiled  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import sim_bench  # noqa: E402


def captured_cases(only: set | None) -> list[tuple[str, str, Any, tuple, Any]]:
    """(key, label, compiled, args, config) of each case's traced call: the call is made
    once with the simulator's runner swapped for one that records what it is given."""
    seen: list = []

    def record(compiled: Any, args: tuple, kwargs: Any = None, config: Any = None) -> None:
        seen.append((compiled, tuple(args), config))

    out = []
    runner = sim.run_compiled
    sim.run_compiled = record  # (what a @pl.jit call runs its compiled program with)
    try:
        for key, label, _sim, traced, *_ in sim_bench.cases():
            if only is not None and key not in only:
                continue
            seen.clear()
            traced()
            if seen:
                out.append((key, label, *seen[0]))
    finally:
        sim.run_compiled = runner
    return out


def cpu(f: Any) -> float:
    t0 = time.thread_time()
    f()
    return time.thread_time() - t0


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--only", default=None)
    a = ap.parse_args()
    only = set(a.only.split(",")) if a.only else None
    print(f"{'kernel':<48} {'plain s':>8} {'shadow s':>9} {'ratio':>7}")
    ratios = []
    for _key, label, compiled, args, config in captured_cases(only):
        def plain(compiled: Any = compiled, args: tuple = args, config: Any = config) -> None:
            run_compiled(compiled, args, None, config)

        def shadow(compiled: Any = compiled, args: tuple = args, config: Any = config) -> None:
            shadow_run(compiled, args, config)

        plain()
        shadow()
        best = {"plain": float("inf"), "shadow": float("inf")}
        for _ in range(a.rounds):
            best["plain"] = min(best["plain"], cpu(plain))
            best["shadow"] = min(best["shadow"], cpu(shadow))
        r = best["shadow"] / best["plain"]
        ratios.append(r)
        print(f"{label[:48]:<48} {best['plain']:>8.3f} {best['shadow']:>9.3f} {r:>6.1f}x",
              flush=True)
    if ratios:
        print(f"median ratio {statistics.median(ratios):.1f}x, worst {max(ratios):.1f}x "
              f"(goal: at most 3x)")


if __name__ == "__main__":
    main()
