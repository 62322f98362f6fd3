"""Comparators and validate_golden (numpy only)."""
import ml_dtypes
import numpy as np
import pytest

from pypto.golden import (
    error_distribution,
    isclose,
    mapped_pool_ratio_allclose,
    ratio_allclose,
    ratio_reldiff,
    topk_pair_compare,
    validate_golden,
)

BF16 = np.dtype(ml_dtypes.bfloat16)


def call(cmp, a, e, rtol=1e-5, atol=1e-5, outputs=None, inputs=None):
    return cmp(np.asarray(a), np.asarray(e), actual_outputs=outputs or {},
               expected_outputs={}, inputs=inputs or {}, rtol=rtol, atol=atol)


# -- default rule ---------------------------------------------------------------------------


def test_isclose_matches_torch_rules():
    a = np.array([1.0, np.nan, np.inf, 1.0 + 2e-5], np.float32)
    e = np.array([1.0, np.nan, np.inf, 1.0], np.float32)
    assert isclose(a, e, rtol=1e-5, atol=1e-5).tolist() == [True, False, True, False]


def test_integers_use_the_numeric_rule():
    a = np.array([5004], np.int32)
    e = np.array([5000], np.int32)
    assert isclose(a, e, rtol=1e-3, atol=0).all()
    assert not isclose(a, e, rtol=0, atol=0).any()


def test_bf16_compared_in_bf16():
    a = np.array([1.0078125, 3.0], BF16)
    e = np.array([1.0, 3.0], BF16)
    assert isclose(a, e, rtol=1e-3, atol=1e-5).tolist() == [False, True]
    assert isclose(a, e, rtol=1e-2, atol=1e-5).all()


def test_validate_golden_passes_and_prints(capsys):
    x = np.arange(6, dtype=np.float32)
    validate_golden({"y": x}, {"y": x.copy()})
    assert "'y' PASS" in capsys.readouterr().out


def test_validate_golden_names_all_failures():
    x = np.zeros(4, np.float32)
    with pytest.raises(AssertionError) as info:
        validate_golden({"a": x, "b": x + 1, "c": x}, {"a": x, "b": x, "c": x - 1})
    text = str(info.value)
    assert "['b', 'c']" in text
    assert "Mismatched elements: 4/4" in text


def test_validate_golden_dtype_mismatch_fails():
    with pytest.raises(AssertionError, match="dtype mismatch"):
        validate_golden({"y": np.zeros(2, np.float32)}, {"y": np.zeros(2, BF16)})


def test_validate_golden_custom_comparator_gets_inputs():
    seen = {}

    def cmp(actual, expected, *, actual_outputs, expected_outputs, inputs, rtol, atol):
        seen.update(inputs=inputs, rtol=rtol)
        return False, "    custom says no"

    with pytest.raises(AssertionError, match="custom says no"):
        validate_golden({"y": np.zeros(2)}, {"y": np.zeros(2)}, rtol=0.5,
                        compare_fn={"y": cmp}, inputs={"x": np.ones(2)})
    assert seen["rtol"] == 0.5 and "x" in seen["inputs"]


# -- ratio_allclose ---------------------------------------------------------------------------


def test_ratio_allclose_budget():
    e = np.zeros(1000, np.float32)
    a = e.copy()
    a[:5] = 1.0  # 0.5 % bad
    assert call(ratio_allclose(), a, e)[0]
    a[5] = 1.0
    ok, detail = call(ratio_allclose(), a, e)
    assert not ok and "error_count=6/1000" in detail
    assert call(ratio_allclose(max_error_ratio=0.01), a, e)[0]


def test_ratio_allclose_tolerances_fall_back_to_run():
    e = np.ones(10, np.float32)
    a = e + 0.01
    assert not call(ratio_allclose(max_error_ratio=0.0), a, e, rtol=1e-3, atol=1e-3)[0]
    assert call(ratio_allclose(max_error_ratio=0.0), a, e, rtol=1e-3, atol=2e-2)[0]
    assert call(ratio_allclose(atol=2e-2, max_error_ratio=0.0), a, e, atol=0)[0]


def test_ratio_allclose_rejects_bad_ratio():
    with pytest.raises(ValueError):
        ratio_allclose(max_error_ratio=1.5)


