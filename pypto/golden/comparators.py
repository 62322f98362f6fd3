"""Comparators for particular outputs: top-k (value, index) pairs, pooled mappings, and
the error-distribution report. They follow the comparator protocol of `validation.py`."""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from pypto.golden import _interop as io
from pypto.golden.validation import (
    _f32_pair,
    element_verdict,
    ratio_allclose,
    with_attrs,
)
from pypto.precision.measures import measure


def topk_pair_compare(vals_name: str, *, dim: int = -1, descending: bool = True,
                      max_show: int = 10) -> Callable:
    """Comparator for top-k *index* outputs that accepts legal tie swaps.

    Where kernel and golden indices differ at a position, the difference is
    accepted when the kernel's own paired values (`actual_outputs[vals_name]`) stay
    ordered (descending by default) on both sides of that position - i.e. the two
    candidates scored the same and either order is right. A kernel that picked a
    worse candidate breaks the order and fails. The value tensor itself is checked
    by its own rule.
    """
    def failing(actual: Any, expected: Any, actual_outputs: dict
                ) -> tuple[np.ndarray | None, str]:
        """The positions whose index differs and whose paired values break the order
        (in the output's shape), or None and why the pairing cannot be checked."""
        if vals_name not in actual_outputs:
            return None, (f"    compare_fn misconfigured: vals_name='{vals_name}' is not an "
                          f"output (outputs: {list(actual_outputs)})")
        ai, ei = io.as_numpy(actual), io.as_numpy(expected)
        av = io.to_f32(io.as_numpy(actual_outputs[vals_name]))
        if ai.shape != ei.shape:
            return None, f"    idx shape mismatch: {ai.shape} vs {ei.shape}"
        if ai.shape != av.shape:
            return None, f"    idx/vals shape mismatch: idx={ai.shape} vs vals={av.shape}"
        if not -ai.ndim <= dim < ai.ndim:
            return None, f"    dim={dim} out of range for shape {ai.shape}"
        axis = dim % ai.ndim
        differ = np.moveaxis(ai != ei, axis, -1)
        vals = np.moveaxis(av, axis, -1)
        ordered_ok = np.ones_like(differ)
        if differ.shape[-1] >= 2:
            pair = (vals[..., :-1] >= vals[..., 1:] if descending
                    else vals[..., :-1] <= vals[..., 1:])
            ordered_ok[..., 1:] &= pair
            ordered_ok[..., :-1] &= pair
        return np.moveaxis(differ & ~ordered_ok, -1, axis), ""

    def cmp(actual: Any, expected: Any, *, actual_outputs: dict, **_: Any
            ) -> tuple[bool, str]:
        bad, problem = failing(actual, expected, actual_outputs)
        if bad is None:
            return False, problem
        if not bad.any():
            return True, ""
        ai, ei = io.as_numpy(actual), io.as_numpy(expected)
        av = io.to_f32(io.as_numpy(actual_outputs[vals_name]))
        axis = dim % ai.ndim
        k = ai.shape[axis]
        ai2 = np.moveaxis(ai, axis, -1).reshape(-1, k)
        ei2 = np.moveaxis(ei, axis, -1).reshape(-1, k)
        av2 = np.moveaxis(av, axis, -1).reshape(-1, k)
        lead_shape = tuple(s for d, s in enumerate(ai.shape) if d != axis)
        rows, cols = np.nonzero(np.moveaxis(bad, axis, -1).reshape(-1, k))
        order = "descending" if descending else "ascending"
        lines = [f"    top-k idx mismatch via '{vals_name}' (dim={dim} order={order}): "
                 f"{rows.size} position(s) where the kernel's values break {order} order"]
        for r, c in list(zip(rows, cols))[:max_show]:
            coord = list(np.unravel_index(r, lead_shape)) if lead_shape else []
            coord.insert(axis, c)
            lo, hi = max(0, c - 1), min(k, c + 2)
            window = ", ".join(f"{v:.6g}" for v in av2[r, lo:hi])
            lines.append(f"      [{','.join(str(int(x)) for x in coord)}] "
                         f"actual_idx={int(ai2[r, c])} expected_idx={int(ei2[r, c])} "
                         f"actual_score={av2[r, c]:.6g} actual_vals[{lo}:{hi}]=[{window}]")
        if rows.size > max_show:
            lines.append(f"      ... and {rows.size - max_show} more")
        return False, "\n".join(lines)

    def bad_mask(actual: Any, expected: Any, rtol: float, atol: float, *,
                 actual_outputs: dict | None = None, **_: Any) -> np.ndarray | None:
        # None when nothing pairs up (the comparator's text says why)
        return failing(actual, expected, actual_outputs or {})[0]

    cmp.__name__ = "topk_pair_compare"
    return with_attrs(cmp, bad_mask=bad_mask,
                      options=dict(vals_name=vals_name, dim=dim, descending=descending))


