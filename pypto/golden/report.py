"""What a run found: `RunResult`, one `OutputCheck` per validated output, and the
diagnosis of mismatches (where they are, and whether they are an unwritten `pl.Out`
region together with the fix that fits it)."""
from __future__ import annotations

import html
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from pypto.golden import _interop as io
from pypto.golden.validation import ElementRule

MAX_FIRST_BAD = 5
# the words a failing output's report uses when its unwritten pl.Out region is the whole
# failure (benchmarks/conformance.py counts such files apart: "fails by the guide's rule")
UNWRITTEN_ONLY = "every mismatch lies there"


@dataclass
class Mismatch:
    """Where an output disagrees with its golden."""

    count: int
    total: int
    max_abs: float | None  # over positions where both sides are finite
    max_rel: float | None
    first_bad: list  # index tuples, row-major order
    nan_actual: int = 0
    inf_actual: int = 0
    nan_expected: int = 0
    inf_expected: int = 0

    @property
    def fraction(self) -> float:
        return self.count / self.total if self.total else 0.0

    def line(self) -> str:
        parts = [f"{self.count}/{self.total} mismatched ({self.fraction:.2%})"]
        if self.max_abs is not None:
            parts.append(f"max abs err {self.max_abs:.4g}")
        if self.max_rel is not None:
            parts.append(f"max rel err {self.max_rel:.4g}")
        if self.first_bad:
            parts.append("first at " + " ".join(_fmt_index(i) for i in self.first_bad))
        return ", ".join(parts)

    def nonfinite_line(self) -> str:
        if not (self.nan_actual or self.inf_actual or self.nan_expected or self.inf_expected):
            return ""
        return (f"non-finite: actual NaN={self.nan_actual} Inf={self.inf_actual}; "
                f"expected NaN={self.nan_expected} Inf={self.inf_expected}")


@dataclass
class Unwritten:
    """A region of a `pl.Out` output that no task wrote."""

    count: int
    bounds: list  # (start, stop) per axis: the bounding box
    is_box: bool  # the region fills its bounding box
    tail_axis: int | None  # set when the region is "everything from tail_start on" along one axis
    tail_start: int | None
    source: str  # how it was found: "last writer = none" or "NaN residue"
    golden_zero: bool  # the golden holds only zeros there
    shape: tuple = ()
    slice_rank: int | None = None  # the region is whole sub-arrays [i, j, :, ...] of this rank
    slices: list = field(default_factory=list)  # their leading indices (first few)
    slice_count: int = 0
    fixes: list = field(default_factory=list)
    # every mismatched element of the failing output lies in this region (the failure is
    # the unwritten region and nothing else)
    explains_all: bool = False
    # the kernel's side (from the trace): which launches wrote what, and the kernel fix;
    # `fixes` are then the test-side fixes, for a region that really is don't-care
    kernel: list = field(default_factory=list)
    kernel_fix: str = ""

    def fix_lines(self) -> list[str]:
        """The fixes as report lines: the kernel's first, then the test's, labelled."""
        if not self.kernel_fix:
            return [("  fix: " if i == 0 else "   or: ") + fix
                    for i, fix in enumerate(self.fixes)]
        out = ["  fix the kernel: " + self.kernel_fix]
        if self.fixes:
            out.append("  only if that region really is don't-care, fix the test instead:")
            out += ["    - " + fix for fix in self.fixes]
        return out

    def region_text(self, shape: tuple) -> str:
        if self.tail_axis is not None:
            n = shape[self.tail_axis]
            return f"indices {self.tail_start}:{n} along axis {self.tail_axis}"
        box = "[" + ", ".join(f"{a}:{b}" for a, b in self.bounds) + "]"
        if self.is_box:
            return box
        if self.slice_rank:
            tail = ", ".join([":"] * (len(shape) - self.slice_rank))
            shown = " ".join("[" + ", ".join(str(i) for i in ix) + f", {tail}]"
                             for ix in self.slices)
            more = " ..." if self.slice_count > len(self.slices) else ""
            total = int(np.prod(shape[:self.slice_rank]))
            return f"{self.slice_count} of {total} slices {shown}{more}"
        return f"scattered inside {box}"


