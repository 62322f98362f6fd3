"""Simulator speed against numpy, measured side by side in one run.

For each kernel: one numpy call computing the same result (= 1.0), a hand-written numpy
loop over the same tiles the kernel uses, and the simulator (`kernel(x, y)`: checks on,
no trace; and with the full trace). The timings are interleaved round-robin (one call of
each per round: sim, numpy, loop) and we report medians, so machine noise hits every
column alike; the traced call runs in rounds of its own with numpy (`--traced-inline`:
in the same rounds, as before h18); BLAS is pinned to one thread. Peer columns (Triton
interpreter, Pallas interpret=True) are the figures peers measured on these machines
with the same tilings, quoted for comparison. Then: cold start (import + compile +
first run, each in a fresh process) and the cost per task of a 100 / 1,000 / 10,000-task
kernel. `--quick` runs few repeats (CI); `--cpu` only compares the simulator's CPU time
per call with the hand loop's (steadier than wall-clock time on a shared machine).

    python benchmarks/sim_bench.py [--quick] [--cpu] [--traced-inline] [--only k1,k2]
                                    [--json out.json]
"""
from __future__ import annotations

import os

for _v in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS",
           "VECLIB_MAXIMUM_THREADS", "NUMEXPR_NUM_THREADS"):
    os.environ[_v] = "1"

import argparse  # noqa: E402
import json  # noqa: E402
import statistics  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
import warnings  # noqa: E402

import ml_dtypes  # noqa: E402
import numpy as np  # noqa: E402

import pypto.language as pl  # noqa: E402
import pypto.sim as sim  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import sim_cases  # noqa: E402 - the issue-17 kernels, beside this script

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

# Peers' figures on these machines, same tilings, in units of one numpy call (issue 7).
PEERS = {"add": ("257", "26"), "softmax": ("88", "2.1"), "rms_norm": ("39", "7.1"),
         "matmul": ("44", "4.0-15")}
# pypto-sim / loop before the issue-7 work (closure interpreter, no batching, trace off)
BEFORE = {"add": 3.6, "softmax": 2.5, "rms_norm": 3.9, "matmul": 1.17}


def interleaved(fns: dict, repeats: int) -> dict:
    """Median seconds per function, timed round-robin after one warm-up call each."""
    for f in fns.values():
        f()
    times: dict = {k: [] for k in fns}
    for _ in range(repeats):
        for k, f in fns.items():
            t0 = time.perf_counter()
            f()
            times[k].append(time.perf_counter() - t0)
    return {k: statistics.median(v) for k, v in times.items()}


def cases():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((AM, AN)).astype(np.float32)
    y = np.zeros_like(x)
    # A 128x256 fp32 input tile plus its result is 256 KiB: over the A2/A3 UB by the
    # compiler's estimate, so this case runs with the bounds check only (as specified).
    no_ub = sim.SimConfig(checks=("oob",))
    no_ub_tr = sim.SimConfig(checks=("oob",), trace=True)
    yield ("add", "add-scalar fp32 1024x512 (128x256 tiles)*",
           lambda: add_scalar(x, y, config=no_ub), lambda: add_scalar(x, y, config=no_ub_tr),
           lambda: add_numpy(x), lambda: add_loop(x, y), lambda: (y, add_numpy(x)))
    xs = rng.standard_normal((SM, SN)).astype(np.float32)
    ys = np.zeros_like(xs)
    tr = sim.SimConfig(trace=True)
    yield ("softmax", "softmax fp32 512x256 (64-row blocks)",
           lambda: softmax(xs, ys), lambda: softmax(xs, ys, config=tr),
           lambda: softmax_numpy(xs), lambda: softmax_loop(xs, ys),
           lambda: (ys, softmax_numpy(xs)))
    xr = rng.standard_normal((RM, RN)).astype(np.float32)
    wr = rng.standard_normal((1, RN)).astype(np.float32)
    yr = np.zeros_like(xr)
    yield ("rms_norm", "rms_norm fp32 512x4096 (32-row blocks)",
           lambda: rms_norm(xr, wr, yr), lambda: rms_norm(xr, wr, yr, config=tr),
           lambda: rms_numpy(xr, wr), lambda: rms_loop(xr, wr, yr),
           lambda: (yr, rms_numpy(xr, wr)))
    a = rng.standard_normal((MM, MK)).astype(ml_dtypes.bfloat16)
    b = rng.standard_normal((MK, MN)).astype(ml_dtypes.bfloat16)
    c = np.zeros((MM, MN), np.float32)
    yield ("matmul", "matmul bf16 512x1024x512 (128/128/64 tiles)",
           lambda: matmul(a, b, c), lambda: matmul(a, b, c, config=tr),
           lambda: matmul_numpy(a, b), lambda: matmul_loop(a, b, c),
           lambda: (c, matmul_numpy(a, b)))
    # the kernels written as pypto-lib writes them (issue 17)
    yield from sim_cases.cases(rng, no_ub, tr, no_ub_tr)


