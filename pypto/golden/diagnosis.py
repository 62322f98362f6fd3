"""Explaining a harness run's outputs: where a failing output disagrees with its golden
and whether that is a `pl.Out` region nothing wrote (with the fixes that fit), and
whether a passing output rests on fresh memory reading as zeros (`check_zero_fill`).
The unwritten elements come from the trace's last writers when there is a trace, else
from the residue pattern the simulator fills fresh memory with."""
from __future__ import annotations

import linecache
from collections.abc import Callable
from typing import Any

import numpy as np

from pypto.golden import _interop as io
from pypto.golden.atomic import atomic_onto_residue
from pypto.golden.report import (
    OutputCheck,
    Unwritten,
    describe_unwritten,
    suggest_fixes,
    summarize_mismatch,
)
from pypto.golden.spec import TensorSpec
from pypto.golden.validation import ElementRule, check_outputs, default_compare, isclose
from pypto.sim.device.fill import residue


def never_written(sim: Any, name: str, shape: tuple) -> np.ndarray | None:
    """Elements of an output no task wrote, from the trace's last writers (None when the
    run kept no trace of it)."""
    trace = getattr(sim, "trace", None)
    writers = getattr(trace, "writers", None) if trace is not None else None
    if not writers or name not in writers:
        return None
    w = writers[name]
    return w.never_written() if tuple(w.events.shape) == tuple(shape) else None


def explain_unwritten(mask: np.ndarray, expected: np.ndarray, source: str, name: str,
                      comparator: str, sim: Any = None) -> Unwritten:
    """The unwritten region's shape with the fixes that fit it: the kernel's first (what
    its launches wrote, from the trace of `sim`), then the test's."""
    u = describe_unwritten(mask, expected, source)
    u.fixes = suggest_fixes(u, name, comparator)
    if sim is not None:
        u.kernel, u.kernel_fix = kernel_coverage(sim, name, u)
    return u


def unwritten_mask(sim: Any, name: str, actual: np.ndarray, seed: int
                   ) -> tuple[np.ndarray | None, str]:
    """Elements of a pl.Out output nothing wrote, and how we know."""
    mask = never_written(sim, name, actual.shape)
    if mask is not None:
        return mask, "last writer = none"
    if io.is_floating(actual.dtype):
        return np.isnan(io.to_f32(actual)), "NaN residue"
    try:
        return actual == residue(actual.shape, actual.dtype, seed), "residue pattern"
    except Exception:  # noqa: BLE001 - the diagnosis is best effort
        return None, ""


def diagnose(check: OutputCheck, spec: TensorSpec, sim: Any, cmp: Callable | None,
             rtol: float, atol: float, tensor: str | None = None, program: Any = None
             ) -> None:
    """Explain a failing output: where it mismatches, whether that is a pl.Out region
    nothing wrote, or one an atomic add accumulated into before anything wrote it.
    `tensor` is the kernel's name for it (the spec's by default); `program` the compiled
    program (to name the atomic store)."""
    a, e = check.actual, check.expected
    if a.shape != e.shape:
        return
    try:
        # the comparator's own element verdict; a custom comparator without one is
        # located by allclose, and only said when that finds something
        bad = (check.failing_elements() if check.rule is not None
               else ElementRule(cmp, rtol, atol).verdict(a, e))
        own_rule = bad is not None
        if bad is None:
            bad = ~isclose(a, e, rtol=rtol, atol=atol) if a.dtype == e.dtype else \
                ~isclose(io.to_f32(a), io.to_f32(e), rtol=rtol, atol=atol)
        if own_rule or cmp is default_compare or bad.any():
            check.mismatch = summarize_mismatch(a, e, bad)
        else:
            # a custom comparator failed on its own terms (a ratio, a mapping, a top-k
            # pairing) while every element is allclose: "0 mismatched" would contradict
            # it, so its own text (check.detail) is the whole story
            bad = None
    except Exception:  # noqa: BLE001 - a custom rule we cannot mirror
        bad = None
    d = check.direction
    if d == "In":
        check.hints.append(
            f"'{spec.name}' is a plain pl.Tensor parameter (In): it is never copied back, so "
            f"the host still holds its initial value. Annotate it pl.Out[...] (or "
            f"pl.InOut[...] if the kernel also reads it).")
        return
    if d == "Out" and spec.init_value is not None and not _all_zero_init(spec):
        check.hints.append(
            f"'{spec.name}' is pl.Out, so its init_value is not uploaded; declare it "
            f"pl.InOut[...] if the kernel updates existing contents.")
    if d != "Out" or sim is None:
        return
    onto = atomic_onto_residue(sim, tensor or spec.name, a.shape, program)
    if onto is not None:
        check.hints.append(onto.hint(spec.name))
    mask, source = unwritten_mask(sim, tensor or spec.name, a, 0)
    if mask is None or not mask.any():
        return
    if bad is not None and not (mask & np.broadcast_to(bad, mask.shape)).any():
        return
    check.unwritten = explain_unwritten(mask, e, source, spec.name, check.comparator, sim)
    if bad is not None:
        bad_all = np.broadcast_to(bad, mask.shape)
        check.unwritten.explains_all = bool(bad_all.any()) and not (bad_all & ~mask).any()


