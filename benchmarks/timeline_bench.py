"""What the estimated timeline of a many-task run costs to build, in seconds and bytes.

One kernel of N independent one-row tasks (a `pl.parallel` loop of `pl.at` regions),
run through the harness once; then, timed: the workbench's adaptation of the result,
the schedule estimate with its figure (`pypto_lab.timeline`), and the figure's JSON
(what the notebook receives). Issue 28 item 4's goal is the whole timeline of a
10,000-task run drawn in 2 s in JupyterLab; this measures the kernel side of it (the
browser's drawing is not measured here). BLAS is pinned to one thread.

    python benchmarks/timeline_bench.py [--tasks 1000,10000] [--rounds 3]
"""
from __future__ import annotations

import os

for _v in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_v] = "1"

import argparse  # noqa: E402
import json  # noqa: E402
import statistics  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import textwrap  # noqa: E402

CHILD = textwrap.dedent('''
    import json, sys, time
    import numpy as np
    import pypto.language as pl
    from pypto.golden import TensorSpec, run_jit
    import pypto_lab
    from pypto_lab import api  # noqa: F401 (imported before timing)
    from pypto_lab.runs import from_run_result

    N = int(sys.argv[1])

    @pl.jit
    def many(x: pl.Tensor[[N, 64], pl.FP32], y: pl.Out[pl.Tensor[[N, 64], pl.FP32]]):
        for i in pl.parallel(N):
            with pl.at(level=pl.Level.CORE_GROUP, name_hint="row"):
                y[i:i + 1, :] = pl.exp(x[i:i + 1, :])
        return y

    specs = [TensorSpec("x", [N, 64], np.float32, init_value=0.1),
             TensorSpec("y", [N, 64], np.float32, is_output=True)]
    result = run_jit(many, specs, verbose=False)
    t0 = time.perf_counter()
    run = from_run_result(result, "many", "a2a3sim")
    t1 = time.perf_counter()
    view = pypto_lab.timeline(run)
    t2 = time.perf_counter()
    text = json.dumps(view.spec, separators=(",", ":"))
    t3 = time.perf_counter()
    print(json.dumps({"adapt": t1 - t0, "timeline": t2 - t1, "json": t3 - t2,
                      "mb": len(text) / 1e6, "bars": len(view.schedule.bars)}))
''')


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tasks", default="1000,10000")
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    print("tasks     bars   adapt s  timeline s  json s  JSON MB   (median of "
          f"{args.rounds}, one fresh process each)")
    for n in [int(v) for v in args.tasks.split(",")]:
        runs = []
        for _ in range(args.rounds):
            out = subprocess.run([sys.executable, "-c", CHILD, str(n)], capture_output=True,
                                 text=True, check=True)
            runs.append(json.loads(out.stdout.strip().splitlines()[-1]))
        med = {k: statistics.median(r[k] for r in runs) for k in runs[0]}
        print(f"{n:>5} {int(med['bars']):>8} {med['adapt']:>9.2f} {med['timeline']:>11.2f} "
              f"{med['json']:>7.2f} {med['mb']:>8.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
