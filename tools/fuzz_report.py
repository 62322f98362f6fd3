"""Run the bad-input corpus and the mutation fuzzer; print the counts by outcome.

    python tools/fuzz_report.py                 # corpus + 600 generated cases
    python tools/fuzz_report.py --cases 2000 --seed 7 --engine random
    python tools/fuzz_report.py --only corpus --verbose
    python tools/fuzz_report.py --keep /tmp/bugs   # write each failing case's source there

Every case must end in a located user error (pypto.errors.PyptoError pointing into the
case's file) or succeed. The exit status is 1 when any case is a bug (internal error,
other exception, unlocated error, hang, memory exhaustion, clobbered arrays) or a corpus
case misses its expectation. The harness lives in tests/fuzz/fuzzlib.py.
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "fuzz"))
sys.path.insert(0, str(ROOT))

import fuzzlib  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cases", type=int, default=600, help="generated cases (default 600)")
    ap.add_argument("--seed", type=int, default=0, help="generator seed (default 0)")
    ap.add_argument("--engine", choices=("hypothesis", "random"), default="hypothesis")
    ap.add_argument("--workers", type=int, default=None,
                    help="worker processes (default: up to 4; 0 = in this process)")
    ap.add_argument("--only", choices=("corpus", "generated"), default=None)
    ap.add_argument("--no-run", action="store_true", help="compile only, never simulate")
    ap.add_argument("--verbose", "-v", action="store_true", help="list every non-OK case")
    ap.add_argument("--keep", type=Path, default=None,
                    help="directory to write the source of every failing case to")
    args = ap.parse_args(argv)

    failed = 0
    batches = []
    if args.only != "generated":
        batches.append(("corpus", fuzzlib.load_corpus()))
    if args.only != "corpus" and args.cases > 0:
        t0 = time.perf_counter()
        cases = fuzzlib.generate(args.cases, seed=args.seed, engine=args.engine)
        print(f"generated {len(cases)} cases ({args.engine}, seed {args.seed}) in "
              f"{time.perf_counter() - t0:.1f}s")
        batches.append(("generated", cases))
    for title, cases in batches:
        t0 = time.perf_counter()
        outs = fuzzlib.run_cases(cases, workers=args.workers, run=not args.no_run)
        print(fuzzlib.summary(outs, title) + f"  [{time.perf_counter() - t0:.1f}s]")
        by_id = {c.id: c for c in cases}
        for o in outs:
            why = o.expectation_error() if o.expect is not None else (
                f"{o.outcome}: {o.etype}: {o.message}" if o.bug else None)
            if why is None:
                continue
            failed += 1
            print(f"  FAIL {o.id} [{o.origin}] {o.desc}\n       {why}")
            if args.verbose and o.detail:
                print("       " + o.detail.replace("\n", "\n       "))
            if args.keep:
                args.keep.mkdir(parents=True, exist_ok=True)
                (args.keep / f"{o.id}.py").write_text(
                    f"# {o.desc}\n# {why}\n" + by_id[o.id].source)
    print(f"FAILED: {failed} case(s)" if failed else "all cases ended in a located user "
          "error or succeeded")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
