"""Simulator speed against numpy, measured in one run.

For each kernel: the simulator (`kernel(x, y)`: checks on, no trace; and with the
full trace), one numpy call computing the same result, and a hand-written numpy
loop over the same tiles the kernel uses. Medians of repeated runs; BLAS pinned to
one thread. `--quick` runs fewer repeats for CI.

    python benchmarks/sim_bench.py [--quick] [--json out.json]
"""
from __future__ import annotations

import os

for _v in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS",
           "VECLIB_MAXIMUM_THREADS", "NUMEXPR_NUM_THREADS"):
    os.environ[_v] = "1"

import argparse  # noqa: E402
import json  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
import warnings  # noqa: E402

import ml_dtypes  # noqa: E402
import numpy as np  # noqa: E402

import pypto.language as pl  # noqa: E402
import pypto.sim as sim  # noqa: E402

warnings.filterwarnings("ignore")

# --- kernels ---------------------------------------------------------------------------

AM, AN, AT_M, AT_N = 1024, 512, 128, 256


@pl.jit
def add_scalar(x: pl.Tensor[[AM, AN], pl.FP32], y: pl.Out[pl.Tensor[[AM, AN], pl.FP32]]):
    for i in pl.parallel(0, AM, AT_M):
        for j in pl.parallel(0, AN, AT_N):
            with pl.at(level=pl.Level.CORE_GROUP, name_hint="add"):
                y[i:i + AT_M, j:j + AT_N] = pl.add(x[i:i + AT_M, j:j + AT_N], 1.0)
    return y


def add_numpy(x):
    return x + np.float32(1.0)


def add_loop(x, y):
    for i in range(0, AM, AT_M):
        for j in range(0, AN, AT_N):
            y[i:i + AT_M, j:j + AT_N] = x[i:i + AT_M, j:j + AT_N] + np.float32(1.0)


SM, SN, ST = 512, 256, 64


@pl.jit
def softmax(x: pl.Tensor[[SM, SN], pl.FP32], y: pl.Out[pl.Tensor[[SM, SN], pl.FP32]]):
    for r in pl.parallel(0, SM, ST):
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="softmax_rows"):
            t = x[r:r + ST, :]
            mx = pl.row_max(t)
            shifted = pl.row_expand_sub(t, mx)
            e = pl.exp(shifted)
            s = pl.row_sum(e)
            y[r:r + ST, :] = pl.row_expand_div(e, s)
    return y


def softmax_numpy(x):
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def softmax_loop(x, y):
    for r in range(0, SM, ST):
        t = x[r:r + ST, :]
        e = np.exp(t - t.max(axis=1, keepdims=True))
        y[r:r + ST, :] = e / e.sum(axis=1, keepdims=True)


RM, RN, RT, RC = 512, 4096, 32, 256  # 32-row blocks, 256-column chunks (32 KiB tiles)


@pl.jit
def rms_norm(x: pl.Tensor[[RM, RN], pl.FP32], w: pl.Tensor[[1, RN], pl.FP32],
             y: pl.Out[pl.Tensor[[RM, RN], pl.FP32]]):
    for r in pl.parallel(0, RM, RT):
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="rms_rows"):
            ss = pl.full([RT, 1], pl.FP32, 0.0)
            for c in pl.range(0, RN, RC):
                t = x[r:r + RT, c:c + RC]
                ss = pl.add(ss, pl.row_sum(pl.mul(t, t)))
            inv = pl.rsqrt(pl.add(pl.mul(ss, 1.0 / RN), 1e-6))
            for c in pl.range(0, RN, RC):
                t = x[r:r + RT, c:c + RC]
                y[r:r + RT, c:c + RC] = pl.col_expand_mul(pl.row_expand_mul(t, inv),
                                                          w[:, c:c + RC])
    return y


def rms_numpy(x, w):
    return x * (1.0 / np.sqrt((x * x).mean(axis=1, keepdims=True) + np.float32(1e-6))) * w


def rms_loop(x, w, y):
    for r in range(0, RM, RT):
        ss = np.zeros((RT, 1), np.float32)
        for c in range(0, RN, RC):
            t = x[r:r + RT, c:c + RC]
            ss = ss + (t * t).sum(axis=1, keepdims=True)
        inv = 1.0 / np.sqrt(ss * np.float32(1.0 / RN) + np.float32(1e-6))
        for c in range(0, RN, RC):
            y[r:r + RT, c:c + RC] = x[r:r + RT, c:c + RC] * inv * w[:, c:c + RC]


MM, MK, MN, TM, TN, TK = 512, 1024, 512, 128, 128, 64