@pytest.mark.parametrize("bad", [np.nan, np.inf])
def test_ratio_allclose_nonfinite_is_fatal(bad):
    e = np.zeros(1000, np.float32)
    a = e.copy()
    a[0] = bad
    ok, detail = call(ratio_allclose(max_error_ratio=0.5), a, e)
    assert not ok and "illegal values" in detail
    ok, _ = call(ratio_allclose(max_error_ratio=0.5), e, a)
    assert not ok


def test_ratio_allclose_valid_rows():
    e = np.zeros((4, 3), np.float32)
    a = e.copy()
    a[3] = np.nan
    cmp = ratio_allclose(valid_rows=3, max_error_ratio=0.0)
    assert call(cmp, a, e)[0]
    assert call(ratio_allclose(valid_rows=0), a, e)[0]
    ok, detail = call(ratio_allclose(valid_rows=5), a, e)
    assert not ok and "out of range" in detail


def test_ratio_allclose_valid_axis():
    e = np.zeros((2, 4), np.float32)
    a = e.copy()
    a[:, 2:] = 7.0
    assert call(ratio_allclose(valid_rows=2, valid_axis=1, max_error_ratio=0.0), a, e)[0]
    assert not call(ratio_allclose(valid_rows=3, valid_axis=1, max_error_ratio=0.0), a, e)[0]


def test_ratio_allclose_zero_tail():
    e = np.zeros((4, 2), np.float32)
    a = e.copy()
    cmp = ratio_allclose(valid_rows=2, zero_tail=True, max_error_ratio=0.0)
    assert call(cmp, a, e)[0]
    a[3, 1] = 1.0
    ok, detail = call(cmp, a, e)
    assert not ok and "1 nonzero" in detail
    a[3, 1] = np.nan  # residue counts as nonzero
    assert not call(cmp, a, e)[0]


def test_ratio_allclose_ignore_nan():
    e = np.ones((4, 2), np.float32)
    e[2:] = np.nan
    a = np.ones((4, 2), np.float32)
    a[2:] = np.nan
    cmp = ratio_allclose(ignore_nan=True, max_error_ratio=0.0)
    assert call(cmp, a, e)[0]
    assert not call(ratio_allclose(max_error_ratio=0.0), a, e)[0]  # without the option
    a[0, 0] = np.nan  # NaN where the golden cares still fails
    ok, detail = call(cmp, a, e)
    assert not ok and "NaN" in detail
    a[0, 0] = 3.0
    assert not call(cmp, a, e)[0]
    everything = np.full((2, 2), np.nan, np.float32)
    assert call(cmp, np.zeros((2, 2), np.float32), everything)[0]


def test_ratio_allclose_upcasts_bf16():
    e = np.array([1.0, 2.0], BF16)
    a = np.array([1.0, 2.0], BF16)
    assert call(ratio_allclose(max_error_ratio=0.0), a, e)[0]


def test_ratio_allclose_bad_mask():
    cmp = ratio_allclose(valid_rows=1, atol=0.1, rtol=0.0)
    mask = cmp.bad_mask(np.array([[0.0], [5.0]]), np.zeros((2, 1)), 1e-5, 1e-5)
    assert mask.tolist() == [[False], [False]]


# -- ratio_reldiff ----------------------------------------------------------------------------


def test_ratio_reldiff_rules():
    e = np.full(100, 10.0, np.float32)
    a = e.copy()
    a[:5] = 10.5  # rdiff 0.5/10.5 = 0.048 > 0.01
    assert call(ratio_reldiff(diff_thd=0.01, pct_thd=0.05), a, e)[0]
    ok, detail = call(ratio_reldiff(diff_thd=0.01, pct_thd=0.04), a, e)
    assert not ok and "error_count=5/100" in detail
    ok, detail = call(ratio_reldiff(diff_thd=0.01, pct_thd=0.5, max_diff_hd=0.04), a, e)
    assert not ok and "max_diff_hd" in detail
    small = np.full(10, 1e-6, np.float32)
    assert call(ratio_reldiff(pct_thd=0.0), small * 3, small)[0]  # below diff_thd in absolute