_INT_KINDS = "iu"


def mapped_pool_ratio_allclose(mapping_name: str, *, mapping_shape: tuple,
                               block_size: int, leading_rank_axis: bool = False,
                               pool_name: str = "pool", atol: float | None = None,
                               rtol: float | None = None, max_error_ratio: float = 0.005
                               ) -> Callable:
    """Comparator for block-major pools `[blocks, block_size, ...]` (or
    `[ranks, blocks, block_size, ...]` with `leading_rank_axis`).

    The slot mapping `inputs[mapping_name]` (shape `mapping_shape`, -1 = unused) names
    the rows the kernel writes: those rows are compared with `ratio_allclose`, and
    every other row must be bit-identical to the golden (stray writes fail).
    Negative ids other than -1, ids past the pool and duplicate ids fail.
    """
    mapping_shape = tuple(int(d) for d in mapping_shape)
    if not mapping_shape or any(d <= 0 for d in mapping_shape):
        raise ValueError(f"mapping_shape needs positive dims, got {mapping_shape}")
    if block_size <= 0:
        raise ValueError(f"block_size must be positive, got {block_size}")
    if leading_rank_axis and len(mapping_shape) < 2:
        raise ValueError("leading_rank_axis needs mapping_shape = (ranks, items...), got "
                         f"{mapping_shape}")
    rows_compare = ratio_allclose(atol=atol, rtol=rtol, max_error_ratio=max_error_ratio)

    def rows_of(a: np.ndarray, e: np.ndarray, inputs: dict) -> tuple[Any, str]:
        """(actual rows, expected rows, written) as [ranks, rows, rest], or None and the
        reason the pool and its mapping do not fit."""
        if a.shape != e.shape:
            return None, f"    {pool_name} shape mismatch: actual={a.shape} expected={e.shape}"
        block_axis = 2 if leading_rank_axis else 1
        if a.ndim <= block_axis or a.shape[block_axis] != block_size:
            layout = ("[ranks, blocks, block_size, ...]" if leading_rank_axis
                      else "[blocks, block_size, ...]")
            return None, (f"    {pool_name} should be block-major {layout} with "
                          f"block_size={block_size}, got {a.shape}")
        mapping = inputs.get(mapping_name)
        if mapping is None:
            return None, f"    compare_fn misconfigured: missing input '{mapping_name}'"
        m = io.as_numpy(mapping)
        if m.dtype.kind not in _INT_KINDS:
            return None, f"    '{mapping_name}' must be an integer tensor, got {m.dtype}"
        if tuple(m.shape) != mapping_shape:
            return None, (f"    '{mapping_name}' must have shape {mapping_shape}, got "
                          f"{tuple(m.shape)}")
        m = m.astype(np.int64)
        ranks = mapping_shape[0] if leading_rank_axis else 1
        if leading_rank_axis and a.shape[0] != ranks:
            return None, (f"    leading rank count of {pool_name} must be {ranks}, got "
                          f"{a.shape[0]}")
        nrows = (a.shape[1] if leading_rank_axis else a.shape[0]) * block_size
        m_rows = m.reshape(ranks, -1)

        def where(r: int, i: int) -> str:
            return f"[{r}, {i}]" if leading_rank_axis else f"[{i}]"

        neg = np.argwhere(m_rows < -1)
        if neg.size:
            r, i = neg[0]
            return None, (f"    '{mapping_name}'{where(r, i)}={m_rows[r, i]} is invalid; "
                          "only -1 may mark an unused slot")
        high = np.argwhere(m_rows >= nrows)
        if high.size:
            r, i = high[0]
            return None, (f"    '{mapping_name}'{where(r, i)}={m_rows[r, i]} is outside "
                          f"physical row range [0, {nrows})")
        written = np.zeros((ranks, nrows), dtype=bool)
        for r in range(ranks):
            ids = m_rows[r][m_rows[r] >= 0]
            uniq, counts = np.unique(ids, return_counts=True)
            if (counts > 1).any():
                dup = int(uniq[counts > 1][0])
                on = f" on rank {r}" if leading_rank_axis else ""
                return None, f"    '{mapping_name}' contains duplicate physical row {dup}{on}"
            written[r, ids] = True
        return (a.reshape(ranks, nrows, -1), e.reshape(ranks, nrows, -1), written), ""

    def compare(actual: Any, expected: Any, **kwargs: Any) -> tuple[bool, str]:
        a, e = io.as_numpy(actual), io.as_numpy(expected)
        fitted, problem = rows_of(a, e, kwargs.get("inputs", {}))
        if fitted is None:
            return False, problem
        a_rows, e_rows, written = fitted
        same = _bit_equal_rows(a_rows, e_rows)
        stray = np.argwhere(~written & ~same)
        if stray.size:
            r, row = stray[0]
            changed = int((~_bit_equal(a_rows[r, row], e_rows[r, row])).sum())
            rank_txt = f" rank={r}" if leading_rank_axis else ""
            return False, (f"    unmapped physical {pool_name} row changed:{rank_txt} "
                           f"row={row} changed_values={changed} mapping='{mapping_name}'")
        if not written.any():
            return True, ""
        ma, me = a_rows[written], e_rows[written]
        for label, rows in (("actual", ma), ("expected", me)):
            if io.is_floating(rows.dtype):
                bad = ~np.isfinite(io.to_f32(rows))
                if bad.any():
                    return False, (f"    {label} mapped rows in {pool_name} from "
                                   f"'{mapping_name}' contain {int(bad.sum())} non-finite "
                                   "value(s)")
        ok, detail = rows_compare(ma, me, **kwargs)
        if ok:
            return True, ""
        return False, f"    mapped rows in {pool_name} from '{mapping_name}':\n{detail}"

    def bad_mask(actual: Any, expected: Any, rtol: float, atol: float, *,
                 inputs: dict | None = None, **_: Any) -> np.ndarray | None:
        """Mapped rows: ratio_allclose's element rule (non-finite fails); every other
        row: each element that is not bit-identical to the golden (a stray write)."""
        a, e = io.as_numpy(actual), io.as_numpy(expected)
        fitted = rows_of(a, e, inputs or {})[0]
        if fitted is None:
            return None
        a_rows, e_rows, written = fitted
        bad = ~_bit_equal(a_rows, e_rows)
        if written.any():
            mapped = element_verdict(rows_compare, a_rows[written], e_rows[written], rtol=rtol,
                                     atol=atol)
            if mapped is None:  # (ratio_allclose always has its element rule)
                return None
            if io.is_floating(a.dtype):
                mapped = mapped | ~np.isfinite(io.to_f32(a_rows[written]))
            bad[written] = mapped
        return bad.reshape(a.shape)

    with_attrs(compare, bad_mask=bad_mask)
    compare.__name__ = (f"mapped_pool_ratio_allclose(mapping={mapping_name}, "
                        f"shape={mapping_shape}, block_size={block_size}, "
                        f"leading_rank_axis={leading_rank_axis}, atol={atol}, rtol={rtol}, "
                        f"max_error_ratio={max_error_ratio})")
    return compare


