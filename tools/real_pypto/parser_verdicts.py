"""The parser suite's verdicts: does pypto-lab accept what the real parser accepts and
reject what it rejects, with the same error class?

The real `@pl.program` / `@pl.function` parse when they decorate, so a test writes
`with pytest.raises(ParserTypeError): @pl.program class ...`. Ours parse when a kernel
is compiled; while the parser suite runs, every `@pl.program` and every standalone
`@pl.function` is compiled right after it is made, so an error surfaces at the same
statement. (A `@pl.jit` kernel is compiled on first use by both.) Each test then gets:

    pass            passed verbatim, touching none of the stand-ins of absent.py
    same-class      expected our error class; only the message differs (`match=`)
    accepts         every kernel it made compiled; it failed on the real IR's structure
                    (a kernel its module made when imported counts for each of its tests)
    rejects         ours raised a kernel error where the real parser accepts
    misses          the real parser raises (`pytest.raises`) and ours did not
    wrong-class     ours raised a kernel error of another class than the one expected
    not-comparable  it made no kernel (it drives an internal of the real parser), or
                    it expects an error from a real internal it built by hand or
                    monkeypatched (a stand-in here: the error cannot happen)
"""
from __future__ import annotations

import importlib
import inspect
import sys

import absent
import pytest

from pypto.errors import UserError
from pypto.ir.nodes import FunctionKind
from pypto.language.enums import FunctionType

jit = importlib.import_module("pypto.language.jit")  # (`pl.jit` shadows the module name)

AGREE = ("pass", "same-class", "accepts")
DISAGREE = ("rejects", "misses", "wrong-class")

_made: list[int] = [0]  # kernels compiled in the current test
_in_test: list[bool] = [False]
# the kernels a test module compiled when it was imported (module-level `@pl.function`s),
# by file: a test of the module that names one reads it, so it counts for that test
_import_made: dict[str, list[str]] = {}
_STANDALONE_KINDS = {FunctionType.Orchestration: FunctionKind.ORCHESTRATION,
                     FunctionType.InCore: FunctionKind.INCORE}


def _count_kernel(name: str) -> None:
    _made[0] += 1
    if _in_test[0]:
        return
    frame = sys._getframe(1)
    while frame is not None and "/tests/" not in frame.f_code.co_filename:
        frame = frame.f_back
    if frame is not None:
        _import_made.setdefault(frame.f_code.co_filename, []).append(name)


class _EagerProgram(jit.ProgramDef):
    def __init__(self, cls, options, names=None):
        super().__init__(cls, options, names)
        self.compile()
        _count_kernel(cls.__name__)


class _EagerFunction(jit.FunctionDef):
    def __init__(self, fn, type, options):
        super().__init__(fn, type, options)
        parts = fn.__qualname__.split(".")
        if len(parts) > 1 and parts[-2] != "<locals>":
            return  # a method: compiled with its @pl.program
        kind = _STANDALONE_KINDS.get(type, FunctionKind.OPAQUE)
        jit.JITFunction(fn, kind).compile()
        _count_kernel(fn.__name__)


# modules of ours whose missing names a checkout file gets as stand-ins (absent.py)
_SHADOWED = ["pypto", "pypto.ir", "pypto.pypto_core", "pypto.language",
             "pypto.language.parser", "pypto.language.parser.diagnostics", "pypto.ir.printer"]


def _counted_parse(parse):
    def parse_and_count(*args, **kwargs):
        result = parse(*args, **kwargs)
        _made[0] += 1  # a text that parsed made a kernel, as a decorated one does
        return result
    return parse_and_count


def install(checkout: str) -> None:
    """Make `@pl.program` and standalone `@pl.function` compile when they decorate, count
    the texts `pl.parse` / `pl.parse_program` read, and let the test modules import
    (stand-ins for the real internals they name)."""
    jit.ProgramDef = _EagerProgram
    jit.FunctionDef = _EagerFunction
    language = importlib.import_module("pypto.language")
    language.parse = _counted_parse(language.parse)
    absent.install(checkout, _SHADOWED)


def start_test(item: pytest.Item) -> None:
    source = _source(item)
    _made[0] = sum(name in source for name in _import_made.get(str(item.path), ()))
    _in_test[0] = True
    absent.reset()


def verdict(item: pytest.Item, call: pytest.CallInfo) -> str:
    if call.excinfo is None:
        return "pass" if not absent.touched() else ("accepts" if _made[0] else "not-comparable")
    err = call.excinfo.value
    text = str(err)
    expects_error = "pytest.raises" in _source(item)
    if isinstance(err, pytest.fail.Exception) and "DID NOT RAISE" in text:
        if not _made[0] and absent.touched():
            return "not-comparable"  # it built the real IR by hand (ir.Submit, system_ops)
        if _patched_stand_in(item):
            return "not-comparable"  # its fault was injected into a real internal
        return "misses"
    if isinstance(err, AssertionError) and "Regex pattern did not match" in text:
        return "same-class"
    if isinstance(err, UserError):
        return "wrong-class" if expects_error else "rejects"
    return "accepts" if _made[0] else "not-comparable"


def _patched_stand_in(item: pytest.Item) -> bool:
    """Did the test `monkeypatch.setattr` a stand-in of absent.py (a real internal such
    as `pypto.language.op.tensor_ops`)? Nothing of ours calls it, so the fault it was
    to inject never happens: the test says nothing about our parser."""
    patch = getattr(item, "funcargs", {}).get("monkeypatch")
    return any(absent.is_stand_in(target) for target, _, _ in getattr(patch, "_setattr", ()))


def _source(item: pytest.Item) -> str:
    try:
        return inspect.getsource(item.function)
    except (OSError, TypeError):
        return ""