def diagnose_through_unwritten(checks: dict[str, OutputCheck], sim: Any, golden: dict,
                               rtol: float, atol: float, compare_fn: dict, inputs: dict,
                               wrap: Callable, kernel_names: dict | None = None) -> None:
    """A failing output that its own unwritten region does not wholly explain: does its
    comparison pass once every pl.Out element no task wrote (by the trace) holds the
    golden's value? Then the failure is that residue and nothing else - typically a
    comparator that reads another output's never-written tail through
    `actual_outputs` and rejects its NaN. Sets `through_unwritten` to the regions that
    are needed for the pass (each one left out in turn makes it fail)."""
    open_ = [c for c in checks.values()
             if not c.passed and not (c.unwritten is not None and c.unwritten.explains_all)]
    if not open_:
        return
    masks = {}
    for name, c in checks.items():
        if c.direction != "Out" or c.actual.shape != c.expected.shape:
            continue
        mask = never_written(sim, (kernel_names or {}).get(name, name), c.actual.shape)
        if mask is not None and mask.any():
            masks[name] = mask
    if not masks:
        return
    patched = {n: _golden_into(c.actual, c.expected, masks.get(n)) for n, c in checks.items()}
    actual = {n: c.actual for n, c in checks.items()}
    for check in open_:
        if not _passes(check.name, patched, golden, rtol, atol, compare_fn, inputs, wrap):
            continue
        needed = {n: int(m.sum()) for n, m in masks.items() if len(masks) == 1 or not _passes(
            check.name, {**patched, n: actual[n]}, golden, rtol, atol, compare_fn, inputs, wrap)}
        check.through_unwritten = needed or {n: int(m.sum()) for n, m in masks.items()}


def _golden_into(actual: np.ndarray, expected: np.ndarray, mask: np.ndarray | None
                 ) -> np.ndarray:
    if mask is None:
        return actual
    out = np.array(actual, copy=True)
    out[mask] = np.asarray(expected).astype(out.dtype, copy=False)[mask]
    return out


def _passes(name: str, outputs: dict, golden: dict, rtol: float, atol: float,
            compare_fn: dict, inputs: dict, wrap: Callable) -> bool:
    fn = compare_fn.get(name) or default_compare
    actual, expected = wrap(outputs), wrap(golden)
    try:
        ok, _ = fn(actual[name], expected[name], actual_outputs=actual,
                   expected_outputs=expected, inputs=wrap(inputs), rtol=rtol, atol=atol)
    except Exception:  # noqa: BLE001 - a comparator that cannot run: no explanation
        return False
    return bool(ok)


def _all_zero_init(spec: TensorSpec) -> bool:
    return isinstance(spec.init_value, (int, float)) and spec.init_value == 0


def check_zero_fill(check: OutputCheck, spec: TensorSpec, sim: Any, golden: dict,
                    rtol: float, atol: float, compare_fn: dict, inputs: dict,
                    wrap: Callable, tensor: str | None = None) -> None:
    """A passing pl.Out with elements nothing wrote, on zero-filled fresh memory: does
    the pass hold when those elements hold garbage, as on a2a3sim? If not, note it."""
    a = check.actual
    mask = never_written(sim, tensor or spec.name, a.shape)
    if mask is None or not mask.any():
        return
    fn = compare_fn.get(spec.name)
    if not (io.is_floating(a.dtype) and _nan_anywhere_fails(fn)):
        # run the comparison again on what the device could hold there
        garbage = np.array(a, copy=True)
        if io.is_floating(a.dtype):
            garbage[mask] = np.nan
        else:
            garbage[mask] = residue(a.shape, a.dtype, 0)[mask]
        cmp = {spec.name: fn} if fn is not None else {}
        verdict = check_outputs(wrap({spec.name: garbage}),
                                wrap({spec.name: golden[spec.name]}), rtol, atol, cmp,
                                wrap(inputs), echo=False)
        if verdict[spec.name][0]:
            return  # the comparison does not look there (valid_rows, NaN golden, ...)
    check.zero_fill = explain_unwritten(mask, check.expected, "last writer = none",
                                        spec.name, check.comparator, sim)


def _nan_anywhere_fails(fn: Callable | None) -> bool:
    """Whether a NaN anywhere in the output fails this comparison for sure, so the
    garbage re-run can be skipped (on a 134M-element output it costs seconds): plain
    allclose, and the ratio comparators when they look at every position (they reject
    any non-finite point they compare)."""
    if fn is None or fn is default_compare:
        return True
    opts = getattr(fn, "options", None)
    if not isinstance(opts, dict) or not ("max_error_ratio" in opts or "pct_thd" in opts):
        return False
    return opts.get("valid_rows") is None and not opts.get("ignore_nan")


# ----------------------------------------------------------------------------------------
# the kernel's side of an unwritten region: which launches wrote what


