"""Many tasks in one workbench cell, and the DFX artifacts of a many-task run.

Two goals, each measured in a fresh process per size (peak RSS is the process's):

* `cell`: a `%%pypto --run specs golden --show graph` cell of N tasks updating one
  tensor region (a sequential loop, each task InOut on `y`) - the workbench runs every
  simulator check, the race check among them, and draws the task graph. Goal (issue 31
  item 5): 16,000 tasks in <= 10 s and <= 500 MB.
* `dfx`: `run_jit` on the same kernel with deps.json, the args dump at level 3 and the
  scope stats, plus the workbench's task graph of the result. Goal (issue 32 item 8):
  4,000 tasks in <= 5 s and <= 200 MB of records (here: the process's peak RSS above
  its RSS after importing everything, which bounds the records from above).

    python benchmarks/workbench_tasks_bench.py [--cell 4000,16000] [--dfx 4000]

Printed: tasks, wall seconds of the cell / the run, peak RSS and its rise. Pin BLAS to
one thread (done here) and read medians over a quiet machine; the numbers in
docs/performance.md say how they were taken.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import textwrap

CHILD = textwrap.dedent('''
    import os, resource, sys, time, json, tempfile
    os.environ["OPENBLAS_NUM_THREADS"] = "1"
    import numpy as np
    import pypto.language as pl
    import pypto_lab
    from pypto.golden import TensorSpec, run_jit
    from pypto_lab.args import MagicArgs
    from pypto_lab.session import run_cell
    from pypto_lab.graphs import task_graph
    from pypto_lab.model import KernelModel

    mode, n = sys.argv[1], int(sys.argv[2])
    src = f"""
    import pypto.language as pl

    @pl.jit
    def update(x: pl.Tensor[[8, 64], pl.FP32], y: pl.InOut[pl.Tensor[[8, 64], pl.FP32]]):
        for i in pl.range({n}):
            with pl.at(level=pl.Level.CORE_GROUP, name_hint="acc"):
                y[:, :] = pl.add(y[:, :], x[:, :])
        return y
    """
    ns = {"specs": [TensorSpec("x", [8, 64], np.float32, init_value=1.0),
                    TensorSpec("y", [8, 64], np.float32, is_output=True, init_value=0.0)],
          "golden": lambda v: v["y"].__setitem__(slice(None), v["x"] * n)}
    base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    t0 = time.perf_counter()
    if mode == "cell":
        res = run_cell(src, MagicArgs(show=("graph",), specs="specs", golden="golden"), ns)
        ok = res.run is not None and res.run.passed
        tasks = len({t.task for t in res.run.tasks})
    else:
        path = os.path.join(tempfile.mkdtemp(), "k.py")
        open(path, "w").write(src)
        sys.path.insert(0, os.path.dirname(path))
        import k
        base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        t0 = time.perf_counter()
        r = run_jit(k.update, ns["specs"], ns["golden"], verbose=False,
                    runtime_cfg={"enable_dep_gen": True, "enable_dump_args": 3,
                                 "enable_scope_stats": True},
                    compile_cfg={"output_dir": tempfile.mkdtemp()})
        run = pypto_lab.runs.from_run_result(r, "update", "a2a3sim")
        task_graph(KernelModel.of(r.compiled), run.tasks)  # the workbench's task graph
        ok = r.passed
        tasks = len(r.sim.tasks)
    sec = time.perf_counter() - t0
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps({"mode": mode, "tasks": tasks, "passed": ok, "seconds": sec,
                      "peak_mb": peak, "rise_mb": peak - base}))
''')


def measure(mode: str, n: int) -> dict:
    out = subprocess.run([sys.executable, "-c", CHILD, mode, str(n)], capture_output=True,
                         text=True, env=dict(os.environ, OPENBLAS_NUM_THREADS="1"),
                         timeout=3600)
    if out.returncode != 0:
        raise SystemExit(f"{mode} {n}: {out.stderr[-2000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(argv: list | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cell", default="4000,16000", help="task counts for the cell case")
    ap.add_argument("--dfx", default="4000", help="task counts for the DFX case")
    a = ap.parse_args(argv)
    print(f"{'case':>5} {'tasks':>7} {'passed':>7} {'seconds':>8} {'peak MB':>8} {'rise MB':>8}")
    for mode, counts in (("cell", a.cell), ("dfx", a.dfx)):
        for n in (int(v) for v in counts.split(",") if v):
            r = measure(mode, n)
            print(f"{mode:>5} {r['tasks']:>7} {r['passed']!s:>7} {r['seconds']:>8.2f} "
                  f"{r['peak_mb']:>8.0f} {r['rise_mb']:>8.0f}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
