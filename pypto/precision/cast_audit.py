"""The cast audit: every `pl.cast` of a compiled program, and the precision traps among
them that pypto-lib's precision-tuning guide localises by hand.

Found from the program alone (no run needed):

* **double rounding** - a value cast to a narrower type and then again to a narrower
  one (fp32 -> bf16 -> int8): each hop rounds, and the result can differ from one
  rounding straight from the source; the fix is to cast once, from the source;
* **ties away vs ties to even** - a cast to a narrower float in the default mode
  `"round"` (ties away from zero) while the golden rounds ties to even: torch's
  `.to()` / `.bfloat16()` / `.half()` and numpy's `astype` do, and so does storing a
  wider golden value into an output of that dtype. The two agree except on exact ties,
  which a kernel can hit often (products of bf16 values, sums of a few of them).

Which golden conversions exist is read from the golden function's source text; that is
all it is, and the finding says where it looked. How many elements of a run actually
land on a tie needs the values the cast saw, which only a run can give: that count is
not part of this static audit.
"""
from __future__ import annotations

import inspect
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from pypto.diagnostics import site_label
from pypto.ir import dtypes
from pypto.ir import nodes as N
from pypto.ir.dtypes import DType
from pypto.ir.span import Span
from pypto.ir.transform import walk
from pypto.ops.cast import MODE_NAMES
from pypto.ops.registry import all_ops

_DEFAULT_MODE = "round"

# significand bits (with the implicit one) and largest binary exponent of each float type
# the cast can produce: what decides whether a conversion can lose a value
_FLOAT_FORMAT = {
    "FP32": (24, 127), "FP16": (11, 15), "BF16": (8, 127), "FP8E4M3FN": (4, 8),
    "FP8E5M2": (3, 15), "FP8E8M0": (1, 127), "FP4": (2, 2), "HF8": (4, 8), "HF4": (2, 2),
}

# how a golden written with torch or numpy names a narrow float type
_GOLDEN_NAMES = {
    "BF16": ("bfloat16", ".bfloat16()"),
    "FP16": ("float16", ".half()", "torch.half"),
    "FP8E4M3FN": ("float8_e4m3fn",),
    "FP8E5M2": ("float8_e5m2",),
}


def loses_values(src: DType, dst: DType) -> bool:
    """Whether converting `src` to `dst` can change a value (round or saturate)."""
    if src == dst:
        return False
    if dst.kind is dtypes.Kind.BOOL:
        return True
    if src.is_float():
        if not dst.is_float():
            return True  # fractions round, large values saturate
        s, d = _FLOAT_FORMAT.get(src.name), _FLOAT_FORMAT.get(dst.name)
        if s is None or d is None:
            return True
        return d[0] < s[0] or d[1] < s[1]
    if src.is_int() and dst.is_float():
        fmt = _FLOAT_FORMAT.get(dst.name)
        value_bits = src.bits - (1 if src.is_signed_int() else 0)
        return fmt is None or value_bits > fmt[0]
    if src.is_int() and dst.is_int():
        return dst.bits < src.bits or src.is_signed_int() != dst.is_signed_int()
    return True


@dataclass(frozen=True)
class CastSite:
    """One `pl.cast` in the program."""

    function: str
    span: Span
    source: DType
    target: DType
    mode: str
    inner: CastSite | None = None
    """The cast whose result this one converts again (a chain), if any."""

    @property
    def narrowing(self) -> bool:
        return loses_values(self.source, self.target)

    def where(self) -> str:
        return site_label(f"{self.span.file}:{self.span.line}") if self.span.known \
            else self.function

    def text(self) -> str:
        return (f"{self.where()}: pl.cast {self.source.name} -> {self.target.name}, "
                f"mode={self.mode!r}")


@dataclass(frozen=True)
class CastFinding:
    """A precision trap at a cast site, in words, with the fix."""

    kind: str
    """"double-rounding" or "ties-away-vs-even"."""
    site: CastSite
    message: str
    fix: str

    def text(self) -> str:
        return f"{self.site.where()}: {self.message}\n    fix: {self.fix}"


@dataclass(frozen=True)
class GoldenConversion:
    """A place where the golden rounds to a narrow float with ties to even."""

    dtype: str
    where: str
    how: str


@dataclass(frozen=True)
class CastAudit:
    sites: tuple[CastSite, ...]
    findings: tuple[CastFinding, ...]

    def text(self) -> str:
        if not self.findings:
            return ""
        return "cast audit:\n" + "\n".join("  " + f.text().replace("\n", "\n  ")
                                           for f in self.findings)


def cast_sites(program: Any) -> list[CastSite]:
    """Every `pl.cast` of the program's functions, in source order, each linked to the
    cast its input came straight from (directly or through a local name)."""
    sites: list[CastSite] = []
    for fn in program.functions:
        defined: dict[int, Any] = {}  # Var uid -> the expression assigned to it
        for node in walk(fn):
            if isinstance(node, N.Assign) and len(node.targets) == 1:
                defined[node.targets[0].uid] = node.value
        found: dict[int, CastSite] = {}  # id(Call) -> site, so chains share one node
        for node in walk(fn):
            if isinstance(node, N.Call) and _converts_dtype(node):
                site = _site(fn.name, node, defined, found)
                if site is not None:
                    sites.append(site)
    sites.sort(key=lambda s: (s.span.file, s.span.line, s.span.col))
    return sites