@dataclass
class OutputCheck:
    """The verdict on one output."""

    name: str
    passed: bool
    comparator: str
    detail: str
    actual: np.ndarray
    expected: np.ndarray
    direction: str | None = None  # "In" / "Out" / "InOut" as the kernel declares it
    mismatch: Mismatch | None = None
    unwritten: Unwritten | None = None
    hints: list = field(default_factory=list)
    # passed only because fresh memory read as zero here: the elements nothing wrote
    # (with garbage there, as on the device, the comparison fails)
    zero_fill: Unwritten | None = None
    # failed, and passes once the never-written elements of these pl.Out outputs (its
    # own, or others its comparator reads through actual_outputs) hold the golden's
    # values: {output: element count}. The failure is those regions' residue, nothing else
    through_unwritten: dict = field(default_factory=dict)
    # the comparator as the run applied it, for the element verdict (asked on demand)
    rule: ElementRule | None = field(default=None, repr=False, compare=False)
    _failing: Any = field(default=False, repr=False, compare=False)

    @property
    def shape(self) -> tuple:
        return tuple(self.actual.shape)

    def failing_elements(self) -> np.ndarray | None:
        """The elements the output's comparator fails by its own rule (bool, the output's
        shape), or None when the comparator has no element rule (its text is the whole
        verdict). Computed once. A ratio comparator may pass with some of them set."""
        if self._failing is False:
            self._failing = (None if self.rule is None
                             else self.rule.verdict(self.actual, self.expected))
        return self._failing

    def error_ratio(self) -> np.ndarray | None:
        """Each element's error over its threshold under the comparator's rule (> 1
        fails), or None when the rule has no threshold."""
        return None if self.rule is None else self.rule.error_ratio(self.actual, self.expected)

    def headline(self) -> str:
        dtype = self.actual.dtype.name
        shape = ", ".join(str(d) for d in self.shape)
        direction = f" pl.{self.direction}" if self.direction else ""
        return (f"'{self.name}'{direction} {dtype}[{shape}]: "
                f"{'PASS' if self.passed else 'FAIL'} ({self.comparator})")

    def lines(self) -> list[str]:
        out = [self.headline()]
        if self.passed and self.zero_fill is not None:
            u = self.zero_fill
            out.append(f"  warning: passes only because fresh memory reads as zeros on this "
                       f"platform: {u.count} element(s) {u.region_text(self.shape)} of this "
                       f"pl.Out are never written; they are allocator residue (often zero "
                       f"on a2a3, NaN on a2a3sim), so the pass is platform luck")
            out.extend(u.fix_lines())
        if self.passed:
            return out
        if self.mismatch is not None:
            out.append("  " + self.mismatch.line())
            nf = self.mismatch.nonfinite_line()
            if nf:
                out.append("  " + nf)
        if self.unwritten is not None:
            u = self.unwritten
            out.append(f"  unwritten pl.Out region: {u.region_text(self.shape)}, "
                       f"{u.count} element(s) never written ({u.source})"
                       + (f"; {UNWRITTEN_ONLY}" if u.explains_all else ""))
            if u.golden_zero:
                out.append("  the golden asserts zeros there, a value the kernel never "
                           "promised: an unwritten pl.Out region is allocator residue "
                           "(often zero on a2a3, NaN on a2a3sim)")
            out.extend("  kernel: " + line for line in u.kernel)
        if self.through_unwritten:
            out.append("  " + self.through_text())
        for hint in self.hints:
            out.append("  " + hint)
        if self.unwritten is not None:
            out.extend(self.unwritten.fix_lines())
        if self.detail and (self.mismatch is None or _detail_adds(self.comparator)):
            out.extend("  " + ln.strip() for ln in self.detail.splitlines()[:8] if ln.strip())
        return out


    def through_text(self) -> str:
        """Why a failure that is not (only) this output's own unwritten region is
        explained all the same: its comparison passes with the residue replaced."""
        others = [n for n in self.through_unwritten if n != self.name]
        if not others:
            return (f"its comparison passes once these {self.through_unwritten[self.name]} "
                    "never-written element(s) hold the golden's values: the mismatches "
                    "elsewhere are within its allowance, so the failure is the unwritten "
                    "region and nothing else")
        regions = " and ".join(f"'{n}' ({k} element(s))"
                               for n, k in self.through_unwritten.items())
        reads = (f"; {self.comparator} reads {', '.join(repr(n) for n in others)} through "
                 "actual_outputs" if others else "")
        return (f"passes once the never-written elements of {regions} hold the golden's "
                f"values: the failure is that unwritten pl.Out residue and nothing else"
                f"{reads} (fix the region where it is diagnosed)")