def test_ratio_reldiff_validates_arguments():
    for kw in (dict(diff_thd=0), dict(pct_thd=2), dict(max_diff_hd=0)):
        with pytest.raises(ValueError):
            ratio_reldiff(**kw)


def test_ratio_reldiff_prefix_and_nan():
    e = np.ones((3, 2), np.float32)
    a = e.copy()
    a[2] = np.nan
    assert not call(ratio_reldiff(pct_thd=0.0), a, e)[0]
    assert call(ratio_reldiff(pct_thd=0.0, valid_rows=2), a, e)[0]
    assert not call(ratio_reldiff(pct_thd=0.0, valid_rows=2, zero_tail=True), a, e)[0]
    e2 = e.copy()
    e2[2] = np.nan
    assert call(ratio_reldiff(pct_thd=0.0, ignore_nan=True), a, e2)[0]


# -- topk_pair_compare -------------------------------------------------------------------------


def topk(vals, idx_a, idx_e, **kw):
    cmp = topk_pair_compare("v", **kw)
    return call(cmp, np.array(idx_a), np.array(idx_e), outputs={"v": np.array(vals)})


def test_topk_identical_and_tie_swap():
    assert topk([[3.0, 2.0, 1.0]], [[0, 1, 2]], [[0, 1, 2]])[0]
    assert topk([[3.0, 2.0, 2.0]], [[0, 2, 1]], [[0, 1, 2]])[0]


def test_topk_real_miss_fails():
    ok, detail = topk([[3.0, 1.0, 2.0]], [[0, 5, 2]], [[0, 1, 2]])
    assert not ok and "actual_idx=5" in detail


def test_topk_dim_and_order():
    assert topk([[1.0], [2.0], [2.0]], [[0], [2], [1]], [[0], [1], [2]], dim=0,
                descending=False)[0]
    assert not topk([[1.0, 2.0, 0.0]], [[0, 1, 9]], [[0, 1, 2]], descending=False)[0]


def test_topk_misconfigured():
    cmp = topk_pair_compare("missing")
    ok, detail = call(cmp, np.zeros((1, 2)), np.zeros((1, 2)), outputs={"v": np.zeros((1, 2))})
    assert not ok and "misconfigured" in detail
    assert not topk([[1.0, 2.0]], [[0, 1, 2]], [[0, 1, 2]])[0]


# -- mapped_pool_ratio_allclose -----------------------------------------------------------------


def pool_case():
    pool = np.arange(2 * 4 * 3, dtype=np.float32).reshape(2, 4, 3)  # 8 physical rows
    mapping = np.array([5, 1, -1], np.int64)
    return pool, mapping


def pool_cmp(**kw):
    return mapped_pool_ratio_allclose("slots", mapping_shape=(3,), block_size=4,
                                      max_error_ratio=0.0, **kw)


def test_mapped_pool_compares_mapped_rows_only_numerically():
    e, m = pool_case()
    a = e.copy()
    a[1, 1] += 1e-7  # physical row 5, mapped: numerical compare
    assert call(pool_cmp(), a, e, inputs={"slots": m})[0]
    a[0, 1] += 1.0  # physical row 1, mapped, too far
    assert not call(pool_cmp(), a, e, inputs={"slots": m})[0]


def test_mapped_pool_catches_stray_writes():
    e, m = pool_case()
    a = e.copy()
    a[0, 3, 0] += 0.5  # physical row 3 is not mapped: must be bit-identical
    ok, detail = call(pool_cmp(), a, e, inputs={"slots": m})
    assert not ok and "unmapped physical pool row changed" in detail


@pytest.mark.parametrize("mapping,needle", [
    ([5, -2, -1], "only -1"), ([5, 8, -1], "outside"), ([5, 5, -1], "duplicate"),
])
def test_mapped_pool_mapping_checks(mapping, needle):
    e, _ = pool_case()
    ok, detail = call(pool_cmp(), e, e, inputs={"slots": np.array(mapping)})
    assert not ok and needle in detail


