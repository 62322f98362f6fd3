"""Run pypto-lib kernel files through `pypto-sim` and tabulate the outcome.

Usage:
    python benchmarks/conformance.py CHECKOUT [PATTERN ...] [--timeout S] [--json OUT]
                                     [--list FILE] [-- ARGS for every file]

CHECKOUT is a pypto-lib checkout (kept outside this repository). PATTERNs are
paths or globs relative to it; the default is tier 1 (examples/beginner/*.py and
examples/intermediate/*.py). `--list FILE` reads one pattern per line.

Each file runs in its own process the way pypto-lib's CI runs it
(`python FILE -p a2a3sim`, here `python -m pypto.cli FILE`), from a scratch working
directory, with PYPTO_GOLDEN_NUM_THREADS=2 and a per-file timeout (`--checks oob`
sets PYPTO_SIM_CHECKS to skip the simulator's on-chip budget estimates; `--uninit
zero` sets PYPTO_SIM_UNINIT to read fresh pl.Out memory as zeros, as the a2a3 device
often does, instead of a2a3sim's NaN residue). Files marked
`# ci: no-sim`, `_draft.py` files and files without a `__main__` block are skipped.
Exit code 0 = pass; the reason column shows the mismatching outputs or the last
line of the exception otherwise. A failure whose every mismatch lies in a `pl.Out`
region the kernel never writes is `diagnosed`: it fails by the L2 guide's rule (that
region is allocator residue, so a golden asserting zeros there asserts what the kernel
never promised), not by a simulator or kernel error.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TIER1 = ("examples/beginner/*.py", "examples/intermediate/*.py")
_EXCEPTION = re.compile(r"^([A-Za-z_][\w.]*(?:Error|Exception|Exit|Interrupt)):(.*)$")
_MISMATCH = re.compile(r"Output\(s\) does not match golden: (\[.*?\])")


def expand(root: Path, patterns: list[str]) -> list[Path]:
    files: list[Path] = []
    for pat in patterns:
        hits = sorted(root.glob(pat)) if any(c in pat for c in "*?[") else [root / pat]
        for h in hits:
            if h.suffix == ".py" and h not in files:
                files.append(h)
    return files


def skip_reason(path: Path) -> str:
    if path.name.endswith("_draft.py"):
        return "draft file"
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError as exc:
        return f"unreadable: {exc}"
    if re.search(r"#\s*ci:\s*no-sim", text):
        return "marked # ci: no-sim"
    if "__main__" not in text:
        return "no __main__ block"
    return ""


def reason_from(output: str, code: int) -> str:
    m = _MISMATCH.search(output)
    if m:
        lines = [ln.strip() for ln in output.splitlines()]
        detail = next((ln for ln in lines if "mismatched" in ln or "fail:" in ln), "")
        return f"mismatch {m.group(1)} {detail}".strip()
    lines = [ln for ln in output.splitlines() if ln.strip()]
    for ln in reversed(lines):
        m = _EXCEPTION.match(ln)
        if m:
            return f"{m.group(1).rsplit('.', 1)[-1]}: {m.group(2).strip()}"
    return lines[-1].strip() if lines else f"exit status {code}"


_ZERO_FILL = re.compile(r"\[RUN\]\s+warning: '([^']+)' passes only because fresh memory")
_OVER_READ = re.compile(r"\[RUN\]\s+warning: read past the end of a tensor: \w+ of '([^']+)'")


_FAILED_OUTPUT = re.compile(r"^\s+'([^']+)'(?: pl\.\w+)? [^:\n]*: FAIL \(", re.M)
_UNWRITTEN_ONLY = re.compile(r"unwritten pl\.Out region: (.*); every mismatch lies there$",
                             re.M)


def unwritten_only(output: str) -> list[str]:
    """The failing outputs when every one of them fails only on a pl.Out region the
    kernel never writes (the harness's diagnosis), else []."""
    failed = _FAILED_OUTPUT.findall(output)
    if not failed or len(_UNWRITTEN_ONLY.findall(output)) != len(failed):
        return []
    return failed


def warnings_from(output: str) -> str:
    """What a passing run warned about, in a few words (empty when nothing)."""
    zero = sorted(set(_ZERO_FILL.findall(output)))
    over = sorted(set(_OVER_READ.findall(output)))
    parts = []
    if zero:
        parts.append("passes on zero-filled fresh memory only: "
                     + ", ".join(f"'{n}'" for n in zero) + " partly unwritten")
    if over:
        parts.append("reads past the end of " + ", ".join(f"'{n}'" for n in over))
    return "; ".join(parts)


def run_one(path: Path, extra: list[str], timeout: float, cwd: Path,
            checks: str | None = None, uninit: str | None = None) -> dict:
    skip = skip_reason(path)
    if skip:
        return {"status": "skip", "seconds": 0.0, "reason": skip, "output": ""}
    env = dict(os.environ)
    env.setdefault("PYPTO_GOLDEN_NUM_THREADS", "2")
    env["PYTHONUNBUFFERED"] = "1"
    if checks is not None:
        env["PYPTO_SIM_CHECKS"] = checks
    if uninit is not None:
        env["PYPTO_SIM_UNINIT"] = uninit
    cmd = [sys.executable, "-m", "pypto.cli", str(path), *extra]
    t0 = time.time()
    try:
        proc = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True,
                              timeout=timeout)
    except subprocess.TimeoutExpired as exc:
        out = (exc.stdout or b"").decode() if isinstance(exc.stdout, bytes) else (exc.stdout or "")
        return {"status": "timeout", "seconds": time.time() - t0,
                "reason": f"no result after {timeout:.0f}s", "output": out}
    dt = time.time() - t0
    output = proc.stdout + proc.stderr
    if proc.returncode == 0:
        return {"status": "pass", "seconds": dt, "reason": warnings_from(output),
                "output": output}
    unwritten = unwritten_only(output)
    if unwritten:
        return {"status": "diagnosed", "seconds": dt, "output": output,
                "reason": "fails by the guide's rule: " + ", ".join(f"'{n}'" for n in unwritten)
                + " partly never written, golden asserts values there"}
    return {"status": "FAIL", "seconds": dt, "reason": reason_from(output, proc.returncode),
            "output": output}


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    extra: list[str] = []
    if "--" in argv:
        i = argv.index("--")
        argv, extra = argv[:i], argv[i + 1:]
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("checkout", type=Path)
    ap.add_argument("patterns", nargs="*")
    ap.add_argument("--list", type=Path, help="file with one pattern per line")
    ap.add_argument("--timeout", type=float, default=300.0)
    ap.add_argument("--json", type=Path, help="write the results as JSON here")
    ap.add_argument("--show-output", action="store_true", help="print each failure's output")
    ap.add_argument("--checks", help="simulator checks (PYPTO_SIM_CHECKS), e.g. 'oob' or 'none'")
    ap.add_argument("--uninit", choices=["residue", "zero"],
                    help="fresh pl.Out memory (PYPTO_SIM_UNINIT); default: the platform's "
                         "(a2a3sim: NaN / garbage residue, as the L2 guide says)")
    args = ap.parse_args(argv)

    root = args.checkout.resolve()
    patterns = list(args.patterns)
    if args.list:
        patterns += [ln.strip() for ln in args.list.read_text().splitlines()
                     if ln.strip() and not ln.startswith("#")]
    files = expand(root, patterns or list(TIER1))
    if not files:
        print("no files matched", file=sys.stderr)
        return 2
    width = max(len(str(f.relative_to(root))) for f in files)
    print(f"{'file':<{width}}  {'status':<7} {'seconds':>8}  reason")
    results = {}
    with tempfile.TemporaryDirectory(prefix="pypto-conformance-") as scratch:
        for f in files:
            rel = str(f.relative_to(root))
            r = run_one(f, extra, args.timeout, Path(scratch), args.checks, args.uninit)
            results[rel] = r
            reason = r["reason"] if len(r["reason"]) <= 160 else r["reason"][:157] + "..."
            print(f"{rel:<{width}}  {r['status']:<7} {r['seconds']:8.2f}  {reason}", flush=True)
            if args.show_output and r["status"] in ("FAIL", "timeout", "diagnosed"):
                print("\n".join("    | " + ln for ln in r["output"].splitlines()[-40:]))
    counts: dict[str, int] = {}
    for r in results.values():
        counts[r["status"]] = counts.get(r["status"], 0) + 1
    total = sum(r["seconds"] for r in results.values())
    warned = sum(1 for r in results.values() if r["status"] == "pass" and r["reason"])
    print(f"\n{len(results)} files: " + ", ".join(f"{n} {s}" for s, n in sorted(counts.items()))
          + (f" ({warned} with warnings)" if warned else "") + f"; {total:.1f}s")
    if args.json:
        args.json.write_text(json.dumps({k: {kk: vv for kk, vv in v.items() if kk != "output"}
                                         for k, v in results.items()}, indent=2))
    return 0 if all(r["status"] in ("pass", "skip", "diagnosed") for r in results.values()) \
        else 1


if __name__ == "__main__":
    raise SystemExit(main())
