"""Source spans: where in the user's file an IR node came from."""
from __future__ import annotations

from pypto.ir.record import record


@record
class Span:
    """A 1-based line and column range in a source file.

    Columns count characters (not bytes), 1-based, so a span prints as the
    `file:line:col` an editor understands.
    """

    file: str
    line: int
    col: int
    end_line: int = 0
    end_col: int = 0

    @staticmethod
    def unknown() -> Span:
        return _UNKNOWN

    @property
    def known(self) -> bool:
        return self.line > 0

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.col}" if self.known else "<unknown>"


_UNKNOWN = Span("<unknown>", 0, 0, 0, 0)
