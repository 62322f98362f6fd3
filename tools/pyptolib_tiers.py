"""Which pypto-lib kernel files are runnable, and is each in a tier list?

Usage:
    python tools/pyptolib_tiers.py [CHECKOUT]      # default: $PYPTO_LIB, else /work/pypto-lib

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

import os
import re
import sys
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


def main() -> int:
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
