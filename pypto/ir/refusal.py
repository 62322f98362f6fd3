"""`Refusal`: a construct of a compiled program that a run refuses, recorded where it is
found (the parser, the passes) and raised only when the program is run
(`pypto.passes.runnable.refusal_error`): a program that cannot run still compiles, as
it does with the real toolchain."""
from __future__ import annotations

from dataclasses import dataclass

from pypto.ir.span import Span


@dataclass(frozen=True)
class Refusal:
    """One construct of `function` that a run refuses."""

    # "scope": the real toolchain refuses it too; "simulator": only we do; "codegen": the
    # real code generator fails on it (found by the parser: a pl.Out rebound in a region)
    kind: str
    message: str
    span: Span | None
    hint: str
    note: str


__all__ = ["Refusal"]
