"""Which pypto-lib kernel files are runnable, and is each in a tier list?

Usage:
    python tools/pyptolib_tiers.py [CHECKOUT]      # default: $PYPTO_LIB, else /work/pypto-lib
    python tools/pyptolib_tiers.py --table RUN.json   # a `pypto-sim --json` run as markdown

A file is a *runnable kernel file* when it has a `__main__` block and drives the golden
harness or compiles a kernel (it names `run_jit` / `golden`, or calls `.compile(` /
`.lower(`),
is not a `_draft.py`, and is not marked `# ci: no-sim` (pypto-lib's own CI skips those
on its simulator). It is *single-card* unless it imports `pypto.language.distributed`.
Every single-card runnable file must be in one of benchmarks/tier1, tier2, tier3a or
tier3c (tier3b lists the multi-card ones, which need `pypto.language.distributed`).
Prints the files in no list (exit 1 when there is one).
"""
from __future__ import annotations

import json
import os
import re
import sys
from collections import Counter
from pathlib import Path

BENCH = Path(__file__).resolve().parents[1] / "benchmarks"
SINGLE_CARD_TIERS = ("tier1", "tier2", "tier3a", "tier3c")
_DRIVES = re.compile(r"\brun_jit\b|\bgolden\b|\.compile\(|\.lower\(")
_SKIP_DIRS = ("golden", "tests", "docs", "tools", "scripts")


def runnable_files(checkout: Path) -> tuple[list[str], list[str]]:
    """(single-card, multi-card) runnable kernel files, as paths relative to `checkout`."""
    single, multi = [], []
    for path in sorted(checkout.rglob("*.py")):
        rel = path.relative_to(checkout).as_posix()
        if rel.split("/")[0] in _SKIP_DIRS or rel.startswith(".") or path.name.endswith(
                "_draft.py"):
            continue
        text = path.read_text(encoding="utf-8", errors="replace")
        if "__main__" not in text or re.search(r"#\s*ci:\s*no-sim", text):
            continue
        if not _DRIVES.search(text):
            continue
        (multi if "pypto.language.distributed" in text else single).append(rel)
    return single, multi


def tier_of(checkout: Path, tiers: tuple[str, ...] = SINGLE_CARD_TIERS + ("tier3b",)
            ) -> dict[str, str]:
    """{file: tier} for every file the tier lists name (globs expanded)."""
    out: dict[str, str] = {}
    for tier in tiers:
        path = BENCH / f"{tier}.txt"
        if not path.is_file():
            continue
        for line in path.read_text().splitlines():
            pattern = line.split("#", 1)[0].strip()
            if not pattern:
                continue
            hits = sorted(checkout.glob(pattern)) if any(c in pattern for c in "*?[") \
                else [checkout / pattern]
            for h in hits:
                out.setdefault(h.relative_to(checkout).as_posix(), tier)
    return out


def untiered(checkout: Path) -> list[str]:
    """Single-card runnable files in no single-card tier list."""
    single, _ = runnable_files(checkout)
    tiers = tier_of(checkout, SINGLE_CARD_TIERS)
    return [f for f in single if f not in tiers]


def file_row(r: dict) -> dict:
    """One file of a `pypto-sim --json` run, as the conformance tables show it: status,
    simulate seconds (the harness's "simulate" stage, summed over the file's runs), wall
    and CPU seconds of its process (CPU: what it costs whatever the load), peak RSS,
    and the regions that ran block by block with why (`batch_refusals`, the union over
    its runs)."""
    runs = r.get("runs") or []
    refusals: dict[str, str] = {}
    for run in runs:
        refusals.update(run.get("batch_refusals") or {})
    simulate = [run.get("stages", {}).get("simulate") for run in runs]
    reason = r.get("reason") or ""
    path = r.get("path") or ""
    if path.endswith(r["file"]) and len(path) > len(r["file"]):  # checkout paths: relative
        reason = reason.replace(path[:-len(r["file"])], "")
    return {"file": r["file"], "status": r["status"], "reason": reason,
            "simulate_s": sum(s for s in simulate if s is not None) if runs else None,
            "wall_s": r.get("seconds"), "cpu_s": r.get("cpu_seconds"),
            "peak_mb": r.get("peak_mb"), "refusals": refusals}


def _cell(text: str, limit: int = 300) -> str:
    text = " ".join(str(text).replace("|", "/").split())
    return text if len(text) <= limit else text[:limit - 3] + "..."


def _num(v: float | None, fmt: str) -> str:
    return "" if v is None else format(v, fmt)


def markdown_table(doc: dict, label: str = "") -> str:
    """A markdown table of a `pypto-sim --json` run, with its totals and a summary of
    the batch-refusal reasons (each reason with its tensor names as '*': which rule)."""
    rows = [file_row(r) for r in doc["files"]]
    out = ["| file | status | simulate s | wall s | CPU s | peak MB | batch_refusals | notes |",
           "|---|---|---:|---:|---:|---:|---:|---|"]
    for r in rows:
        out.append(f"| `{r['file']}` | {r['status']} | {_num(r['simulate_s'], '.1f')} | "
                   f"{_num(r['wall_s'], '.1f')} | {_num(r['cpu_s'], '.1f')} | "
                   f"{_num(r['peak_mb'], ',.0f')} | "
                   f"{len(r['refusals'])} | {_cell(r['reason'])} |")
    sim = sum(r["simulate_s"] or 0 for r in rows)
    summed = sum(r["wall_s"] or 0 for r in rows)
    cpu = sum(r["cpu_s"] or 0 for r in rows)
    counts = ", ".join(f"{n} {k}" for k, n in Counter(r["status"] for r in rows).items())
    out += ["", f"{label}{len(rows)} files: {counts}; run wall time {doc.get('seconds', 0):.1f} s "
            f"(files' wall times summed {summed:.1f} s, CPU {cpu:.1f} s, simulate stages "
            f"summed {sim:.1f} s); "
            f"largest peak {_num(doc.get('peak_mb'), ',.0f')} MB"]
    reasons = Counter(re.sub(r"'[^']*'", "'*'", why) for r in rows
                      for why in r["refusals"].values())
    if reasons:
        out += ["", "| batch refusal (rule) | regions |", "|---|---:|"]
        out += [f"| {_cell(k)} | {n} |" for k, n in reasons.most_common()]
    return "\n".join(out)


def main() -> int:
    if len(sys.argv) > 2 and sys.argv[1] == "--table":
        for path in sys.argv[2:]:
            print(markdown_table(json.loads(Path(path).read_text()), f"{path}: "))
        return 0
    checkout = Path(sys.argv[1] if len(sys.argv) > 1 else
                    os.environ.get("PYPTO_LIB", "/work/pypto-lib"))
    single, multi = runnable_files(checkout)
    missing = untiered(checkout)
    print(f"{len(single)} single-card and {len(multi)} multi-card runnable kernel files; "
          f"{len(missing)} single-card file(s) in no tier list")
    for f in missing:
        print("  ", f)
    return 1 if missing else 0


if __name__ == "__main__":
    raise SystemExit(main())
