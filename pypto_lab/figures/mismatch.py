"""The numbers behind a mismatch heatmap: one 2-D plane of an output, classified per
element (within tolerance, error, NaN/Inf, never written) and pooled into blocks so that
a large output draws as at most `max_side` cells a side.

Which elements fail is the comparator's own element verdict, asked of the core
(`LabOutput.failing`); nothing here re-decides it. Pooling keeps the *worst* element of
each block (a failing element beats every passing one; a NaN or a never-written one beats
any finite error; then the largest error of the visible metric), so every failing element
marks its cell however large the output, the cell counts them, and the hover reports the
worst: its index, its values and its writer. Block sides are powers of two, so blocks
line up with tiles.
Everything is vectorised over the plane: a 2048x1024 output pools in tens of ms.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from pypto_lab.runs import LabOutput

OK, ERROR, NONFINITE, UNWRITTEN = 0, 1, 2, 3
STATUS_NAMES = ("within tolerance", "error", "NaN/Inf", "never written")
METRICS = {"abs": "|actual − expected|", "rel": "relative error", "ulp": "error in ULPs",
           "tol": "error ÷ tolerance (the comparator's threshold; > 1 fails)",
           "count": "failing elements per cell",
           "task": "writer task", "block": "writer block"}
OWNERSHIP = ("task", "block")
MAX_SIDE = 160


@dataclass
class Pooled:
    """One plane (or a window of it), pooled. Arrays are (h, w), one cell per block."""

    plane_shape: tuple[int, int]
    origin: tuple[int, int]
    """Plane index of the first element (a window's corner; (0, 0) otherwise)."""
    size: tuple[int, int]
    """Rows and columns covered (the window's size; the plane's otherwise)."""
    fy: int
    fx: int
    status: np.ndarray
    """int8, the worst class in the block."""
    value: np.ndarray
    """float32, the visible metric at the block's worst element."""
    rows: np.ndarray
    cols: np.ndarray
    """int32, plane indices of the block's worst element."""
    expected: np.ndarray
    actual: np.ndarray
    bad: np.ndarray
    """int32, elements outside tolerance in the block."""
    events: np.ndarray | None
    """int32, the trace's write event of the worst element (None: no trace)."""
    bad_total: int
    total: int

    @property
    def pooled(self) -> bool:
        return self.fy * self.fx > 1


def slice_2d(a: np.ndarray, lead: tuple[int, ...]) -> np.ndarray:
    """The trailing 2-D plane of `a` at leading indices `lead` (1-D becomes one row)."""
    a = np.asarray(a)
    if a.ndim == 0:
        return a.reshape(1, 1)
    if a.ndim == 1:
        return a.reshape(1, -1)
    return a[tuple(lead) + (slice(None), slice(None))] if a.ndim > 2 else a


def _work_dtype(dtype: np.dtype) -> type:
    """float32 for the narrow float types (the difference is exact enough to draw and
    half the memory traffic of float64); float64 for wide and integer types."""
    return np.float32 if (dtype.kind == "f" and dtype.itemsize <= 4) or \
        dtype.name in ("bfloat16", "float8_e4m3fn", "float8_e5m2") else np.float64


def metrics_for(out: LabOutput) -> list[str]:
    """The metrics `out` can draw: error ÷ tolerance only where the comparator holds
    elements to a threshold (a top-k pairing does not)."""
    return [m for m in METRICS if m != "tol" or out.has_error_ratio]


def error_metric(actual: np.ndarray, expected: np.ndarray, metric: str,
                 diff: np.ndarray | None = None) -> np.ndarray:
    """`abs`, `rel` (over |expected|) or `ulp` (in units of the output dtype's spacing)."""
    wt = _work_dtype(actual.dtype)
    e = expected.astype(wt, copy=False)
    if diff is None:
        diff = np.abs(actual.astype(wt, copy=False) - e)
    if metric in ("abs", "count") + OWNERSHIP:
        return diff
    tiny = np.finfo(wt).tiny
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        if metric == "rel":
            return diff / np.maximum(np.abs(e), tiny)
        if metric == "ulp":
            try:
                eps = float(np.finfo(actual.dtype).eps)
            except ValueError:  # integer outputs: one unit is one ULP
                return diff
            return diff / (eps * np.exp2(np.floor(np.log2(np.maximum(np.abs(e), tiny)))))
    raise ValueError(f"unknown metric {metric!r}; choose one of {', '.join(METRICS)}")


def pool_factor(n: int, max_side: int) -> int:
    """The smallest power of two that brings `n` to at most `max_side`."""
    return 1 << max(0, math.ceil(math.log2(max(1, n) / max_side))) if n > max_side else 1


def classify(out: LabOutput, lead: tuple, window: tuple | None, metric: str
             ) -> tuple[np.ndarray, ...]:
    """Per element of the plane (or window): status, badness (-1 where the comparator
    passes the element, the metric for the elements it fails, +inf for NaN/Inf and
    never-written ones), actual, expected, events.

    Which elements fail is the comparator's own element verdict (`LabOutput.failing`,
    from the core); this only sorts the failing ones into error / NaN-Inf / never
    written for the colour. A comparator that judges the output only as a whole has no
    failing elements here; the figure says so and draws the metric everywhere."""
    a = slice_2d(out.actual, lead)
    e = slice_2d(out.expected, lead)
    ev = out.events_plane(lead)
    failing = out.failing()
    bad = slice_2d(failing, lead) if failing is not None else np.zeros(a.shape, bool)
    if window is not None:
        r0, r1, c0, c1 = window
        a, e, bad = a[r0:r1, c0:c1], e[r0:r1, c0:c1], bad[r0:r1, c0:c1]
        ev = ev[r0:r1, c0:c1] if ev is not None else None
    status = np.where(bad, np.int8(ERROR), np.int8(OK))
    wt = _work_dtype(a.dtype)
    with np.errstate(invalid="ignore", over="ignore"):
        diff = np.abs(a.astype(wt, copy=False) - e.astype(wt, copy=False))
    status[bad & ~np.isfinite(a.astype(wt, copy=False))] = NONFINITE
    if ev is not None:
        status[(ev == 0) & bad] = UNWRITTEN
    elif out.unwritten_bounds and out.direction == "Out":
        status[_box_mask(a.shape, out.unwritten_bounds, lead, window) & bad] = UNWRITTEN
    if metric == "tol":
        err = _plane(out.error_ratio(), lead, window)
        if err is None:
            raise ValueError(f"{out.comparator} holds its elements to no threshold: "
                             "no error ÷ tolerance to draw; choose abs, rel or ulp")
    else:
        err = error_metric(a, e, metric, diff)
    shown = err if failing is None else np.where(bad, err, np.float32(-1))
    badness = np.asarray(shown, dtype=np.float32)
    badness[status >= NONFINITE] = np.inf
    return status, badness, a, e, ev


def _plane(full: np.ndarray | None, lead: tuple, window: tuple | None) -> np.ndarray | None:
    if full is None:
        return None
    plane = slice_2d(full, lead)
    if window is not None:
        r0, r1, c0, c1 = window
        plane = plane[r0:r1, c0:c1]
    return plane


def pool(out: LabOutput, metric: str = "abs", lead: tuple = (), window: tuple | None = None,
         max_side: int = MAX_SIDE) -> Pooled:
    """Classify and pool one plane of `out` (or the `window` (r0, r1, c0, c1) of it)."""
    status, badness, a, e, ev = classify(out, lead, window, metric)
    h, w = status.shape
    fy, fx = pool_factor(h, max_side), pool_factor(w, max_side)
    if fy * fx == 1:
        rows, cols = np.indices((h, w), dtype=np.int32)
        pick_status, value, bad = status, badness, (status != OK).astype(np.int32)
    else:
        k = np.argmax(_blocks(badness, fy, fx, -np.inf), axis=-1)
        hb, wb = k.shape
        rows = (np.arange(hb, dtype=np.int32)[:, None] * fy + k // fx).astype(np.int32)
        cols = (np.arange(wb, dtype=np.int32)[None, :] * fx + k % fx).astype(np.int32)
        pick_status = status[rows, cols]
        value = badness[rows, cols]
        bad = _block_sum(status != OK, fy, fx)
    if metric == "count":  # the pooled verdict itself: how many of the cell's elements fail
        value = np.where(bad > 0, bad, -1).astype(np.float32)
    origin = (window[0], window[2]) if window is not None else (0, 0)
    wt = _work_dtype(a.dtype)
    return Pooled(plane_shape=slice_2d(out.actual, lead).shape, origin=origin, size=(h, w),
                  fy=fy, fx=fx, status=pick_status, value=value,
                  rows=rows + origin[0], cols=cols + origin[1],
                  expected=e[rows, cols].astype(wt), actual=a[rows, cols].astype(wt),
                  bad=bad, events=ev[rows, cols] if ev is not None else None,
                  bad_total=int((status != OK).sum()), total=status.size)


def _blocks(m: np.ndarray, fy: int, fx: int, fill: float) -> np.ndarray:
    """(H, W) → (H/fy, W/fx, fy*fx), padding the edges with `fill`."""
    h, w = m.shape
    ph, pw = -h % fy, -w % fx
    if ph or pw:
        m = np.pad(m, ((0, ph), (0, pw)), constant_values=fill)
    hb, wb = m.shape[0] // fy, m.shape[1] // fx
    return m.reshape(hb, fy, wb, fx).transpose(0, 2, 1, 3).reshape(hb, wb, fy * fx)


def _block_sum(m: np.ndarray, fy: int, fx: int) -> np.ndarray:
    h, w = m.shape
    ph, pw = -h % fy, -w % fx
    if ph or pw:
        m = np.pad(m, ((0, ph), (0, pw)))
    hb, wb = m.shape[0] // fy, m.shape[1] // fx
    return m.reshape(hb, fy, wb, fx).sum(axis=(1, 3), dtype=np.int32)


def _box_mask(shape: tuple, bounds: list, lead: tuple, window: tuple | None) -> np.ndarray:
    """The unwritten box of the harness's diagnosis, in this plane (or window)."""
    m = np.zeros(shape, bool)
    if not all(lo <= i < hi for i, (lo, hi) in zip(lead, bounds)):
        return m
    (r0, r1), (c0, c1) = bounds[-2:] if len(bounds) >= 2 else [(0, 1), bounds[-1]]
    if window is not None:
        r0, r1, c0, c1 = r0 - window[0], r1 - window[0], c0 - window[2], c1 - window[2]
    m[max(0, r0):max(0, r1), max(0, c0):max(0, c1)] = True
    return m
