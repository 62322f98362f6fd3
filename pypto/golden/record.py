"""A harness run as plain data, for whoever supervises many runs (`pypto-sim` on a corpus,
tile-size sweeps): one machine-readable verdict instead of scraping the printed report.

`summarize(result)` is a JSON-able dict of a `RunResult`; `emit(result)` appends it as
one line to the file named by PYPTO_GOLDEN_RECORD (when set) - the corpus runner sets it
for each file it runs, so it learns every `run_jit` / `run` a file made.

The verdict is one of
  "pass"       every checked output matches (warnings may say it holds only on the
               simulator's zero-filled memory, or reads past a tensor's end);
  "diagnosed"  the run failed, and every failing output is explained by a rule of the
               programming model the harness diagnoses: every mismatch lies in a
               `pl.Out` region no task wrote (allocator residue by the L2 guide's rule,
               which the golden asserted values over: `Unwritten.explains_all`, or
               the comparison passes once every such region holds the golden's values:
               `OutputCheck.through_unwritten`, e.g. a comparator that reads another
               output's unwritten tail through `actual_outputs`);
  "fail"       anything else (a mismatch nothing explains, a binding error).
A new diagnosis belongs in `_explained` below, so every supervisor agrees on it.
"""
from __future__ import annotations

import json
import os
from typing import Any

RECORD_ENV = "PYPTO_GOLDEN_RECORD"
_emitted = [0]  # harness runs finished in this process (pypto-sim: "did the file run any?")


def _explained(check: Any) -> str | None:
    """The diagnosis that explains a failing output, or None."""
    u = getattr(check, "unwritten", None)
    if u is not None and u.explains_all:
        return (f"unwritten pl.Out region: '{check.name}' {u.region_text(check.shape)}, "
                f"{u.count} element(s) never written")
    through = getattr(check, "through_unwritten", None)
    if through and list(through) == [check.name] and u is not None:
        return (f"unwritten pl.Out region: '{check.name}' {u.region_text(check.shape)}, "
                f"{u.count} element(s) never written (the mismatches elsewhere within the "
                "comparator's allowance)")
    if through:
        names = ", ".join(f"'{n}'" for n in through)
        return (f"unwritten pl.Out region: '{check.name}' fails only through the "
                f"never-written elements of {names}")
    return None


def verdict(result: Any) -> str:
    if result.passed:
        return "pass"
    failed = [c for c in result.outputs.values() if not c.passed]
    if failed and all(_explained(c) for c in failed):
        return "diagnosed"
    return "fail"


def _reason(result: Any, kind: str) -> str:
    checks = list(result.outputs.values())
    if kind == "pass":
        zero = [c.name for c in checks if c.zero_fill is not None]
        parts = []
        if zero:
            parts.append("passes on the zero fill of fresh memory only: "
                         + ", ".join(f"'{n}'" for n in zero) + " partly unwritten "
                         "(garbage on the device)")
        parts += result.warnings
        return "; ".join(parts)
    failed = [c for c in checks if not c.passed]
    if kind == "diagnosed":
        return "; ".join(_explained(c) or "" for c in failed)
    if failed:
        return "; ".join(f"'{c.name}' " + (c.mismatch.line() if c.mismatch is not None
                                           else c.detail.strip().splitlines()[0]
                                           if c.detail.strip() else "does not match")
                         for c in failed)
    return (result.error or "failed").strip().splitlines()[0]


def estimated_us(result: Any) -> float | None:
    """The cost model's estimate of the simulated run (sum over its tasks), if traced."""
    trace = getattr(getattr(result, "sim", None), "trace", None)
    if trace is None:
        return None
    return float(trace.est_us_serial())


def over_budget(result: Any) -> list[str]:
    """'region: spaces' for every region whose on-chip estimate exceeds the platform's."""
    regions = getattr(getattr(result, "compiled", None), "regions", None) or []
    return [f"{r.name_hint or r.function}: {', '.join(r.over_budget)}" for r in regions
            if getattr(r, "over_budget", ())]


def summarize(result: Any) -> dict:
    kind = verdict(result)
    return {
        "kernel": result.name, "platform": result.platform, "verdict": kind,
        "reason": _reason(result, kind), "passed": bool(result.passed),
        "validated": bool(result.validated), "simulated": result.sim is not None,
        "outputs": [{"name": c.name, "passed": bool(c.passed), "comparator": c.comparator,
                     "diagnosis": _explained(c) if not c.passed else None,
                     "zero_fill": c.zero_fill is not None} for c in result.outputs.values()],
        "warnings": list(result.warnings),
        "stages": {k: round(float(v), 4) for k, v in result.stages.items()},
        "est_us": estimated_us(result), "over_budget": over_budget(result),
        # the simulator's batching: which regions ran block by block, and why
        # (`SimResult.batch_refusals`), and how many launches ran batched
        "batch_refusals": dict(getattr(result.sim, "batch_refusals", None) or {}),
        "batch_stats": dict(getattr(result.sim, "batch_stats", None) or {}),
        # a multi-card run: the devices its ranks ran on (rank r on devices[r])
        "devices": list(getattr(result.sim, "device_ids", None) or []) or None,
    }


def emit(result: Any) -> Any:
    """Append the run's summary to $PYPTO_GOLDEN_RECORD (if set); returns `result`."""
    _emitted[0] += 1
    path = os.environ.get(RECORD_ENV)
    if path:
        with open(path, "a", encoding="utf-8") as fh:
            fh.write(json.dumps(summarize(result), default=str) + "\n")
    return result


def runs_emitted() -> int:
    """How many harness runs (`run_jit` / `run`) this process has finished."""
    return _emitted[0]
