"""How far one array is from another, in pypto-lib's `error_distribution` measures:
relative L2 error, cosine similarity, the fraction of points over each relative-difference
threshold (the `ratio_reldiff` rule), and percentiles of the relative difference, the
absolute difference and the reference's magnitude.

`measure` computes them once, as typed values; `ErrorMeasures.lines` writes them as
`error_distribution` prints them. The comparator (`pypto.golden.comparators`) and the
shadow run (`pypto.precision.shadow`) both read these, so a stage of the precision
ladder and an `error_distribution` check of the same arrays say the same numbers.
Both sides are compared in float32, as the comparator compares them.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

DIFF_THDS = (1e-3, 3e-3, 5e-3, 1e-2, 3e-2, 5e-2)
QUANTILES = (0.5, 0.9, 0.99, 0.999, 0.9999, 1.0)


@dataclass(frozen=True)
class Over:
    """The points whose relative difference exceeds one threshold."""

    thd: float
    frac: float
    worst: float


@dataclass(frozen=True)
class ErrorMeasures:
    numel: int
    nans: int
    """NaN in the actual values."""
    infs: int
    rel_l2: float
    """||a - e|| / ||e|| (NaN when either side holds a NaN or an Inf)."""
    cosine: float
    over: tuple[Over, ...]
    quantiles: tuple[float, ...]
    rel_diff: tuple[float, ...] | None
    """The percentiles (at `quantiles`) of |a - e| / max(|a|, |e|, 1e-6); None when no
    value is finite."""
    abs_diff: tuple[float, ...] | None
    magnitude: tuple[float, ...] | None
    """Of |e|."""
    magnitude_mean: float

    def lines(self) -> list[str]:
        """The report `error_distribution` prints."""
        out = []
        if self.nans or self.infs:
            out.append(f"    illegal values in actual: NaN={self.nans} Inf={self.infs}")
        out.append(f"rel-L2 = {self.rel_l2:.4%}  cosine = {self.cosine:.7f}  "
                   f"numel={self.numel}")
        for o in self.over:
            out.append(f"  diff_thd={o.thd:.0e}  frac>thd={o.frac:.4%}  worst={o.worst:.3g}")
        for label, values in (("rel-diff percentiles", self.rel_diff),
                              ("abs-diff percentiles", self.abs_diff)):
            out.append(self._percentiles(label, values))
        out.append(f"  |golden| mean={self.magnitude_mean:.4g}")
        out.append(self._percentiles("|golden| percentiles", self.magnitude))
        return out

    def _percentiles(self, label: str, values: tuple[float, ...] | None) -> str:
        if values is None:
            return f"  {label}: (no finite values)"
        return f"  {label}: " + "  ".join(f"p{q * 100:g}={v:.3g}"
                                          for q, v in zip(self.quantiles, values))


def measure(actual: np.ndarray, expected: np.ndarray, diff_thds: tuple = DIFF_THDS,
            quantiles: tuple = QUANTILES) -> ErrorMeasures:
    """The measures of `actual` against `expected` (float32 arrays of one shape)."""
    a = np.ascontiguousarray(actual, dtype=np.float32).reshape(-1)
    e = np.ascontiguousarray(expected, dtype=np.float32).reshape(-1)
    qs = np.asarray(quantiles, dtype=np.float64)
    nans, infs = int(np.isnan(a).sum()), int(np.isinf(a).sum())
    with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
        diff = np.abs(a - e)
        d64, a64, e64 = (v.astype(np.float64) for v in (diff, a, e))
        rel = float(np.sqrt(np.dot(d64, d64)) / max(float(np.sqrt(np.dot(e64, e64))), 1e-12))
        na = max(float(np.sqrt(np.dot(a64, a64))), 1e-8)
        ne = max(float(np.sqrt(np.dot(e64, e64))), 1e-8)
        cos = float(np.dot(a64, e64) / (na * ne))
        del d64, a64, e64
        big = np.maximum(np.abs(a), np.abs(e))
        over = []
        for thd in diff_thds:
            # `reldiff`'s rule, on the only elements it can fail: below the threshold the
            # relative difference is the absolute one (the same float32 operations)
            cand = np.flatnonzero(~(diff < thd))
            floor = np.float32((1.0 / (1 << 14)) / thd)
            r = np.maximum(big[cand], floor) + np.float32(1e-9)
            rdiff = diff[cand] / r
            bad = rdiff > thd
            n = int(bad.sum())
            over.append(Over(float(thd), n / max(a.size, 1),
                             float(rdiff[bad].max()) if n else 0.0))
        denom = np.maximum(big, np.float32(1e-6))
        mag = np.abs(e)
        return ErrorMeasures(
            numel=int(a.size), nans=nans, infs=infs, rel_l2=rel, cosine=cos,
            over=tuple(over), quantiles=tuple(float(q) for q in quantiles),
            rel_diff=_percentiles(diff / denom, qs),
            abs_diff=_percentiles(diff, qs),
            magnitude=_percentiles(mag, qs),
            magnitude_mean=float(mag.mean(dtype=np.float64)) if mag.size else math.nan)


def _percentiles(flat: np.ndarray, qs: np.ndarray) -> tuple[float, ...] | None:
    finite = np.isfinite(flat)
    if not finite.all():
        flat = flat[finite]
    if flat.size == 0:
        return None
    # the order statistics of the float32 values, interpolated in float64 (numpy's
    # "linear" rule): what np.quantile of their float64 copy gives, without the copy
    n = flat.size
    pos = qs * (n - 1)
    lo = np.floor(pos).astype(np.int64)
    hi = np.minimum(lo + 1, n - 1)
    part = np.partition(flat, np.unique(np.concatenate([lo, hi])))
    vlo, vhi = part[lo].astype(np.float64), part[hi].astype(np.float64)
    return tuple(float(v) for v in vlo + (pos - lo) * (vhi - vlo))


def reldiff(a: np.ndarray, e: np.ndarray, diff_thd: float) -> tuple[np.ndarray, np.ndarray]:
    """|a - e|, and the relative difference: |a - e| where that is below diff_thd, else
    |a - e| / (max(|a|, |e|, floor) + 1e-9). Outputs run to 10^8 elements, so the work
    goes in cache-sized chunks: each element is read once and written once instead of
    passing over memory once per temporary."""
    shape = np.broadcast_shapes(a.shape, e.shape)
    a = np.ascontiguousarray(np.broadcast_to(a, shape)).reshape(-1)
    e = np.ascontiguousarray(np.broadcast_to(e, shape)).reshape(-1)
    diff = np.empty(a.size, np.float32)
    rel = np.empty(a.size, np.float32)
    floor = np.float32((1.0 / (1 << 14)) / diff_thd)
    step = 1 << 16
    tmp = np.empty(min(step, a.size), np.float32)
    for lo in range(0, a.size, step):
        hi = min(lo + step, a.size)
        d, r, t = diff[lo:hi], rel[lo:hi], tmp[:hi - lo]
        np.subtract(a[lo:hi], e[lo:hi], out=d)
        np.abs(d, out=d)
        np.abs(a[lo:hi], out=r)
        np.abs(e[lo:hi], out=t)
        np.maximum(r, t, out=r)
        np.maximum(r, floor, out=r)
        r += np.float32(1e-9)
        np.divide(d, r, out=r)
        np.copyto(r, d, where=d < diff_thd)
    return diff.reshape(shape), rel.reshape(shape)