@pl.jit
def matmul(a: pl.Tensor[[MM, MK], pl.BF16], b: pl.Tensor[[MK, MN], pl.BF16],
           c: pl.Out[pl.Tensor[[MM, MN], pl.FP32]]):
    for i in pl.parallel(0, MM, TM):
        for j in pl.parallel(0, MN, TN):
            with pl.at(level=pl.Level.CORE_GROUP, name_hint="mm_tile"):
                acc = pl.matmul(a[i:i + TM, 0:TK], b[0:TK, j:j + TN], out_dtype=pl.FP32)
                for k in pl.range(TK, MK, TK):
                    acc = pl.matmul_acc(acc, a[i:i + TM, k:k + TK], b[k:k + TK, j:j + TN])
                c[i:i + TM, j:j + TN] = acc
    return c


def matmul_numpy(a, b):
    return a.astype(np.float32) @ b.astype(np.float32)


def matmul_loop(a, b, c):
    for i in range(0, MM, TM):
        for j in range(0, MN, TN):
            acc = np.zeros((TM, TN), np.float32)
            for k in range(0, MK, TK):
                acc += a[i:i + TM, k:k + TK].astype(np.float32) @ \
                    b[k:k + TK, j:j + TN].astype(np.float32)
            c[i:i + TM, j:j + TN] = acc


# --- harness -------------------------------------------------------------------------------


def median_time(fn, repeats: int) -> float:
    fn()  # warm-up (compiles the kernel on its first call)
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def cases():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((AM, AN)).astype(np.float32)
    y = np.zeros_like(x)
    # A 128x256 fp32 input tile plus its result is 256 KiB: over the A2/A3 UB by the
    # compiler's estimate, so this case runs with the bounds check only (as specified).
    no_ub = sim.SimConfig(checks=("oob",))
    yield ("add-scalar fp32 1024x512 (128x256 tiles)*",
           lambda: add_scalar(x, y, config=no_ub),
           lambda: sim.simulate(add_scalar, x, y, checks=("oob",)),
           lambda: add_numpy(x), lambda: add_loop(x, y), lambda: (y, add_numpy(x)))
    xs = rng.standard_normal((SM, SN)).astype(np.float32)
    ys = np.zeros_like(xs)
    yield ("softmax fp32 512x256 (64-row blocks)",
           lambda: softmax(xs, ys), lambda: sim.simulate(softmax, xs, ys),
           lambda: softmax_numpy(xs), lambda: softmax_loop(xs, ys),
           lambda: (ys, softmax_numpy(xs)))
    xr = rng.standard_normal((RM, RN)).astype(np.float32)
    wr = rng.standard_normal((1, RN)).astype(np.float32)
    yr = np.zeros_like(xr)
    yield ("rms_norm fp32 512x4096 (32-row blocks)",
           lambda: rms_norm(xr, wr, yr), lambda: sim.simulate(rms_norm, xr, wr, yr),
           lambda: rms_numpy(xr, wr), lambda: rms_loop(xr, wr, yr),
           lambda: (yr, rms_numpy(xr, wr)))
    a = rng.standard_normal((MM, MK)).astype(ml_dtypes.bfloat16)
    b = rng.standard_normal((MK, MN)).astype(ml_dtypes.bfloat16)
    c = np.zeros((MM, MN), np.float32)
    yield ("matmul bf16 512x1024x512 (128/128/64, fp32 acc)",
           lambda: matmul(a, b, c), lambda: sim.simulate(matmul, a, b, c),
           lambda: matmul_numpy(a, b), lambda: matmul_loop(a, b, c),
           lambda: (c, matmul_numpy(a, b)))


def main(argv: list | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="few repeats (CI)")
    ap.add_argument("--json", help="also write the numbers to this file")
    args = ap.parse_args(argv)
    reps = 3 if args.quick else 15
    rows = []
    head = (f"{'kernel':<50} {'sim ms':>8} {'sim+trace':>10} {'numpy ms':>9} {'loop ms':>8} "
            f"{'sim/loop':>9} {'sim/numpy':>10} {'max err':>9}")
    print(f"BLAS threads pinned to 1; medians of {reps} runs")
    print(head)
    print("-" * len(head))
    for name, run_sim, run_traced, run_np, run_loop, check in cases():
        t_sim = median_time(run_sim, reps)
        t_tr = median_time(run_traced, max(1, reps // 3))
        t_np = median_time(run_np, reps)
        run_sim()
        out, ref = check()
        err = float(np.abs(out.astype(np.float64) - ref.astype(np.float64)).max())
        t_loop = median_time(run_loop, reps)
        rows.append({"kernel": name, "sim_s": t_sim, "sim_trace_s": t_tr, "numpy_s": t_np,
                     "loop_s": t_loop, "sim_over_loop": t_sim / t_loop,
                     "sim_over_numpy": t_sim / t_np, "max_err": err})
        print(f"{name:<50} {t_sim * 1e3:>8.2f} {t_tr * 1e3:>10.2f} {t_np * 1e3:>9.2f} "
              f"{t_loop * 1e3:>8.2f} {t_sim / t_loop:>8.2f}x {t_sim / t_np:>9.2f}x "
              f"{err:>9.1e}")
    print("* UB budget check off for this case: input + result tiles (256 KiB) exceed the "
          "188,416 B of A2/A3 UB")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
