"""Exception families.

Two kinds of failure, never mixed:

* `PyptoError` subclasses are *user* errors: a kernel broke a rule of the
  language, or a simulated run hit a fault. They carry a source span, a hint and
  a note, and render as a located snippet with no compiler frames.
* `InternalError` is a bug in pypto itself. It keeps its full traceback.
"""
from __future__ import annotations

import functools
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

from pypto.diagnostics import location, render_html, render_text

if TYPE_CHECKING:
    from pypto.ir.span import Span


class PyptoError(Exception):
    """Root of every user-facing error.

    Attributes:
        message: what is wrong, one sentence.
        span: where (file, line, column) in the user's source.
        hint: how to fix it.
        note: extra context (e.g. the rule's rationale).
    """

    code = "E000"
    # a failed simulation: the Out / InOut arrays it wrote in place (they hold a partial
    # result; see `pypto.sim.faults.mark_partial_outputs`)
    partial_outputs: tuple[str, ...] = ()

    def __init__(self, message: str, span: Span | None = None, hint: str | None = None,
                 note: str | None = None):
        super().__init__(message)
        self.message = message
        self.span = span
        self.hint = hint
        self.note = note

    def __str__(self) -> str:  # the plain-text rendering with snippet and caret
        return render_text(self)

    def _repr_html_(self) -> str:
        return render_html(self)


class UserError(PyptoError):
    """A kernel violates the language; raised at compile time."""


class PyptoSyntaxError(UserError):
    """A construct is not valid `pl` syntax (bad loop target, misplaced keyword…)."""

    code = "E001"


class SourceSyntaxError(PyptoSyntaxError, SyntaxError):
    """Text given to `pl.parse` that is not Python at all: a `PyptoSyntaxError` with its
    location, and a Python `SyntaxError` too (what the real `pl.parse` raises for it)."""

    def __init__(self, message: str, span: Span | None = None, hint: str | None = None,
                 note: str | None = None):
        super().__init__(message, span, hint, note)
        if span is not None:
            self.filename, self.lineno, self.offset = span.file, span.line, span.col

    def __str__(self) -> str:
        return render_text(self)


class PyptoTypeError(UserError):
    """Annotation, shape or dtype mismatch."""

    code = "E101"


class UndefinedNameError(UserError):
    """A name that resolves neither to a kernel local nor to a Python value."""

    code = "E200"


class SSAViolationError(UserError):
    """Rebinding a name where the language forbids it."""

    code = "E201"



class PartialCodegenError(RuntimeError):
    """Code generation failed for some kernels of a program (the real compiler's
    `pypto.backend.pto_backend.PartialCodegenError`; it lives here, beside the error it
    is a base of, and that module re-exports it)."""


class OutRebindError(SSAViolationError, PartialCodegenError):
    """A `pl.Out` parameter rebound to a new value inside a `pl.at` region: the value
    never reaches the output buffer. The real compiler's code generator fails on it
    (`PartialCodegenError`, real `examples/utils/error_handling.py`); here the parser
    says where, so both `except PartialCodegenError` and `except PyptoError` catch it."""


class InvalidOperationError(UserError):
    """An op rejected its arguments, or the op does not exist."""

    code = "E300"


class UnsupportedFeatureError(UserError):
    """A Python construct that has no meaning in a kernel."""

    code = "E301"


class ScopeError(UserError):
    """A scope (`pl.at`, `pl.spmd`, …) is used where the model forbids it."""

    code = "E202"


class DynamicShapeError(UserError):
    """A dynamic-shape rule of the L2 model is broken."""

    code = "E106"


# The real toolchain's names for these classes (`pypto.language.parser.diagnostics`), so
# code written against it catches ours: its parser tests expect these exact classes.
ParserError = UserError
ParserSyntaxError = PyptoSyntaxError
ParserTypeError = PyptoTypeError
UndefinedVariableError = UndefinedNameError
ScopeIsolationError = ScopeError


class SimulationError(PyptoError):
    """A fault while simulating: out-of-bounds access, budget overflow, bad runtime shape.

    Besides the span of the offending op it names the tensor, the region and the
    block index so the culprit can be found among many tasks.
    """

    code = "S000"

    def __init__(self, message: str, span: Span | None = None, hint: str | None = None,
                 note: str | None = None, *, tensor: str | None = None,
                 region: str | None = None, block: int | None = None,
                 indices: object = None):
        super().__init__(message, span, hint, note)
        self.tensor = tensor
        self.region = region
        self.block = block
        self.indices = indices


class NotSimulatableError(SimulationError):
    """The program launches a kernel the simulator cannot run: one whose body is
    hand-written C++ (`@pl.jit.extern`, `@pl.function(external_source=...)`)."""

    code = "S020"


class ConfigError(PyptoError, ValueError):
    """An option the simulator or a run was given that it does not know or cannot use
    (`SimConfig`, `config=`): the message names the option and lists what it accepts."""

    code = "E400"


class InternalError(RuntimeError):
    """A bug in pypto. Not a `PyptoError`: `except PyptoError` must not swallow it."""


_F = TypeVar("_F", bound=Callable[..., Any])


def public_entry(fn: _F) -> _F:
    """Mark a public API method (`compile`, `__call__`…) as the boundary of user errors.

    A `PyptoError` escaping it is re-raised with the compiler's frames dropped, so the
    user sees their own call and the located diagnostic, not the parser's internals.
    `InternalError` (a pypto bug) and every other exception keep their full traceback.
    """

    @functools.wraps(fn)
    def boundary(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except PyptoError as err:
            raise err.with_traceback(None) from None

    return boundary  # type: ignore[return-value]


# --- warnings -----------------------------------------------------------------------


class PyptoWarning(UserWarning):
    """A located warning about a kernel that compiles but is probably wrong."""

    def __init__(self, message: str, span: Span | None = None, hint: str | None = None):
        super().__init__(message)
        self.message = message
        self.span = span
        self.hint = hint

    def __str__(self) -> str:
        where = f"{location(self.span)}: " if self.span is not None and self.span.known \
            else ""
        tail = f" (hint: {self.hint})" if self.hint else ""
        return f"{where}{self.message}{tail}"


class PyptoDeprecationWarning(PyptoWarning, DeprecationWarning):
    """A deprecated form that still means something."""


class InternalWarning(RuntimeWarning):
    """Something inside pypto that should never happen; tests turn it into an error."""
