"""Run the real pypto's own tests against pypto-lab, verbatim, from a checkout.

Usage:
    python tools/real_pypto_tests.py [--checkout DIR] [--runtime] [--parser] [--cross-core]
                                     [--platform ID] [--json OUT] [--show N] [-k EXPR]
                                     [FILE ...]

DIR is a hw-native-sys/pypto checkout (default: $PYPTO_REF, else /work/pypto-ref);
its tests are read from there and never copied (their licence does not allow it) or
written to. Two suites:

* runtime (`tests/st/runtime/ops/`): each test builds a `PTOTestCase` and hands it to
  the harness's `test_runner`; tools/real_pypto/harness stands in for that harness and
  runs the case through `pypto.golden` on the simulator (validation as the real
  runtime's: isclose with the case's tolerances, NaN in the golden = don't care).
  Cases parametrized over platforms run their `--platform` variant (a2a3sim); the
  other ("legacy") cases take the session platform, as in the real conftest. Counted
  apart.
* parser (`tests/ut/language/parser/`): what the real parser accepts must parse here
  and what it rejects must be rejected with the same error class; the tests' checks of
  the real IR's structure cannot hold for ours. Each test ends in one of: `pass`
  (verbatim), `accepts` (every kernel parsed; the failure is the test's IR check),
  `rejects` (ours raised a parse error where the real parser accepts), `misses` (the
  real parser raises and ours did not), `wrong-class`, `not-comparable` (the test
  drives an internal of the real parser, not a kernel) and `collect-error`. Agreement =
  pass + accepts over all comparable tests.

`--hardware-on-sim` runs the cases pinned to the hardware (`--platform a2a3`) on its
simulator instead of refusing them.

A third suite, `--cross-core` (`tests/st/runtime/cross_core/`: cube/vector pipes,
`pl.split_aiv`, cross-core sync), runs like the runtime one and is counted apart; it
is not in the default set.

Prints a per-file table and the totals; exit status 0.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from collections import Counter, defaultdict
from pathlib import Path

HERE = Path(__file__).resolve().parent
SHIM = HERE / "real_pypto"
SUITES = {"runtime": "tests/st/runtime/ops", "parser": "tests/ut/language/parser",
          "cross_core": "tests/st/runtime/cross_core"}  # runtime cases, counted apart


def default_checkout() -> Path:
    return Path(os.environ.get("PYPTO_REF", "/work/pypto-ref"))


def run_pytest(checkout: Path, suite: str, files: list[str], platform: str, keyword: str | None,
               scratch: Path) -> dict:
    """Run one suite in a child pytest with the shim; {nodeid: outcome record}."""
    report = scratch / f"{suite}.json"
    targets = [str(checkout / SUITES[suite] / f) for f in files] or [str(checkout / SUITES[suite])]
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1", REAL_PYPTO_SUITE=suite,
               REAL_PYPTO_CHECKOUT=str(checkout),
               PYTHONPATH=os.pathsep.join([str(SHIM), str(checkout)]
                                          + [p for p in [os.environ.get("PYTHONPATH")] if p]))
    env.setdefault("OMP_NUM_THREADS", "1")
    cmd = [sys.executable, "-m", "pytest", "-c", str(SHIM / "pytest.ini"),
           f"--rootdir={scratch}", "--noconftest", "-p", "plugin", "-q", "-p", "no:randomly",
           "--continue-on-collection-errors", f"--platform={platform}",
           f"--report-json={report}", *targets]
    if keyword:
        cmd += ["-k", keyword]
    subprocess.run(cmd, cwd=scratch, env=env, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)
    return json.loads(report.read_text()) if report.exists() else {}


def file_of(nodeid: str, r: dict) -> str:
    return r.get("file") or nodeid.split("::", 1)[0].rsplit("/", 1)[-1]


def summarize(results: dict, suite: str, platform: str) -> tuple[dict, Counter]:
    """{file: Counter of categories} and the totals."""
    per_file: dict[str, Counter] = defaultdict(Counter)
    for nodeid, r in results.items():
        per_file[file_of(nodeid, r)][category(nodeid, r, suite, platform)] += 1
    totals: Counter = Counter()
    for c in per_file.values():
        totals.update(c)
    return dict(sorted(per_file.items())), totals


def category(nodeid: str, r: dict, suite: str, platform: str) -> str:
    outcome = r["outcome"]
    if suite != "parser":
        kind = "param" if r.get("variant") else "legacy"
        if outcome == "collect-error":
            return "collect-error"
        verdict = {"passed": "pass", "skipped": "skip"}.get(outcome, "fail")
        return f"{kind}:{verdict}"
    return r.get("verdict") or ("pass" if outcome == "passed" else outcome)


RUNTIME_COLUMNS = [("param:pass", "param:fail"), ("legacy:pass", "legacy:fail")]
PARSER_COLUMNS = ["pass", "same-class", "accepts", "rejects", "misses", "wrong-class",
                  "not-comparable", "skipped", "collect-error"]


def print_runtime(per_file: dict, totals: Counter, platform: str, suite: str = "runtime"
                  ) -> None:
    print(f"\n{suite} ({SUITES[suite]}): {platform} variants | legacy cases on {platform}")
    print(f"{'file':<44} {'variants':>9} {'legacy':>9}  note")
    for f, c in per_file.items():
        cols = [f"{c[p]}/{c[p] + c[q]}" if c[p] + c[q] else "-" for p, q in RUNTIME_COLUMNS]
        note = "cannot be imported" if c["collect-error"] else ""
        print(f"{f:<44} {cols[0]:>9} {cols[1]:>9}  {note}")
    for (p, q), label in zip(RUNTIME_COLUMNS, (f"{platform} variants", "legacy cases")):
        print(f"total {label}: {totals[p]}/{totals[p] + totals[q]} pass")
    print(f"files that cannot be imported: {totals['collect-error']}")


def print_parser(per_file: dict, totals: Counter) -> None:
    print(f"\nparser ({SUITES['parser']})")
    print(f"{'file':<44} " + " ".join(f"{c[:8]:>8}" for c in PARSER_COLUMNS))
    for f, c in per_file.items():
        print(f"{f:<44} " + " ".join(f"{c[k]:>8}" for k in PARSER_COLUMNS))
    comparable = sum(totals[k] for k in ("pass", "same-class", "accepts", "rejects", "misses",
                                         "wrong-class"))
    agree = totals["pass"] + totals["same-class"] + totals["accepts"]
    print(f"total: {agree}/{comparable} comparable tests agree (" + ", ".join(
        f"{k} {totals[k]}" for k in PARSER_COLUMNS if totals[k]) + ")")


def show_failures(results: dict, suite: str, platform: str, n: int) -> None:
    shown = 0
    for nodeid, r in results.items():
        if shown >= n:
            break
        cat = category(nodeid, r, suite, platform)
        if cat.endswith(("fail", "collect-error", "rejects", "misses", "wrong-class")):
            print(f"\n--- {nodeid} [{cat}]\n" + "\n".join("    " + ln for ln in
                                                        r.get("error", "").splitlines()[-8:]))
            shown += 1


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--checkout", type=Path, default=None,
                    help="a pypto checkout (default: $PYPTO_REF, else /work/pypto-ref)")
    ap.add_argument("files", nargs="*", help="test file names inside the suite directory")
    ap.add_argument("--runtime", action="store_true", help="run the runtime suite")
    ap.add_argument("--parser", action="store_true", help="run the parser suite")
    ap.add_argument("--hardware-on-sim", action="store_true",
                    help="with --platform a2a3 / a5: run the cases written for the hardware "
                         "on its simulator (a2a3sim / a5sim); counted as such")
    ap.add_argument("--cross-core", action="store_true",
                    help="run the cross-core runtime suite (pipes, split_aiv, sync)")
    ap.add_argument("--platform", default="a2a3sim")
    ap.add_argument("-k", dest="keyword", help="pytest -k expression")
    ap.add_argument("--json", type=Path, help="write every test's outcome here")
    ap.add_argument("--show", type=int, default=0, help="print the first N failures")
    args = ap.parse_args(argv)
    checkout = (args.checkout or default_checkout()).resolve()
    if args.hardware_on_sim:
        os.environ["REAL_PYPTO_HARDWARE_ON_SIM"] = "1"
    if not (checkout / SUITES["runtime"]).is_dir():
        print(f"no pypto checkout at {checkout} (set PYPTO_REF or pass the path)",
              file=sys.stderr)
        return 2
    suites = [s for s, on in (("runtime", args.runtime), ("parser", args.parser),
                              ("cross_core", args.cross_core)) if on] \
        or ["runtime", "parser"]
    head = subprocess.run(["git", "-C", str(checkout), "log", "-1", "--format=%h %cs"],
                          capture_output=True, text=True).stdout.strip()
    print(f"pypto checkout {checkout} at {head or 'unknown HEAD'}")
    if args.hardware_on_sim:
        print(f"hardware cases of --platform {args.platform} run on its simulator")
    everything = {}
    with tempfile.TemporaryDirectory(prefix="real-pypto-") as tmp:
        for suite in suites:
            results = run_pytest(checkout, suite, args.files, args.platform, args.keyword,
                                 Path(tmp))
            everything[suite] = results
            per_file, totals = summarize(results, suite, args.platform)
            if suite != "parser":
                print_runtime(per_file, totals, args.platform, suite)
            else:
                print_parser(per_file, totals)
            if args.show:
                show_failures(results, suite, args.platform, args.show)
    if args.json:
        args.json.write_text(json.dumps(everything, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
