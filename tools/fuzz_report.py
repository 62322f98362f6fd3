"""Run the bad-input corpus and the mutation fuzzer; print the counts by outcome.

    python tools/fuzz_report.py                 # corpus + 600 generated cases
    python tools/fuzz_report.py --cases 2000 --seed 7 --engine random
    python tools/fuzz_report.py --only corpus --verbose
    python tools/fuzz_report.py --keep /tmp/bugs   # write each failing case's source there
    python tools/fuzz_report.py --differential 850 --seed 0 --threads 4

Every case must end in a located user error (pypto.errors.PyptoError pointing into the
case's file) or succeed. The exit status is 1 when any case is a bug (internal error,
other exception, unlocated error, hang, memory exhaustion, clobbered arrays) or a corpus
case misses its expectation. The harness lives in tests/fuzz/fuzzlib.py.

--differential N runs N random valid kernels instead (tests/fuzz/diffgen.py,
differential.py): 12 calls each - two input sets, batched and block by block, C / Fortran
/ strided arrays - on --threads threads at once, every output compared with the kernel's
independent numpy model and the calls on one input set with each other bit for bit; the
exit status is 1 on any mismatch.
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "fuzz"))
sys.path.insert(0, str(ROOT))

import differential  # noqa: E402
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
    ap.add_argument("--differential", type=int, default=None, metavar="N",
                    help="run N random kernels against their numpy models instead")
    ap.add_argument("--threads", type=int, default=4,
                    help="threads calling each kernel at once (--differential; default 4)")
    args = ap.parse_args(argv)
    if args.differential is not None:
        return _differential(args)

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


def _differential(args: argparse.Namespace) -> int:
    t0 = time.perf_counter()

    def progress(done: int, rep: differential.Report) -> None:
        if done % 50 == 0 or done == args.differential:
            print(f"  {rep.summary()}  [{time.perf_counter() - t0:.0f}s]", flush=True)

    rep = differential.run(args.differential, seed=args.seed, threads=args.threads,
                           progress=progress)
    print(f"{rep.summary()} (seeds {args.seed}..{args.seed + args.differential - 1}, "
          f"{args.threads} threads) in {time.perf_counter() - t0:.0f}s")
    for m in rep.mismatches[:50]:
        print(f"  MISMATCH {m}")
    if args.keep and rep.sources:
        args.keep.mkdir(parents=True, exist_ok=True)
        for seed, src in rep.sources.items():
            (args.keep / f"diff_{seed}.py").write_text(src)
    return 1 if rep.mismatches else 0


if __name__ == "__main__":
    sys.exit(main())
