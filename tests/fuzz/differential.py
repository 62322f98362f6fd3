"""The differential fuzzer: random valid kernels (`diffgen`) run on the simulator and
compared with their independent numpy models.

Each kernel is written to its own module file (the frontend reads it like a user's
file), compiled once, and called on two random input sets (of two row counts for a
`pl.dynamic` kernel), batched and block by block,
with its arrays C-ordered, Fortran-ordered and as strided views of larger arrays (a
`pl.Out` view goes through a device copy and is copied back) - twelve calls, run by
several threads at once from a fresh program, so the first calls race to compile too.
A call is a mismatch when it raises (a valid kernel refused), when its outputs differ
from the model beyond float32 rounding (rtol 1e-4, atol 1e-5 - reductions may sum in
another order; a typed recipe's - integer, FP16, BF16 - must equal it bit for bit), or when
the calls on one input set do not all give the same bits (batched and block by block,
every layout, every thread).
"""
from __future__ import annotations

import importlib.util
import random
import sys
import tempfile
import warnings
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from diffgen import Recipe, recipe

from pypto.sim import SimConfig, run_compiled

LAYOUTS = ("C", "F", "strided")
RTOL, ATOL = 1e-4, 1e-5


@dataclass
class Report:
    """What a differential run found."""

    kernels: int = 0
    calls: int = 0
    batched_calls: int = 0  # calls that ran at least one launch batched
    mismatches: list[str] = field(default_factory=list)
    sources: dict[int, str] = field(default_factory=dict)  # seed -> source, of failures

    def add(self, other: Report) -> None:
        self.kernels += other.kernels
        self.calls += other.calls
        self.batched_calls += other.batched_calls
        self.mismatches += other.mismatches
        self.sources.update(other.sources)

    def summary(self) -> str:
        return (f"differential: {self.kernels} kernels, {self.calls} calls "
                f"({self.batched_calls} ran batched), {len(self.mismatches)} mismatches")


def _values(rng: np.random.Generator, shape: tuple, rec: Recipe) -> np.ndarray:
    """Random inputs of the recipe's dtype: normal floats (FP16 / BF16 scaled up, so
    sums and products round), small integers (products wrap in INT8 / UINT8)."""
    dt = rec.np_dtype
    if dt.kind in "iu":
        lo = 0 if dt.kind == "u" else -20
        return rng.integers(lo, 20, shape).astype(dt)
    scale = 1.0 if rec.dtype == "FP32" else 64.0
    return (rng.standard_normal(shape) * scale).astype(dt)


def _laid_out(a: np.ndarray, layout: str) -> np.ndarray:
    if layout == "C":
        return np.ascontiguousarray(a)
    if layout == "F":
        return np.asfortranarray(a)
    big = np.zeros((a.shape[0], 2 * a.shape[1]), a.dtype)
    view = big[:, 1::2]
    view[...] = a
    return view


def _load(rec: Recipe, directory: Path) -> Any:
    name = f"_diff_kernel_{rec.seed}"
    path = directory / f"{name}.py"
    path.write_text(rec.source())
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    try:
        spec.loader.exec_module(mod)
    finally:
        sys.modules.pop(name, None)
    return mod.kernel


def check_kernel(rec: Recipe, directory: Path, threads: int = 4) -> Report:
    """Run one recipe's kernel (12 calls on `threads` threads) against its model."""
    rep = Report(kernels=1)
    rng = np.random.default_rng(rec.seed)
    m, n = rec.shape
    sets = []
    for k in range(2):
        if rec.form == "dyn" and k:
            m = rec.tm * (rec.gm + 1)  # one program, another row count
        a, b, w = (_values(rng, shape, rec) for shape in ((m, n), (m, n), (1, n)))
        s = float(rng.choice([0.5, -1.25, 2.0, 3.5]))
        sets.append(((a, b, w, s), rec.model(a, b, w, s)))
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            kernel = _load(rec, directory)
            compiled = kernel.compile()
            # a fresh program: this kernel's executables and batch plans are made by the
            # racing first calls
            compiled = type(compiled)(compiled.program, compiled.records, compiled.analyses,
                                      compiled.warnings, compiled.platform, compiled.source)
    except Exception as exc:  # noqa: BLE001 - a valid recipe must compile
        rep.mismatches.append(f"recipe {rec.seed}: compile failed: {type(exc).__name__}: {exc}")
        rep.sources[rec.seed] = rec.source()
        return rep
    calls = [(k, batch, layout) for k in range(len(sets)) for batch in (True, False)
             for layout in LAYOUTS]
    random.Random(rec.seed).shuffle(calls)
    configs = {True: SimConfig(batch=True), False: SimConfig(batch=False)}

    def call(job: tuple) -> tuple:
        k, batch, layout = job
        (a, b, w, s), want = sets[k]
        outs = [_laid_out(np.zeros_like(x), layout) for x in want]
        args = (_laid_out(a, layout), _laid_out(b, layout), _laid_out(w, layout), s, *outs)
        try:
            r = run_compiled(compiled, args, {}, configs[batch])
        except Exception as exc:  # noqa: BLE001 - reported as a mismatch
            return job, None, f"{type(exc).__name__}: {exc}", False
        return job, [np.array(o) for o in outs], None, r.batch_stats["batched"] > 0

    with ThreadPoolExecutor(threads) as pool:
        results = list(pool.map(call, calls))
    first: dict[int, list] = {}
    for (k, batch, layout), outs, err, batched in results:
        rep.calls += 1
        rep.batched_calls += int(batched)
        what = f"recipe {rec.seed} ({rec.form}), inputs {k}, batch={batch}, {layout}"
        if err is not None:
            rep.mismatches.append(f"{what}: raised {err}")
            continue
        assert outs is not None
        want = sets[k][1]
        for name, got, exp in zip("yr", outs, want):
            if rec.dtype != "FP32":  # typed: the model rounds as the device, bit for bit
                g, e = got.astype(np.float64), exp.astype(np.float64)
                if not np.array_equal(g, e, equal_nan=True):
                    bad = np.argwhere(~((g == e) | (np.isnan(g) & np.isnan(e))))
                    i = tuple(int(x) for x in bad[0])
                    rep.mismatches.append(f"{what}: {name}{list(i)} is {got[i]!r}, the model "
                                          f"says {exp[i]!r} ({len(bad)} elements differ)")
                continue
            if not np.allclose(got, exp, rtol=RTOL, atol=ATOL, equal_nan=True):
                bad = np.argwhere(~np.isclose(got, exp, rtol=RTOL, atol=ATOL, equal_nan=True))
                i = tuple(int(x) for x in bad[0])
                rep.mismatches.append(f"{what}: {name}{list(i)} is {got[i]!r}, the model "
                                      f"says {exp[i]!r} ({len(bad)} elements differ)")
        ref = first.setdefault(k, outs)
        if any(x.tobytes() != y.tobytes() for x, y in zip(outs, ref)):
            rep.mismatches.append(f"{what}: not bit-identical to the other calls on the "
                                  "same inputs")
    if rep.mismatches:
        rep.sources[rec.seed] = rec.source()
    return rep


def run(count: int, seed: int = 0, threads: int = 4, progress: Any = None) -> Report:
    """`count` recipes from seeds `seed`, `seed + 1`, ..."""
    total = Report()
    with tempfile.TemporaryDirectory(prefix="pypto-diff-") as tmp:
        for k in range(count):
            total.add(check_kernel(recipe(seed + k), Path(tmp), threads))
            if progress is not None:
                progress(k + 1, total)
    return total



__all__ = ["LAYOUTS", "Report", "check_kernel", "run"]