def kernel_coverage(sim: Any, name: str, u: Unwritten) -> tuple[list[str], str]:
    """What the kernel's launches wrote of output `name` next to the region `u` no task
    wrote: report lines (one per launch site: where, inside which loop, how many tasks,
    which rows) and the kernel-side fix; ([], "") when the run kept no trace. A region no
    task writes is the kernel's business first: a loop bound that stops a tile short, a
    tail without a launch of its own."""
    trace = getattr(sim, "trace", None)
    sites: dict = {}
    for rec in getattr(trace, "tasks", None) or ():
        boxes = [a for a in rec.accesses if a.mode == "W" and a.tensor == name]
        if boxes:
            site = sites.setdefault(str(rec.span), {"span": rec.span, "name": rec.name,
                                                    "tasks": 0, "boxes": []})
            site["tasks"] += 1
            site["boxes"].extend(boxes)
    if not sites:
        return [], ""
    axis = u.tail_axis if u.tail_axis is not None else _partial_axis(u)
    unit = _unit(axis, len(u.shape))
    lines, steps = [], {}
    for key, site in sites.items():
        loop, loop_at = enclosing_loop(site["span"])
        inside = f" in `{loop}` ({loop_at})" if loop else ""
        head = (f"'{site['name']}' launched at {_at(site['span'])}{inside} ran "
                f"{site['tasks']} time(s)")
        if axis is None:
            lines.append(head)
            continue
        spans = sorted({(int(b.lo[axis]), int(b.hi[axis])) for b in site["boxes"]})
        sizes = [hi - lo for lo, hi in spans]
        steps[key] = max(set(sizes), key=sizes.count)
        covered = _merge(spans)
        total = sum(hi - lo for lo, hi in covered)
        arith = (f" ({len(spans)} x {steps[key]} = {total} < {u.shape[axis]})"
                 if len(covered) == 1 and len(set(sizes)) == 1 and total < u.shape[axis]
                 else "")
        lines.append(f"{head}, {steps[key]} {unit} each: {unit} "
                     + ", ".join(f"{lo}:{hi}" for lo, hi in covered) + arith)
    return lines, _kernel_fix(u, axis, unit, sites, steps)


def _kernel_fix(u: Unwritten, axis: int | None, unit: str, sites: dict, steps: dict) -> str:
    if axis is None:
        box = "[" + ", ".join(f"{a}:{b}" for a, b in u.bounds) + "]"
        if not u.is_box:  # the launches write parts of the box and leave the rest
            return (f"the launches leave {u.count} element(s) inside {box} unwritten: "
                    "make them store those too (a loop bound or a valid_shape that stops "
                    "short), or stop promising them (below)")
        return f"make a launch store into {box}: no task writes it"
    lo, hi = u.bounds[axis]
    if len(sites) == 1 and hi == u.shape[axis]:
        key, site = next(iter(sites.items()))
        loop, loop_at = enclosing_loop(site["span"])
        step = steps.get(key) or 1
        if loop:
            more = -(-(hi - lo) // step)
            tail = ""
            if (hi - lo) % step:
                tail = (f"; the last tile holds only {(hi - lo) % step} {unit}: load and "
                        f"store it with a valid_shape (e.g. pl.min({step}, "
                        f"{u.shape[axis]} - start)) so it stays in bounds")
            return (f"the loop at {loop_at} stops {hi - lo} {unit} short: let its bound "
                    f"cover {unit} {lo}:{hi} too ({more} more iteration(s) of {step})"
                    + tail)
    return f"make the kernel store {unit} {lo}:{hi}: no launch writes them"


def _unit(axis: int | None, rank: int) -> str:
    if axis is None:
        return "elements"
    if rank >= 2 and axis == rank - 2:
        return "rows"
    if axis == rank - 1:
        return "columns"
    return f"indices of axis {axis}"


def _partial_axis(u: Unwritten) -> int | None:
    """The one axis along which the unwritten box does not span the whole output."""
    if not u.is_box:
        return None
    partial = [ax for ax, (a, b) in enumerate(u.bounds) if (a, b) != (0, u.shape[ax])]
    return partial[0] if len(partial) == 1 else None


def _merge(spans: list) -> list:
    out: list = []
    for lo, hi in sorted(spans):
        if out and lo <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], hi))
        else:
            out.append((lo, hi))
    return out


def _at(span: Any) -> str:
    return f"{span.file}:{span.line}" if getattr(span, "line", 0) else str(span)


def enclosing_loop(span: Any) -> tuple[str, str]:
    """The source line of the loop around a launch and where it is (("", "") if there
    is none): the nearest line above with less indentation that opens a `for`."""
    if not getattr(span, "line", 0):
        return "", ""
    lines = linecache.getlines(span.file)
    if not 0 < span.line <= len(lines):
        return "", ""
    text = lines[span.line - 1]
    indent = len(text) - len(text.lstrip())
    for n in range(span.line - 1, 0, -1):
        line = lines[n - 1]
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        depth = len(line) - len(line.lstrip())
        if depth >= indent:
            continue
        if stripped.startswith("for "):
            return stripped, f"{span.file}:{n}"
        if stripped.startswith(("def ", "class ", "@")):
            return "", ""
        indent = depth
    return "", ""