# --- CPU time ------------------------------------------------------------------------------

def cpu_table(only: set | None, batches: int) -> list:
    """Per kernel: the simulator's and the hand loop's CPU time per call of this thread
    (`time.thread_time`: a process the OS preempts accrues none), each the minimum over
    `batches` batches of 10 calls, alternating sim and loop batch by batch - steadier than
    wall-clock medians on a shared machine."""
    rows = []
    for key, name, run_sim, _traced, _np, run_loop, _check in cases():
        if only is not None and key not in only:
            continue
        best = {"sim": float("inf"), "loop": float("inf")}
        for f in (run_sim, run_loop):
            f()
            f()
        for _ in range(batches):
            for k, f in (("sim", run_sim), ("loop", run_loop)):
                t0 = time.thread_time()
                for _ in range(10):
                    f()
                best[k] = min(best[k], (time.thread_time() - t0) / 10)
        rows.append((key, name, best["sim"], best["loop"]))
        print(f"  {name:<46} {best['sim'] * 1e6:>9.0f} {best['loop'] * 1e6:>9.0f} "
              f"{best['sim'] / best['loop']:>8.2f}x", flush=True)
    return rows


# --- what the checks and the trace cost -------------------------------------------------

# (label, extra checks, trace); every run also has the kernel's default checks
CHECK_MODES = (("no checks", None, False), ("default checks", (), False),
               ("+uninit", ("uninit",), False), ("+race", ("race",), False),
               ("trace", (), True), ("all four + trace", ("uninit", "race"), True))


def blocked(fns: dict, repeats: int) -> dict:
    """Median seconds per function, each timed in its own block after two warm-up calls
    (switching configurations call by call would measure machine setup instead)."""
    out = {}
    for k, f in fns.items():
        f()
        f()
        times = []
        for _ in range(repeats):
            t0 = time.perf_counter()
            f()
            times.append(time.perf_counter() - t0)
        out[k] = statistics.median(times)
    return out


def check_costs(repeats: int) -> list:
    """Per kernel: median seconds of a call in each CHECK_MODES mode."""
    rng = np.random.default_rng(1)
    x = rng.standard_normal((AM, AN)).astype(np.float32)
    xs = rng.standard_normal((SM, SN)).astype(np.float32)
    xr = rng.standard_normal((RM, RN)).astype(np.float32)
    wr = rng.standard_normal((1, RN)).astype(np.float32)
    a = rng.standard_normal((MM, MK)).astype(ml_dtypes.bfloat16)
    b = rng.standard_normal((MK, MN)).astype(ml_dtypes.bfloat16)
    kernels = [("add", add_scalar, (x, np.zeros_like(x)), ("oob",)),
               ("softmax", softmax, (xs, np.zeros_like(xs)), ("oob", "ub")),
               ("rms_norm", rms_norm, (xr, wr, np.zeros_like(xr)), ("oob", "ub")),
               ("matmul", matmul, (a, b, np.zeros((MM, MN), np.float32)), ("oob", "ub"))]
    rows = []
    for key, kernel, args, base in kernels:
        fns = {}
        for label, extra, trace in CHECK_MODES:
            checks = () if extra is None else base + extra
            cfg = sim.SimConfig(checks=checks, trace=trace)
            fns[label] = (lambda k=kernel, c=cfg, a=args: k(*a, config=c))
        rows.append((key, blocked(fns, repeats)))
    return rows