def _detail_adds(comparator: str) -> bool:
    """The comparator text says more than the generic summary (custom rules)."""
    return comparator != "allclose"


def _fmt_index(idx: tuple) -> str:
    return "[" + ",".join(str(int(i)) for i in idx) + "]"


# a failing output "looks like precision": at least this share of its elements off, none
# by more than this relative error, all finite, nothing left unwritten
PRECISION_SPREAD = 0.01
PRECISION_SMALL = 0.1


def looks_like_precision(check: OutputCheck) -> bool:
    """Whether a failed output's errors look like a precision loss (small, spread out,
    finite, every element written) rather than a wrong index or a missing write."""
    m = check.mismatch
    if check.passed or m is None or m.max_rel is None or check.unwritten is not None:
        return False
    if m.nan_actual or m.inf_actual or m.nan_expected or m.inf_expected:
        return False
    return m.fraction >= PRECISION_SPREAD and m.max_rel <= PRECISION_SMALL


@dataclass
class RunResult:
    """The outcome of `run` / `run_jit`.

    `passed`/`error` follow pypto-lib (`str()` is `PASS (1.23s)` or `FAIL: ... (1.23s)`).
    `outputs` holds one `OutputCheck` per validated output (actual and expected arrays,
    mismatch summary, unwritten-region diagnosis); `report()` renders them.
    """

    passed: bool
    error: str | None = None
    execution_time: float | None = None
    work_dir: Path | None = None
    bench: Any = None
    outputs: dict = field(default_factory=dict)
    name: str | None = None
    platform: str | None = None
    compiled: Any = None
    sim: Any = None
    validated: bool = True
    stages: dict = field(default_factory=dict)
    # things that did not fail the run but may fail it on the device (reads past the end
    # of a tensor); per-output ones live in OutputCheck.zero_fill
    warnings: list = field(default_factory=list)
    # the default tolerances the outputs were compared with (allclose, and comparators
    # given None); None when nothing was compared
    rtol: float | None = None
    atol: float | None = None
    # the build directory's files this run wrote (`pypto.dfx.artifacts.Artifact`: the
    # pass dumps, dfx_outputs/), each with its viewer command
    artifacts: list = field(default_factory=list)
    # the run replayed through the runtime's rings, per rank (`pypto.sim.runtime.rings.
    # RingReport`; one for a one-card run, none untraced): peaks, scope samples, deadlock
    rings: list = field(default_factory=list)
    # the program's casts and the precision traps among them (`cast_audit.CastAudit`);
    # the report shows the traps when an output fails
    cast_audit: Any = None
    # the float64 shadow comparison (`pypto.precision.shadow.ShadowReport`) when the run
    # asked for it (runtime_cfg["sim_shadow"]): where the values first drift
    shadow: Any = None

    def __str__(self) -> str:
        took = f" ({self.execution_time:.2f}s)" if self.execution_time is not None else ""
        if self.passed:
            return "PASS" + took
        return "FAIL" + (f": {self.error}" if self.error else "") + took

    def report(self) -> str:
        """A short, readable summary of the run."""
        took = f" in {self.execution_time:.2f}s" if self.execution_time is not None else ""
        where = f" on {self.platform}" if self.platform else ""
        head = f"{'PASS' if self.passed else 'FAIL'} {self.name or ''}{where}{took}".rstrip()
        if not self.validated and self.passed:
            head += " (validation skipped: no golden_fn or golden_data)"
        lines = [head]
        if not self.outputs and self.error:
            lines.extend("  " + ln for ln in self.error.splitlines())
        for check in self.outputs.values():
            lines.extend("  " + ln for ln in check.lines())
        lines.extend(f"  warning: {w}" for w in self.warnings)
        if not self.passed and self.cast_audit is not None and self.cast_audit.findings:
            lines.extend("  " + ln for ln in self.cast_audit.text().splitlines())
        if self.shadow is not None:
            lines.append("  " + self.shadow.text().splitlines()[-1])
        elif not self.passed and any(looks_like_precision(c) for c in self.outputs.values()):
            lines.append("  hint: the errors are small and spread over the output, as a "
                         "precision loss leaves them: the float64 shadow names the op where "
                         "the values first drift (runtime_cfg={'sim_shadow': 'fp64'}, "
                         "pypto-sim --shadow, %%pypto --precision)")
        return "\n".join(lines)

    def _repr_html_(self) -> str:
        color = "#1a7f37" if self.passed else "#cf222e"
        took = f" &middot; {self.execution_time:.2f}s" if self.execution_time is not None else ""
        rows = []
        for c in self.outputs.values():
            status = ("<b style='color:#1a7f37'>PASS</b>" if c.passed
                      else "<b style='color:#cf222e'>FAIL</b>")
            notes = "<br>".join(html.escape(ln.strip()) for ln in c.lines()[1:])
            shape = "&times;".join(str(d) for d in c.shape)
            rows.append(f"<tr><td><code>{html.escape(c.name)}</code></td>"
                        f"<td>{html.escape(c.direction or '')}</td>"
                        f"<td>{c.actual.dtype.name}[{shape}]</td><td>{status}</td>"
                        f"<td>{html.escape(c.comparator)}</td>"
                        f"<td style='text-align:left'>{notes}</td></tr>")
        table = ""
        if rows:
            table = ("<table><tr><th>output</th><th>dir</th><th>type</th><th>verdict</th>"
                     "<th>rule</th><th>details</th></tr>" + "".join(rows) + "</table>")
        elif self.error:
            table = f"<pre>{html.escape(self.error)}</pre>"
        if self.warnings:
            table += "".join(f"<div style='color:#8a6d3b'>warning: {html.escape(w)}</div>"
                             for w in self.warnings)
        return (f"<div><b style='color:{color}'>{'PASS' if self.passed else 'FAIL'}</b> "
                f"{html.escape(self.name or '')}{took}{table}</div>")


