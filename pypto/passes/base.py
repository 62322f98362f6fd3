"""The pass interface and the context passes share."""
from __future__ import annotations

import abc
import warnings
from dataclasses import dataclass, field
from typing import Any, ClassVar

from pypto.errors import PyptoWarning
from pypto.ir.nodes import Program


@dataclass
class PassContext:
    """What a pipeline run carries besides the program: platform, warnings, and the
    analyses passes publish for later passes and for tools (`analyses[name]`)."""

    platform: str = "a2a3sim"
    warnings: list = field(default_factory=list)
    analyses: dict = field(default_factory=dict)

    def warn(self, message: str, span: Any, hint: str | None = None,
             category: type | None = None) -> None:
        w = (category or PyptoWarning)(message, span, hint)
        self.warnings.append(w)
        warnings.warn_explicit(w, type(w), span.file if span else "<pypto>",
                               (span.line if span else 0) or 1)


class Pass(abc.ABC):
    """A program-to-program transformation (or an analysis that returns its input)."""

    name: ClassVar[str] = "pass"
    #: one line for the pipeline view
    summary: ClassVar[str] = ""

    @abc.abstractmethod
    def run(self, program: Program, ctx: PassContext) -> Program:
        """Return the transformed program (the input itself when nothing changes)."""
