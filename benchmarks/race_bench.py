"""The race check's cost against the number of tasks (issue 31 item 5, issue 32 item 8).

Two cases of N tasks on one tensor: `update` - each task of a sequential `pl.range`
loop adds into all of `y` (InOut), so the runtime orders each after the one before (the
case that made the check quadratic: every pair conflicts); `rows` - each iteration of a
`pl.parallel` loop writes its own 8 rows of `y` (no pair conflicts, none covers
another). Printed per case and N: the plain traced run, the run with
`checks=("race",)`, the check alone (`find_races` on the finished trace), the check's
peak Python memory (tracemalloc), and deps.json written on top (`write_deps_json`).

    python benchmarks/race_bench.py [--tasks 1000,4000,16000] [--cases update,rows]

Numbers are medians of `--repeats` runs (BLAS pinned to one thread); the goal is
near-linear: 16,000 tasks in a workbench cell in <= 10 s and <= 500 MB.
"""
from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
import tracemalloc
from pathlib import Path

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np
from sim_bench import many_tasks

import pypto.language as pl
import pypto.sim as sim
from pypto.dfx.deps_json import write_deps_json
from pypto.sim.checks.races import find_races


def updates(n: int):
    @pl.jit
    def update(x: pl.Tensor[[8, 64], pl.FP32], y: pl.InOut[pl.Tensor[[8, 64], pl.FP32]]):
        for _i in pl.range(n):
            with pl.at(level=pl.Level.CORE_GROUP, name_hint="acc"):
                y[:, :] = pl.add(y[:, :], x[:, :])
        return y

    return update


# "rows": the task-scaling kernel of sim_bench (each iteration writes its own 8 rows)
CASES = {"update": (updates, lambda n: (8, 64)), "rows": (many_tasks, lambda n: (8 * n, 64))}


def _median(fn, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def measure(case: str, n: int, repeats: int) -> dict:
    make, shape = CASES[case]
    k = make(n)
    c = k.compile()
    x = np.ones(shape(n), np.float32)
    y = np.zeros(shape(n), np.float32)
    res = sim.simulate(k, x, y, checks=())
    row = {"case": case, "tasks": len(res.tasks),
           "traced run s": _median(lambda: sim.simulate(k, x, y, checks=()), repeats),
           "with race check s": _median(
               lambda: sim.simulate(k, x, y, checks=("race",), strict=False), repeats),
           "check alone s": _median(lambda: find_races(res.trace, c.program, c.analyses),
                                    repeats)}
    tracemalloc.start()
    rep = find_races(res.trace, c.program, c.analyses)
    row["check peak MB"] = tracemalloc.get_traced_memory()[1] / 1e6
    tracemalloc.stop()
    row["races"] = len(rep)
    with tempfile.TemporaryDirectory() as d:
        row["deps.json s"] = _median(
            lambda: write_deps_json(res.trace, c.program, c.analyses, Path(d), "bench"),
            repeats)
        row["deps.json MB"] = (Path(d) / "deps.json").stat().st_size / 1e6
    return row


def main(argv: list | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tasks", default="1000,4000,16000")
    ap.add_argument("--cases", default="update,rows")
    ap.add_argument("--repeats", type=int, default=3)
    a = ap.parse_args(argv)
    cols = None
    for case, n in ((c, int(v)) for c in a.cases.split(",") for v in a.tasks.split(",")):
        row = measure(case, n, a.repeats)
        if cols is None:
            cols = list(row)
            print("  ".join(f"{c:>17}" for c in cols))
        print("  ".join(f"{row[c]:>17.3f}" if isinstance(row[c], float) else
                        f"{row[c]:>17}" for c in cols), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