# ----------------------------------------------------------------------------------------
# diagnosis


# elements per slice of a mismatch summary: its float32 copies and index temporaries
# stay a few MB however large the output (a 22M-element bf16 output summarised whole
# took 1 GB, most of it `argwhere` of every mismatched element)
SUMMARY_CHUNK = 1 << 20


def summarize_mismatch(actual: np.ndarray, expected: np.ndarray, bad: np.ndarray
                       ) -> Mismatch:
    """Where `actual` disagrees with `expected` (`bad`: the comparator's mismatch mask,
    broadcastable to their shape), computed slice by slice over the row-major order:
    the same counts, maxima and first positions as over the whole arrays."""
    shape = np.shape(actual)
    a_flat = np.reshape(actual, -1)
    e_flat = np.reshape(expected, -1)
    bad_flat = np.reshape(np.broadcast_to(bad, shape), -1)
    total = int(a_flat.size)
    count = nan_a = inf_a = nan_e = inf_e = 0
    max_abs = max_rel = None
    first: list = []
    tiny = np.float32(1e-12)
    with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
        for lo in range(0, total, SUMMARY_CHUNK):
            hi = min(total, lo + SUMMARY_CHUNK)
            a = io.to_f32(a_flat[lo:hi])
            e = io.to_f32(e_flat[lo:hi])
            b = bad_flat[lo:hi]
            count += int(np.count_nonzero(b))
            nan_a += int(np.isnan(a).sum())
            inf_a += int(np.isinf(a).sum())
            nan_e += int(np.isnan(e).sum())
            inf_e += int(np.isinf(e).sum())
            sel = b & np.isfinite(a) & np.isfinite(e)
            if sel.any():
                diff = np.abs(a[sel] - e[sel])
                m_abs = float(diff.max())
                m_rel = float((diff / np.maximum(np.abs(e[sel]), tiny)).max())
                max_abs = m_abs if max_abs is None else max(max_abs, m_abs)
                max_rel = m_rel if max_rel is None else max(max_rel, m_rel)
            if len(first) < MAX_FIRST_BAD:
                at = np.flatnonzero(b)[:MAX_FIRST_BAD - len(first)] + lo
                first += [tuple(int(x) for x in np.unravel_index(i, shape)) for i in at]
    return Mismatch(count=count, total=total, max_abs=max_abs, max_rel=max_rel,
                    first_bad=first, nan_actual=nan_a, inf_actual=inf_a,
                    nan_expected=nan_e, inf_expected=inf_e)