def _site(function: str, call: N.Call, defined: dict, found: dict) -> CastSite | None:
    if id(call) in found:
        return found[id(call)]
    source, target = _dtype(call.args[0]), _dtype(call)
    if source is None or target is None:
        return None
    feeding = call.args[0]
    while isinstance(feeding, N.Var) and feeding.uid in defined:
        feeding = defined[feeding.uid]
    inner = None
    if isinstance(feeding, N.Call) and _converts_dtype(feeding):
        inner = _site(function, feeding, defined, found)
    site = CastSite(function, call.span, source, target, _mode(call), inner)
    found[id(call)] = site
    return site


def _converts_dtype(call: N.Call) -> bool:
    """A `pl.cast` (the op's registry fact, not its name)."""
    op = all_ops().get(call.op)
    return op is not None and op.converts


def _dtype(expr: Any) -> DType | None:
    return getattr(getattr(expr, "type", None), "dtype", None)


def _mode(call: N.Call) -> str:
    mode = call.kwarg("mode")
    if mode is None and len(call.args) > 2:
        mode = call.args[2]
    value = getattr(mode, "value", mode)
    if value is None:
        return _DEFAULT_MODE
    if isinstance(value, int) and not isinstance(value, bool):
        return MODE_NAMES.get(value, str(value))
    return str(value)


def golden_conversions(golden_fn: Callable | None, outputs: dict[str, DType]
                       ) -> list[GoldenConversion]:
    """Where the golden rounds to a narrow float (ties to even): each conversion its
    source text names, and each output of a narrow float dtype (a wider golden value
    stored into it is rounded on the way in)."""
    found: list[GoldenConversion] = []
    lines, first = _source_lines(golden_fn)
    file = _file(golden_fn) if golden_fn is not None else "<golden>"
    for i, line in enumerate(lines):
        code = line.split("#", 1)[0]
        for name, spellings in _GOLDEN_NAMES.items():
            if any(sp in code for sp in spellings) and _converts(code):
                found.append(GoldenConversion(name, site_label(f"{file}:{first + i}"),
                                              code.strip()))
    for out, dt in outputs.items():
        if dt.name in _GOLDEN_NAMES:
            found.append(GoldenConversion(dt.name, f"output '{out}'",
                                          f"the golden's values for '{out}' are stored as "
                                          f"{dt.name}"))
    return found


_CONVERSION = re.compile(r"\.to\(|\.astype\(|\.bfloat16\(\)|\.half\(\)|dtype\s*=")


def _converts(code: str) -> bool:
    return bool(_CONVERSION.search(code))


def _source_lines(fn: Callable | None) -> tuple[list[str], int]:
    if fn is None:
        return [], 0
    try:
        return inspect.getsourcelines(fn)
    except (OSError, TypeError):
        return [], 0


def _file(fn: Callable) -> str:
    try:
        return inspect.getsourcefile(fn) or "<golden>"
    except TypeError:
        return "<golden>"


Ties = dict[tuple[str, int, int], tuple[int, int]]  # (file, line, col) -> (ties, elements)


def audit(program: Any, golden_fn: Callable | None = None,
          outputs: dict[str, DType] | None = None, ties: Ties | None = None) -> CastAudit:
    """The cast sites of `program` and the traps among them (see the module doc);
    `outputs` maps each compared output to the dtype the kernel emits it in; `ties`, a
    run's exact ties per cast (`ShadowReport.ties`), counts them in the findings."""
    sites = cast_sites(program)
    conversions = golden_conversions(golden_fn, outputs or {})
    return CastAudit(tuple(sites), tuple(_findings(sites, conversions, ties or {})))


def _tie_text(site: CastSite, ties: Ties) -> str:
    got = ties.get((site.span.file, site.span.line, site.span.col))
    if got is None:
        return ""
    n, total = got
    return f"; in this run {n} of {total} element(s) were exact ties"


def _findings(sites: list[CastSite], conversions: list[GoldenConversion], ties: Ties
              ) -> Iterator[CastFinding]:
    for site in sites:
        inner = site.inner
        if inner is not None and inner.narrowing and site.narrowing \
                and loses_values(inner.source, site.target):
            yield CastFinding(
                "double-rounding", site,
                f"{inner.source.name} -> {inner.target.name} -> {site.target.name} rounds "
                f"twice (first at {inner.where()}, mode={inner.mode!r}; then here, "
                f"mode={site.mode!r}); a value can land one step off a single rounding",
                f"quantise straight from {inner.source.name}: pl.cast(<the "
                f"{inner.source.name} value>, pl.{site.target.name}, mode={site.mode!r})")
        if site.mode == _DEFAULT_MODE and site.target.is_float() and site.narrowing:
            theirs = [c for c in conversions if c.dtype == site.target.name]
            if theirs:
                said = "; ".join(f"{c.where}: {c.how}" for c in theirs[:3])
                yield CastFinding(
                    "ties-away-vs-even", site,
                    f"rounds {site.source.name} -> {site.target.name} with the default mode "
                    f"'round' (ties away from zero) while the golden rounds to "
                    f"{site.target.name} with ties to even ({said}); the two differ on "
                    f"every exact tie{_tie_text(site, ties)}",
                    f"pl.cast(..., pl.{site.target.name}, mode=\"rint\") to round as the "
                    "golden does (or make the golden round ties away)")