def _bit_equal(a: np.ndarray, e: np.ndarray) -> np.ndarray:
    """Element equality as `==` sees it (NaN != NaN, like torch)."""
    return np.asarray(a == e, dtype=bool)


def _bit_equal_rows(a: np.ndarray, e: np.ndarray) -> np.ndarray:
    return np.asarray(_bit_equal(a, e).all(axis=-1))


def error_distribution(diff_thds: tuple = (1e-3, 3e-3, 5e-3, 1e-2, 3e-2, 5e-2),
                       quantiles: tuple = (0.5, 0.9, 0.99, 0.999, 0.9999, 1.0),
                       always_pass: bool = True) -> Callable:
    """Measurement comparator: print how the error is distributed, then pass.

    Prints relative L2 error and cosine similarity, the fraction of points over
    each threshold of `diff_thds` (the ratio_reldiff rule), and percentiles of
    relative difference, absolute difference and golden magnitude. With
    `always_pass=False` NaN/Inf in the kernel output fail the check.
    """
    def cmp(actual: Any, expected: Any, **_: Any) -> tuple[bool, str]:
        a, e = _f32_pair(actual, expected)
        m = measure(a, e, diff_thds, quantiles)
        lines = m.lines()
        if (m.nans or m.infs) and not always_pass:
            print(lines[0])
            return False, lines[0]
        print("\n".join(lines))
        return True, ""

    def bad_mask(actual: Any, expected: Any, rtol: float, atol: float, **_: Any
                 ) -> np.ndarray:
        """A measurement fails no element; with always_pass=False, NaN/Inf ones."""
        a = io.to_f32(io.as_numpy(actual))
        return np.zeros(a.shape, bool) if always_pass else ~np.isfinite(a)

    cmp.__name__ = f"error_distribution(diff_thds={diff_thds})"
    return with_attrs(cmp, bad_mask=bad_mask)
