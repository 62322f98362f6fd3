"""What the 2048x1024 heatmap costs a `%%pypto` cell in a real Jupyter kernel, warm and
fresh (issue 29, item 6).

`heatmap_bench.py` times the cell inside this process; this one runs it the way
JupyterLab does: a kernel (ipykernel, through jupyter_client), `%load_ext pypto_lab`,
then the cell, timed from the execute request to the kernel's `idle` after it, with
every output and widget message serialized and sent over ZMQ (the browser's drawing is
not included). The cell is `heatmap_bench.CELL` (a 2048x1024 fp32 output whose loop
skips the last tile), run as `%%pypto --run specs golden` (the baseline) and with
`--show heatmap`:

* warm: one kernel, both cells run once, then alternated `--rounds` times; medians;
* fresh: a new kernel per measurement (the setup cell untimed), the cell measured is
  the first `%%pypto` cell the kernel runs: imports of plotly, ipywidgets, anywidget and
  the figure code count, as they do for a user who opens a notebook and runs it.

Both plotly modes. Bytes are the outputs and widget messages the cell sends.

    python benchmarks/heatmap_kernel_bench.py [--rounds N] [--fresh N] [--json out.json]
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))
from heatmap_bench import CELL  # noqa: E402

SETUP = """
import os
import numpy as np
import pypto.language as pl
from pypto.golden import TensorSpec
%load_ext pypto_lab
import pypto_lab
pypto_lab.set_plotlyjs({mode!r})
ROWS, COLS, TILE = {rows}, {cols}, 32

def golden(values):
    values["y"][:] = np.exp(values["x"])

specs = [TensorSpec("x", [ROWS, COLS], np.float32,
                    init_value=lambda: np.random.default_rng(0).standard_normal((ROWS, COLS))),
         TensorSpec("y", [ROWS, COLS], np.float32, is_output=True)]
"""
PLAIN = "%%pypto --run specs golden\n" + CELL
HEATMAP = "%%pypto --run specs golden --show heatmap\n" + CELL


def start_kernel():
    from jupyter_client.manager import start_new_kernel

    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [str(ROOT), os.environ.get("PYTHONPATH", "")]), OPENBLAS_NUM_THREADS="1",
        OMP_NUM_THREADS="1", MKL_NUM_THREADS="1")
    km, kc = start_new_kernel(kernel_name="python3", env=env)
    return km, kc


def run(kc, code: str, timeout: float = 600) -> tuple[float, int]:
    """Seconds from the execute request to the kernel's idle, and the bytes of the
    outputs and widget messages it sent on the way. Raises on an error in the cell."""
    t0 = time.perf_counter()
    msg_id = kc.execute(code)
    sent = 0
    while True:
        msg = kc.get_iopub_msg(timeout=timeout)
        if msg["parent_header"].get("msg_id") != msg_id:
            continue
        kind = msg["msg_type"]
        if kind == "status" and msg["content"]["execution_state"] == "idle":
            break
        if kind == "error":
            raise RuntimeError("\n".join(msg["content"]["traceback"][-3:]))
        if kind in ("display_data", "update_display_data", "execute_result", "comm_open",
                    "comm_msg"):
            sent += len(json.dumps(msg["content"], default=str))
            sent += sum(len(b) for b in msg.get("buffers", []))
    return time.perf_counter() - t0, sent


def warm(mode: str, rows: int, cols: int, rounds: int) -> dict:
    km, kc = start_kernel()
    try:
        run(kc, SETUP.format(mode=mode, rows=rows, cols=cols))
        run(kc, PLAIN)
        run(kc, HEATMAP)
        plain, heat, size = [], [], 0
        for _ in range(rounds):
            plain.append(run(kc, PLAIN)[0])
            t, size = run(kc, HEATMAP)
            heat.append(t)
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)
    p, h = statistics.median(plain), statistics.median(heat)
    return {"plain_s": round(p, 3), "heatmap_s": round(h, 3), "ratio": round(h / p, 2),
            "sent_mb": round(size / 1e6, 3)}


def fresh_once(mode: str, rows: int, cols: int, code: str) -> float:
    km, kc = start_kernel()
    try:
        run(kc, SETUP.format(mode=mode, rows=rows, cols=cols))
        return run(kc, code)[0]
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)


def fresh(mode: str, rows: int, cols: int, rounds: int) -> dict:
    plain, heat = [], []
    for _ in range(rounds):
        plain.append(fresh_once(mode, rows, cols, PLAIN))
        heat.append(fresh_once(mode, rows, cols, HEATMAP))
    p, h = statistics.median(plain), statistics.median(heat)
    return {"plain_s": round(p, 3), "heatmap_s": round(h, 3), "ratio": round(h / p, 2)}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=5, help="warm rounds")
    ap.add_argument("--fresh", type=int, default=3, help="fresh kernels per cell")
    ap.add_argument("--rows", type=int, default=2048)
    ap.add_argument("--cols", type=int, default=1024)
    ap.add_argument("--modes", default="none,once")
    ap.add_argument("--json", help="also write the numbers here")
    args = ap.parse_args()
    print(f"%%pypto heatmap cell in a kernel, {args.rows}x{args.cols} fp32 output; warm: "
          f"median of {args.rounds}, fresh: median of {args.fresh} new kernels", flush=True)
    print(f"{'plotly mode':<12} {'':<6} {'cell s':>8} {'+heatmap s':>11} {'ratio':>6} "
          f"{'sent MB':>8}", flush=True)
    out = []
    for mode in args.modes.split(","):
        w = warm(mode, args.rows, args.cols, args.rounds)
        print(f"{mode:<12} {'warm':<6} {w['plain_s']:>8.3f} {w['heatmap_s']:>11.3f} "
              f"{w['ratio']:>5.2f}x {w['sent_mb']:>8.3f}", flush=True)
        f = fresh(mode, args.rows, args.cols, args.fresh)
        print(f"{mode:<12} {'fresh':<6} {f['plain_s']:>8.3f} {f['heatmap_s']:>11.3f} "
              f"{f['ratio']:>5.2f}x", flush=True)
        out.append({"mode": mode, "warm": w, "fresh": f})
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