def test_mapped_pool_misconfiguration():
    e, m = pool_case()
    assert "missing input" in call(pool_cmp(), e, e)[1]
    assert "shape" in call(pool_cmp(), e, e, inputs={"slots": m[:2]})[1]
    assert "integer" in call(pool_cmp(), e, e, inputs={"slots": m.astype(np.float32)})[1]
    assert "block-major" in call(pool_cmp(), e.reshape(4, 2, 3), e.reshape(4, 2, 3),
                                 inputs={"slots": m})[1]
    with pytest.raises(ValueError):
        mapped_pool_ratio_allclose("s", mapping_shape=(0,), block_size=4)
    with pytest.raises(ValueError):
        mapped_pool_ratio_allclose("s", mapping_shape=(3,), block_size=0)
    with pytest.raises(ValueError):
        mapped_pool_ratio_allclose("s", mapping_shape=(3,), block_size=4, leading_rank_axis=True)


def test_mapped_pool_leading_rank_axis():
    e = np.zeros((2, 2, 4, 3), np.float32)  # ranks, blocks, block_size, hidden
    m = np.array([[0, 7], [3, -1]])
    cmp = mapped_pool_ratio_allclose("slots", mapping_shape=(2, 2), block_size=4,
                                     leading_rank_axis=True, max_error_ratio=0.0)
    a = e.copy()
    a[1, 0, 3] = 1e-9
    assert call(cmp, a, e, inputs={"slots": m})[0]
    a[1, 1, 0] = 1.0  # rank 1 row 4: unmapped
    ok, detail = call(cmp, a, e, inputs={"slots": m})
    assert not ok and "rank=1" in detail


def test_mapped_pool_nonfinite_mapped_rows():
    e, m = pool_case()
    a = e.copy()
    a[1, 1, 0] = np.nan
    ok, detail = call(pool_cmp(), a, e, inputs={"slots": m})
    assert not ok and "non-finite" in detail


# -- error_distribution --------------------------------------------------------------------------


def test_error_distribution_reports_and_passes(capsys):
    e = np.linspace(1, 2, 100).astype(np.float32)
    assert call(error_distribution(), e * 1.001, e)[0]
    out = capsys.readouterr().out
    assert "rel-L2" in out and "frac>thd" in out and "p50=" in out


def test_error_distribution_strict_fails_on_nan(capsys):
    e = np.ones(4, np.float32)
    a = e.copy()
    a[0] = np.nan
    assert call(error_distribution(), a, e)[0]
    assert not call(error_distribution(always_pass=False), a, e)[0]


def test_reldiff_chunks_match_the_formula_bit_for_bit():
    from pypto.golden.validation import _reldiff

    rng = np.random.default_rng(5)
    n = 7 * 28091  # several chunks (of 65536) and a ragged last one
    a = rng.standard_normal(n).astype(np.float32)
    e = a + rng.standard_normal(n).astype(np.float32) * np.float32(1e-3)
    a[:4] = [np.nan, np.inf, 0.0, -np.inf]
    e[:4] = [1.0, np.inf, 0.0, 5.0]
    with np.errstate(invalid="ignore"):
        diff = np.abs(a - e)
        floor = np.float32((1.0 / (1 << 14)) / 2e-3)
        denom = np.maximum(np.maximum(np.abs(a), np.abs(e)), floor) + np.float32(1e-9)
        want = np.where(diff < 2e-3, diff, diff / denom)
        got_diff, got = _reldiff(a.reshape(7, -1), e.reshape(7, -1), 2e-3)
    assert got.shape == (7, n // 7)
    assert np.array_equal(got_diff.reshape(-1), diff, equal_nan=True)
    assert np.array_equal(got.reshape(-1), want, equal_nan=True)


def test_bf16_widens_to_fp32_exactly():
    from pypto.golden import _interop as io

    bits = np.arange(1 << 16, dtype=np.uint16)  # every bf16 value
    x = bits.view(ml_dtypes.bfloat16)
    got, want = io.to_f32(x), x.astype(np.float32)
    finite = ~np.isnan(want)
    assert np.array_equal(got[finite].view(np.uint32), want[finite].view(np.uint32))
    assert np.isnan(got[~finite]).all()
    assert np.array_equal(io.to_f32(x.reshape(256, 256)[:, ::3]), want.reshape(256, 256)[:, ::3],
                          equal_nan=True)
