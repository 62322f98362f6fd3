"""Every comparator of the harness carries its element verdict (`bad_mask`) and, where
its rule has a threshold, each element's error over it (`error_ratio`); the run's
`OutputCheck.failing_elements()` is that verdict."""
from __future__ import annotations

import numpy as np

from pypto.golden.comparators import (
    error_distribution,
    mapped_pool_ratio_allclose,
    topk_pair_compare,
)
from pypto.golden.validation import (
    ElementRule,
    element_error_ratio,
    element_verdict,
    ratio_allclose,
    ratio_reldiff,
)


def test_default_is_allclose_and_its_ratio_crosses_one_where_it_fails():
    e = np.array([1.0, 1.0, 100.0, np.inf], np.float32)
    a = np.array([1.0, 1.5, 100.05, np.inf], np.float32)
    bad = element_verdict(None, a, e, rtol=1e-3, atol=1e-3)
    assert bad.tolist() == [False, True, False, False]
    ratio = element_error_ratio(None, a, e, rtol=1e-3, atol=1e-3)
    assert ratio[0] == 0 and ratio[3] == 0  # equal, equal infinities
    np.testing.assert_allclose(ratio[1:3], [0.5 / 2e-3, 0.05 / 0.101], rtol=1e-3)
    assert ((ratio > 1) == bad).all()


def test_ratio_comparators_restrict_to_what_they_look_at():
    cmp = ratio_allclose(atol=0.0, rtol=0.0, valid_rows=2, ignore_nan=True)
    e = np.array([[0.0], [np.nan], [0.0]], np.float32)
    a = np.array([[1.0], [1.0], [1.0]], np.float32)
    assert element_verdict(cmp, a, e, rtol=1, atol=1).ravel().tolist() == [True, False, False]
    ratio = element_error_ratio(cmp, a, e, rtol=1, atol=1).ravel()
    assert ratio[0] == np.inf and ratio[1] == 0 and ratio[2] == 0
    rel = ratio_reldiff(diff_thd=0.1)
    r = element_error_ratio(rel, np.array([1.0, 1.5]), np.array([1.0, 1.0]), rtol=0, atol=0)
    np.testing.assert_allclose(r, [0.0, (0.5 / 1.5) / 0.1], rtol=1e-4)


def test_mapped_pool_marks_stray_rows_and_mapped_mismatches():
    cmp = mapped_pool_ratio_allclose("slots", mapping_shape=(2,), block_size=2,
                                     atol=1e-3, rtol=0.0)
    e = np.zeros((3, 2, 4), np.float32)  # 3 blocks of 2 rows -> 6 physical rows
    a = e.copy()
    a[0, 1, 2] = 5.0   # row 1, mapped: a real mismatch
    a[2, 0, 0] = 1.0   # row 4, not mapped: a stray write
    slots = np.array([1, 3], np.int32)
    bad = element_verdict(cmp, a, e, rtol=0, atol=0, inputs={"slots": slots})
    assert bad.shape == a.shape and bad.sum() == 2
    assert bad[0, 1, 2] and bad[2, 0, 0]
    # a mapping that does not fit the pool: no element verdict, the text says why
    assert element_verdict(cmp, a, e, rtol=0, atol=0, inputs={}) is None
    assert not cmp(a, e, inputs={})[0]


def test_topk_and_error_distribution():
    idx_e = np.array([[0, 1, 2]])
    idx_a = np.array([[0, 2, 1]])
    tied = np.array([[3.0, 2.0, 2.0]])
    broken = np.array([[3.0, 1.0, 2.0]])
    cmp = topk_pair_compare("v")
    assert not element_verdict(cmp, idx_a, idx_e, rtol=0, atol=0,
                               actual_outputs={"v": tied}).any()
    assert element_verdict(cmp, idx_a, idx_e, rtol=0, atol=0,
                           actual_outputs={"v": broken}).tolist() == [[False, True, True]]
    assert element_error_ratio(cmp, idx_a, idx_e, rtol=0, atol=0) is None
    assert element_verdict(cmp, idx_a, idx_e, rtol=0, atol=0) is None  # no 'v' handed
    a = np.array([1.0, np.nan])
    assert not element_verdict(error_distribution(), a, np.ones(2), rtol=0, atol=0).any()
    assert element_verdict(error_distribution(always_pass=False), a, np.ones(2), rtol=0,
                           atol=0).tolist() == [False, True]


def test_a_comparator_without_an_element_rule_has_none():
    def whole(actual, expected, **_):
        return False, "no"

    assert ElementRule(whole, 1e-5, 1e-5).verdict(np.ones(3), np.zeros(3)) is None
    assert not ElementRule(whole, 1e-5, 1e-5).has_error_ratio


def test_a_four_argument_user_rule_still_works():
    def cmp(actual, expected, **_):
        return True, ""

    cmp.bad_mask = lambda a, e, rtol, atol: np.asarray(a) > 1
    assert ElementRule(cmp, 0, 0).verdict(np.array([0, 2]), np.zeros(2)).tolist() == [False,
                                                                                      True]
