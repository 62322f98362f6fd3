"""What the window race check (on by default in multi-card runs, issue 31 item 6) costs
a direct call: a 2-rank host program whose ranks each stage an [R, C] block of tiles into
their window (one task per tile), meet at a barrier (notify / wait) and read the peer's
whole window back, timed with the check ("window", the default) and without it.

    python benchmarks/window_race_bench.py [--rows 2048] [--cols 2048] [--tile 64]
"""
from __future__ import annotations

import argparse
import importlib.util
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

import numpy as np

from pypto.sim import SimConfig

SOURCE = '''
import pypto.language as pl
import pypto.language.distributed as pld

R, C, T, NR = {rows}, {cols}, {tile}, 2


@pl.jit.incore
def stage(x: pl.Tensor[[R, C], pl.FP32], win: pld.DistributedTensor[[R, C], pl.FP32],
          i: pl.Scalar[pl.INDEX], j: pl.Scalar[pl.INDEX]):
    return pl.store(pl.load(x, [i, j], [T, T]), [i, j], win)


@pl.jit.incore
def meet_and_pull(win: pld.DistributedTensor[[R, C], pl.FP32],
                  signal: pld.DistributedTensor[[NR, 1], pl.INT32],
                  y: pl.Out[pl.Tensor[[R, C], pl.FP32]]):
    me = pld.rank(pld.get_comm_ctx(win))
    pld.system.notify(signal, peer=1 - me, offsets=[me, 0], value=1,
                      op=pld.NotifyOp.AtomicAdd)
    pld.system.wait(signal=signal, offsets=[1 - me, 0], expected=1, cmp=pld.WaitCmp.Ge)
    for r in pl.range(0, R, T):
        for c in pl.range(0, C, T):
            got = pld.tile.remote_load(win, peer=1 - me, offsets=[r, c], shape=[T, T])
            y = pl.store(got, [r, c], y)
    return y


@pl.jit
def chip(x: pl.Tensor[[R, C], pl.FP32], y: pl.Out[pl.Tensor[[R, C], pl.FP32]],
         win: pld.DistributedTensor[[R, C], pl.FP32],
         signal: pld.DistributedTensor[[NR, 1], pl.INT32]):
    for i in pl.range(0, R, T):
        for j in pl.range(0, C, T):
            win = stage(x, win, i, j)
    y = meet_and_pull(win, signal, y)
    return y


@pl.jit.host
def swap(x: pl.Tensor[[NR, R, C], pl.FP32], y: pl.Out[pl.Tensor[[NR, R, C], pl.FP32]]):
    buf = pld.alloc_window_buffer([R, C], dtype=pl.FP32)
    sig = pld.alloc_window_buffer([NR, 1], dtype=pl.INT32)
    for r in pl.range(pld.world_size()):
        chip(x[r], y[r], pld.window(buf, [R, C], dtype=pl.FP32),
             pld.window(sig, [NR, 1], dtype=pl.INT32), device=r)
'''


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=2048)
    ap.add_argument("--cols", type=int, default=2048)
    ap.add_argument("--tile", type=int, default=64)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "window_race_kernel.py"
        path.write_text(SOURCE.format(rows=args.rows, cols=args.cols, tile=args.tile))
        spec = importlib.util.spec_from_file_location(path.stem, path)
        assert spec is not None and spec.loader is not None
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        x = np.random.default_rng(0).standard_normal((2, args.rows, args.cols)).astype(
            np.float32)
        tasks = (args.rows // args.tile) * (args.cols // args.tile)
        print(f"2 ranks x {tasks} staging tasks of {args.tile}x{args.tile}, "
              f"window [{args.rows}, {args.cols}] FP32")
        for label, checks in (("without the check", ("oob", "ub", "div")),
                              ("with the window check (default)", ("oob", "ub", "window",
                                                                   "div"))):
            cfg = SimConfig(device_ids=(0, 1), checks=checks)
            y = np.zeros_like(x)
            mod.swap(x, y, config=cfg)  # compile and warm up
            assert np.array_equal(y, x[::-1])
            best = float("inf")
            for _ in range(args.repeat):
                t0 = time.perf_counter()
                res = mod.swap(x, y, config=cfg)
                best = min(best, time.perf_counter() - t0)
            tracemalloc.start()
            mod.swap(x, y, config=cfg)
            peak = tracemalloc.get_traced_memory()[1]
            tracemalloc.stop()
            races = len(res.window_races)
            print(f"  {label}: {best:.3f} s (best of {args.repeat}), peak traced "
                  f"{peak / 2**20:.1f} MiB, {races} races")
    return 0


if __name__ == "__main__":
    sys.exit(main())
