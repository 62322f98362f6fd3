"""`compile_cfg["dump_passes"]` -> `passes_dump/00_frontend.py` and one
`NN_after_<Pass>.py` per pass, named and numbered as pypto's `PassManager` names its
dumps (`python/pypto/ir/pass_manager.py`, pypto e2d0f78): the frontend's program,
then the program after pass NN (1-based, two digits). The passes are pypto-lab's
(`compiled.records`: inlining, SSA, outlining, ...), not the real pipeline's, and the
programs are printed by pypto-lab's `pl` printer; the first line of each file says so.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

from pypto.ir.printer import print_program

_HEAD = "# pypto-lab pass dump ({what}); pass names are pypto-lab's, not pypto's pipeline\n"


def _camel(name: str) -> str:
    """`inline_functions` -> `InlineFunctions` (pypto's pass names are CamelCase)."""
    return "".join(p[:1].upper() + p[1:] for p in name.replace("-", "_").split("_"))


def write_passes_dump(records: list, out: Path, frontend: Any = None) -> list[Path]:
    """Write the dumps of a compilation's pass `records` into `out`; `frontend`: the
    program before the first pass (default: the first record's `before`)."""
    out.mkdir(parents=True, exist_ok=True)
    first = frontend if frontend is not None else (records[0].before if records else None)
    paths = []
    if first is not None:
        path = out / "00_frontend.py"
        path.write_text(_HEAD.format(what="frontend") + _text(first))
        paths.append(path)
    for i, rec in enumerate(records):
        stem = f"{i + 1:02d}_after_{_camel(rec.name)}"
        path = out / f"{stem}.py"
        path.write_text(_HEAD.format(what=f"after {rec.name}") + _text(rec.after))
        paths.append(path)
    return paths


def _text(program: Any) -> str:
    text = print_program(program)
    return text if text.endswith("\n") else text + "\n"


__all__ = ["write_passes_dump"]