def describe_unwritten(mask: np.ndarray, expected: np.ndarray, source: str) -> Unwritten:
    """Locate an unwritten region (mask True = never written) and decide its shape."""
    count = int(mask.sum())
    bounds = []
    for axis in range(mask.ndim):
        other = tuple(a for a in range(mask.ndim) if a != axis)
        hit = np.flatnonzero(mask.any(axis=other) if other else mask)
        bounds.append((int(hit[0]), int(hit[-1]) + 1))
    volume = int(np.prod([b - a for a, b in bounds])) if bounds else 1
    is_box = volume == count
    tail_axis = tail_start = None
    if is_box and mask.ndim:
        partial = [ax for ax, (a, b) in enumerate(bounds) if (a, b) != (0, mask.shape[ax])]
        if len(partial) == 1 and bounds[partial[0]][1] == mask.shape[partial[0]]:
            tail_axis, tail_start = partial[0], bounds[partial[0]][0]
    slice_rank, slices, slice_count = None, [], 0
    if not is_box:
        for k in range(1, mask.ndim):
            axes = tuple(range(k, mask.ndim))
            whole, some = mask.all(axis=axes), mask.any(axis=axes)
            if np.array_equal(whole, some):
                slice_rank = k
                hits = np.argwhere(whole)
                slice_count = len(hits)
                slices = [tuple(int(i) for i in h) for h in hits[:MAX_FIRST_BAD]]
                break
    e = io.to_f32(expected)[mask]
    golden_zero = bool(e.size) and bool(np.all(e == 0))
    return Unwritten(count=count, bounds=bounds, is_box=is_box, tail_axis=tail_axis,
                     tail_start=tail_start, source=source, golden_zero=golden_zero,
                     shape=tuple(mask.shape), slice_rank=slice_rank, slices=slices,
                     slice_count=slice_count)


def suggest_fixes(u: Unwritten, name: str, comparator: str) -> list[str]:
    """The fixes that fit an unwritten region, best first."""
    fixes = []
    inout = (f"declare '{name}' pl.InOut[...] and give its TensorSpec init_value=0 "
             "(uploaded zeros stay where the kernel does not write)")
    if u.golden_zero:
        fixes.append(inout + "; the golden expects zeros there")
    if u.tail_axis is not None:
        axis = "" if u.tail_axis == 0 else f", valid_axis={u.tail_axis}"
        fixes.append(f'compare only the written part: compare_fn={{"{name}": ratio_allclose('
                     f"valid_rows={u.tail_start}{axis}, max_error_ratio=0.0)}}")
        fixes.append(f"if the tail must read as zero: store zeros there in the kernel (or "
                     f"pl.InOut + init_value=0) and check with ratio_allclose(valid_rows="
                     f"{u.tail_start}{axis}, zero_tail=True)")
    if u.is_box:
        index = ", ".join(":" if (a, b) == (0, n) else f"{a}:{b}"
                          for (a, b), n in zip(u.bounds, u.shape))
        where = f'values["{name}"][{index}] = float("nan")'
    else:
        where = f'set values["{name}"] to NaN at the unwritten positions'
    fixes.append(f"if it is don't-care: in golden_fn {where} and compare with "
                 "ratio_allclose(ignore_nan=True)")
    if not u.golden_zero:
        fixes.append(inout)
    return fixes
