"""Run lists of pypto-lib kernel files: a shorthand for `pypto-sim` on a checkout.

Usage:
    python benchmarks/conformance.py CHECKOUT [PATTERN ...] [--list FILE] [pypto-sim options]
                                     [-- ARGS for every file]

CHECKOUT is a pypto-lib checkout (kept outside this repository); PATTERNs and the
entries of `--list` files (benchmarks/tier*.txt) are relative to it; the default is
tier 1 (examples/beginner/*.py, examples/intermediate/*.py). Every other option is
pypto-sim's (`--workers N`, `--scheduler ADDR`, `--serial`, `--timeout S`, `--json OUT`,
`--html OUT`, `--checks oob`, `--uninit residue`, ...; `pypto-sim --help`): this is
exactly `pypto-sim --root CHECKOUT PATTERN... --list FILE ...`, one way to run the
corpus (docs/scale.md), each file in its own process as pypto-lib's CI runs it.
`--show-output` also prints the last lines of each failing file's output. The exit
status is 0 when every file passes, is skipped, or is diagnosed (it fails by the L2
guide's rule: the file's golden is wrong, not the simulator); pypto-sim itself counts
a diagnosed file as a failure.
"""
from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

from pypto.cli import main as pypto_sim

TIER1 = ("examples/beginner/*.py", "examples/intermediate/*.py")


def pypto_sim_argv(argv: list[str]) -> list[str]:
    """This script's arguments as pypto-sim's."""
    own, extra = (argv[:argv.index("--")], argv[argv.index("--"):]) if "--" in argv \
        else (argv, [])
    if not own or own[0].startswith("-"):
        raise SystemExit(__doc__)
    checkout, rest = own[0], own[1:]
    patterns, options, i = [], [], 0
    while i < len(rest):
        a = rest[i]
        if a.startswith("-"):
            options.append(a)
            if "=" not in a and a not in ("--serial", "-q", "--quiet") and i + 1 < len(rest):
                options.append(rest[i + 1])
                i += 1
        else:
            patterns.append(a)
        i += 1
    if not patterns and "--list" not in options:
        patterns = list(TIER1)
    return ["--root", checkout, *options, *patterns, *extra]


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    show = "--show-output" in argv
    argv = [a for a in argv if a != "--show-output"]
    args = pypto_sim_argv(argv)
    given = [args[i + 1] for i, a in enumerate(args[:-1]) if a == "--json"] + \
        [a.split("=", 1)[1] for a in args if a.startswith("--json=")]
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(given[-1]) if given else Path(tmp) / "r.json"
        code = pypto_sim(args if given else [*args[:2], "--json", str(out), *args[2:]])
        files = json.loads(out.read_text())["files"] if out.is_file() else []
    for r in files if show else []:
        if r["output"]:
            print(f"--- {r['file']} ({r['status']})")
            print("\n".join("    | " + ln for ln in r["output"].splitlines()))
    if code == 1 and files:
        # conformance: a file that fails by the guide's rule (diagnosed) is the file's
        # fault, not the simulator's
        return 0 if all(r["status"] in ("pass", "diagnosed", "skip") for r in files) else 1
    return code


if __name__ == "__main__":
    raise SystemExit(main())