# --- cold start -------------------------------------------------------------------------

_COLD = r"""
import time, os, sys, warnings
t0 = time.perf_counter()
import numpy as np
import ml_dtypes
t1 = time.perf_counter()
# the inputs are made before the clock starts again: allocating (and page-faulting) up to
# 8 MiB arrays is the caller's cost, not pypto's
kernel = {kernel!r}
if kernel == "add":
    x = np.ones(({AM}, {AN}), np.float32); args = (x, np.zeros_like(x))
elif kernel == "softmax":
    x = np.ones(({SM}, {SN}), np.float32); args = (x, np.zeros_like(x))
elif kernel == "rms_norm":
    x = np.ones(({RM}, {RN}), np.float32)
    args = (x, np.ones((1, {RN}), np.float32), np.zeros_like(x))
else:
    args = (np.ones(({MM}, {MK}), ml_dtypes.bfloat16), np.ones(({MK}, {MN}), ml_dtypes.bfloat16),
            np.zeros(({MM}, {MN}), np.float32))
for a in args:
    a.fill(1)  # touch every page
ta = time.perf_counter()
import pypto.language as pl
t2 = time.perf_counter()
warnings.filterwarnings("ignore")
sys.path.insert(0, {here!r})
import sim_bench as sb
if kernel == "add":
    sb.add_scalar(*args, config={{"checks": ("oob",)}})
else:
    {{"softmax": sb.softmax, "rms_norm": sb.rms_norm, "matmul": sb.matmul}}[kernel](*args)
t3 = time.perf_counter()
print(t1 - t0, t2 - ta, t3 - t2)
"""


def cold_start(kernel: str, repeats: int, pycache: str | None) -> tuple:
    """Median (numpy + ml_dtypes import, pypto.language import, compile + first run) in
    seconds, each measured in a fresh interpreter. With `pycache` (a directory), bytecode
    is cached there, as in a normal install (one unmeasured warm-up run fills it); None
    measures with PYTHONDONTWRITEBYTECODE as set by the caller."""
    here = os.path.dirname(os.path.abspath(__file__))
    code = _COLD.format(here=here, kernel=kernel, AM=AM, AN=AN, SM=SM, SN=SN, RM=RM, RN=RN,
                        MM=MM, MK=MK, MN=MN)
    env = dict(os.environ)
    if pycache is not None:
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env["PYTHONPYCACHEPREFIX"] = pycache
        subprocess.run([sys.executable, "-c", code], capture_output=True, check=True, env=env)
    rows = []
    for _ in range(repeats):
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                             check=True, env=env)
        rows.append([float(v) for v in out.stdout.split()])
    return tuple(statistics.median(r[i] for r in rows) for i in range(3))


# --- task scaling -------------------------------------------------------------------------

def many_tasks(n: int):
    R = 8 * n

    @pl.jit
    def many(x: pl.Tensor[[R, 64], pl.FP32], y: pl.Out[pl.Tensor[[R, 64], pl.FP32]]):
        for i in pl.parallel(0, R, 8):
            with pl.at(level=pl.Level.CORE_GROUP, name_hint="row"):
                y[i:i + 8, :] = pl.mul(x[i:i + 8, :], 2.0)
        return y

    return many


