"""A mismatch summary and ratio_reldiff work slice by slice: the same answers as over the
whole arrays, in memory that does not grow with the output."""
import tracemalloc

import ml_dtypes
import numpy as np
import pytest

import pypto.golden.report as report
import pypto.golden.validation as validation
from pypto.golden import ratio_reldiff


def _reference_summary(a, e, bad):
    """The summary computed over the whole arrays at once."""
    a32, e32 = a.astype(np.float32), e.astype(np.float32)
    bad = np.broadcast_to(bad, a.shape)
    sel = bad & np.isfinite(a32) & np.isfinite(e32)
    diff = np.abs(a32[sel] - e32[sel])
    return dict(count=int(bad.sum()), total=a.size,
                max_abs=float(diff.max()) if diff.size else None,
                max_rel=float((diff / np.maximum(np.abs(e32[sel]), np.float32(1e-12))).max())
                if diff.size else None,
                first_bad=[tuple(int(x) for x in i) for i in np.argwhere(bad)[:5]],
                nan_actual=int(np.isnan(a32).sum()), inf_actual=int(np.isinf(a32).sum()),
                nan_expected=int(np.isnan(e32).sum()), inf_expected=int(np.isinf(e32).sum()))


@pytest.mark.parametrize("dtype", [np.float32, ml_dtypes.bfloat16, np.float16])
@pytest.mark.parametrize("shape", [(), (1,), (29,), (6, 7), (3, 5, 4)])
def test_summary_by_slices_equals_the_whole(monkeypatch, dtype, shape):
    monkeypatch.setattr(report, "SUMMARY_CHUNK", 4)  # slices cut rows and mismatches
    rng = np.random.default_rng(len(shape))
    a = rng.standard_normal(shape).astype(dtype)
    e = rng.standard_normal(shape).astype(dtype)
    if a.size > 2:
        a.reshape(-1)[1] = np.nan
        e.reshape(-1)[-1] = np.inf
    for bad in (rng.random(shape) < 0.4, np.zeros(shape, bool),
                rng.random(shape[-1:]) < 0.5 if shape else np.ones((), bool)):
        got = report.summarize_mismatch(a, e, bad)
        assert got.__dict__ == _reference_summary(a, e, bad)
    if len(shape) == 2:  # a transposed (non-contiguous) output: row-major positions still
        bad = rng.random(shape[::-1]) < 0.4
        got = report.summarize_mismatch(a.T, e.T, bad)
        assert got.__dict__ == _reference_summary(a.T, e.T, bad)


def _peak_bytes(fn):
    tracemalloc.start()
    try:
        fn()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_summary_of_a_large_output_stays_small():
    # 4M bf16 elements, all mismatched: whole, the summary held ~200 MB (argwhere of every
    # mismatch alone is 96 MB); by slices, a few float32 slices of SUMMARY_CHUNK elements
    n = 1 << 22
    a = np.ones((64, n // 64), ml_dtypes.bfloat16)
    e = np.zeros_like(a)
    bad = np.ones(a.shape, bool)
    peak = _peak_bytes(lambda: report.summarize_mismatch(a, e, bad))
    assert peak < 40 * report.SUMMARY_CHUNK  # ~10 float32/bool temporaries of a slice
    m = report.summarize_mismatch(a, e, bad)
    assert (m.count, m.max_abs, m.first_bad[:2]) == (n, 1.0, [(0, 0), (0, 1)])


def _reldiff_cases():
    rng = np.random.default_rng(7)
    for shape in [(1,), (23,), (5, 6), (2, 3, 4)]:
        for dtype in (np.float32, ml_dtypes.bfloat16):
            e = rng.standard_normal(shape).astype(dtype)
            a = (e.astype(np.float32) * (1 + rng.standard_normal(shape) * 0.02)).astype(dtype)
            yield a, e, {}
            yield a, e, dict(pct_thd=0.0, max_show=3)
            yield a, e, dict(pct_thd=0.9, max_diff_hd=0.02)
            yield a, e, dict(valid_rows=shape[0] // 2 + 1, pct_thd=0.0)
            nan_e = e.copy()
            nan_e.reshape(-1)[::4] = np.nan
            yield a, nan_e, dict(ignore_nan=True, pct_thd=0.0, max_show=4)
            yield a, nan_e, {}  # illegal values, counted over every slice


def test_ratio_reldiff_by_slices_equals_the_whole(monkeypatch):
    whole = [ratio_reldiff(**kw)(a, e) for a, e, kw in _reldiff_cases()]
    monkeypatch.setattr(validation, "VERDICT_CHUNK", 5)
    sliced = [ratio_reldiff(**kw)(a, e) for a, e, kw in _reldiff_cases()]
    assert sliced == whole
    assert sum(not ok for ok, _ in whole) >= 10  # failing verdicts with their messages
    text = next(t for ok, t in whole if "first 3 mismatches" in t)
    assert text.count("rdiff=") == 3  # one per mismatch shown
    assert any("illegal values in comparison: actual: NaN=0" in t for _, t in whole)


def test_ratio_reldiff_of_a_large_output_stays_small():
    n = 1 << 22
    e = np.ones((64, n // 64), ml_dtypes.bfloat16)
    a = (e.astype(np.float32) * 1.5).astype(ml_dtypes.bfloat16)
    cmp = ratio_reldiff(diff_thd=0.01, pct_thd=0.0)
    peak = _peak_bytes(lambda: cmp(a, e))
    assert peak < 40 * validation.VERDICT_CHUNK
    ok, text = cmp(a, e)
    assert not ok and f"error_count={n}/{n}" in text and "[1] actual=1.5" in text