def scaling(counts: tuple, repeats: int) -> list:
    rows = []
    for n in counts:
        k = many_tasks(n)
        x = np.ones((8 * n, 64), np.float32)
        y = np.zeros_like(x)
        cfgs = {"batched": sim.SimConfig(), "block-by-block": sim.SimConfig(batch=False),
                "traced": sim.SimConfig(trace=True),
                "traced, block-by-block": sim.SimConfig(trace=True, batch=False)}
        t = interleaved({name: (lambda c=c, k=k, x=x, y=y: k(x, y, config=c))
                         for name, c in cfgs.items()}, repeats)
        rows.append((n, {name: v / n for name, v in t.items()}))
    return rows


# --- main -----------------------------------------------------------------------------------


def main(argv: list | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="few repeats (CI)")
    ap.add_argument("--json", help="also write the numbers to this file")
    ap.add_argument("--only", help="comma-separated kernel keys: just the main table for those")
    ap.add_argument("--traced-inline", action="store_true",
                    help="time the traced call in the same rounds as sim, numpy and loop "
                         "(the order before h18)")
    ap.add_argument("--cpu", action="store_true",
                    help="only the CPU-time check: thread time per call, sim and hand loop")
    args = ap.parse_args(argv)
    reps = 3 if args.quick else 21
    only = set(args.only.split(",")) if args.only else None
    if args.cpu:
        print("CPU time of this thread per call, us (min over batches of 10 calls, sim and "
              "loop alternating; BLAS pinned to 1 thread)")
        print(f"  {'kernel':<46} {'sim us':>9} {'loop us':>9} {'sim/loop':>9}")
        rows = cpu_table(only, 4 if args.quick else 40)
        ratios = [s / lp for _k, _n, s, lp in rows]
        worst = max(rows, key=lambda r: r[2] / r[3])
        print(f"geometric mean sim/loop over {len(rows)} kernels: "
              f"{statistics.geometric_mean(ratios):.2f}x; worst "
              f"{worst[2] / worst[3]:.2f}x ({worst[0]})")
        return 0
    rows = []
    print(f"BLAS threads pinned to 1; medians of {reps} interleaved runs; "
          "times in units of one numpy call")
    head = (f"{'kernel':<46} {'numpy ms':>9} {'loop':>6} {'pypto-sim':>10} {'sim+trace':>10} "
            f"{'Triton*':>8} {'Pallas*':>8} {'sim/loop':>9} {'before':>7} {'max err':>8}")
    print(head)
    print("-" * len(head))
    for key, name, run_sim, run_traced, run_np, run_loop, check in cases():
        if only is not None and key not in only:
            continue
        if args.traced_inline:  # (the order before h18: the traced call in every round)
            t = interleaved({"sim": run_sim, "trace": run_traced, "np": run_np,
                             "loop": run_loop}, reps)
        else:
            # the columns compared (sim, numpy, loop) in rounds of their own, so that each
            # runs after one of the others; the traced call, which allocates its trace and
            # leaves the caches and the allocator to the call after it, in rounds of its
            # own with numpy (its median, in units of the first rounds' numpy call)
            t = interleaved({"sim": run_sim, "np": run_np, "loop": run_loop}, reps)
            t["trace"] = interleaved({"trace": run_traced, "np": run_np}, reps)["trace"]
        run_sim()
        out, ref = check()
        err = float(np.abs(out.astype(np.float64) - ref.astype(np.float64)).max())
        u = t["np"]
        tri, pal = PEERS.get(key, ("-", "-"))
        before = f"{BEFORE[key]:>6.2f}x" if key in BEFORE else f"{'-':>7}"
        rows.append({"key": key, "kernel": name, "numpy_s": u, "loop_s": t["loop"],
                     "sim_s": t["sim"], "sim_trace_s": t["trace"],
                     "sim_over_loop": t["sim"] / t["loop"], "loop_over_numpy": t["loop"] / u,
                     "sim_over_numpy": t["sim"] / u, "trace_over_sim": t["trace"] / t["sim"],
                     "max_err": err})
        print(f"{name:<46} {u * 1e3:>9.3f} {t['loop'] / u:>6.2f} {t['sim'] / u:>10.2f} "
              f"{t['trace'] / u:>10.2f} {tri:>8} {pal:>8} {t['sim'] / t['loop']:>8.2f}x "
              f"{before} {err:>8.1e}", flush=True)
    ratios = [r["sim_over_loop"] for r in rows]
    geo = statistics.geometric_mean(ratios)
    worst = max(rows, key=lambda r: r["sim_over_loop"])
    four = [r["sim_over_loop"] for r in rows if r["key"] in BEFORE]
    print(f"geometric mean sim/loop over {len(rows)} kernels: {geo:.2f}x; worst "
          f"{worst['sim_over_loop']:.2f}x ({worst['key']})"
          + (f"; the first four: {statistics.geometric_mean(four):.2f}x (before issue 7: "
             f"{statistics.geometric_mean(list(BEFORE.values())):.2f}x)" if four else ""))
    print("trace overhead: " + ", ".join(f"{r['key']} {r['trace_over_sim']:.1f}x" for r in rows))
    if only is not None:
        return 0
    print("* peers' figures on these machines (same tilings), quoted, not measured here; "
          "add-scalar runs with the bounds check only (its 256 KiB of tiles exceed the UB)")
    print()
    print("what checks and tracing cost: ms per call (x = over no checks); uninit and race "
          "run block by block, race implies the trace")
    costs = check_costs(3 if args.quick else 9)
    labels = [m[0] for m in CHECK_MODES]
    print(f"  {'kernel':<10} " + " ".join(f"{lb:>20}" for lb in labels))
    for key, t in costs:
        base = t["no checks"]
        print(f"  {key:<10} " + " ".join(
            f"{t[lb] * 1e3:>12.2f} ({t[lb] / base:4.1f}x)" for lb in labels))
    cold = {}
    print()
    print("cold start, ms, fresh process, bytecode cached (a normal install): numpy + "
          "ml_dtypes import | import pypto.language | compile + first run")
    with tempfile.TemporaryDirectory() as pycache:
        for key in PEERS:
            tn, tp, tr = cold_start(key, 1 if args.quick else 5, pycache)
            cold[key] = {"numpy_import_s": tn, "pypto_import_s": tp, "compile_run_s": tr}
            print(f"  {key:<10} {tn * 1e3:7.1f} | {tp * 1e3:7.1f} | {tr * 1e3:7.1f}   "
                  f"import pypto + compile + run {(tp + tr) * 1e3:7.1f}   with numpy "
                  f"{(tn + tp + tr) * 1e3:7.1f}")
    if not args.quick and os.environ.get("PYTHONDONTWRITEBYTECODE"):
        tn, tp, tr = cold_start("softmax", 3, None)
        print(f"  (softmax without a bytecode cache, as PYTHONDONTWRITEBYTECODE is set here: "
              f"{tn * 1e3:.1f} | {tp * 1e3:.1f} | {tr * 1e3:.1f})")
    print()
    print("task scaling (a parallel loop of 8x64 fp32 tiles, one task each), us per task:")
    counts = (100, 1000) if args.quick else (100, 1000, 10000)
    scal = scaling(counts, 3 if args.quick else 7)
    names = list(scal[0][1])
    print(f"  {'tasks':>7} " + " ".join(f"{n:>22}" for n in names))
    for n, per in scal:
        print(f"  {n:>7,} " + " ".join(f"{per[k] * 1e6:>22.2f}" for k in names))
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"kernels": rows, "geomean_sim_over_loop": geo, "cold_start": cold,
                       "check_costs_s": {k: t for k, t in costs},
                       "scaling_s_per_task": [{"tasks": n, **per} for n, per in scal]}, f,
                      indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
