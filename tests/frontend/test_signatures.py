"""The public surface, name by name and parameter by parameter, against the real one.

`data/real_signatures.json` is read from a hw-native-sys/pypto checkout by
`tools/real_pypto/signatures.py` (with `ast`; the real package is never imported). For
every public name of `pl`, `pl.tile`, `pl.tensor`, `pl.system`, `pl.array`,
`pl.prefetch`, `pld`, `pld.tile`, `pld.tensor` and `pld.system` the table says what it is
and, for a function, its parameters: name, kind (positional-only, positional or keyword,
`*args`, keyword-only, `**kwargs`) and default. Ours must have every name, and for every
function `inspect.signature` of ours must give the same parameters in the same order,
of the same kinds, with the same defaults (compared as values: the real
`PadValue.zero` is our `pl.PadValue.zero`). The differences that remain on purpose are
in `ALLOWED`, each with its reason; the test lists every other difference, and every
allowance that no longer matches one.

A kernel's call goes through the parser, which binds the call's arguments with the same
signature (`pypto.ops.spellings`); `test_parser_binds_the_spelling` checks that, and
tests of keyword calls that used to be refused are in `test_signature_calls.py`.

Regenerate the table: `python tools/real_pypto/signatures.py --checkout /path/to/pypto`.
"""
from __future__ import annotations

import ast
import inspect
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import pypto.language as pl
import pypto.language.distributed as pld

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
TABLE = HERE / "data" / "real_signatures.json"
REAL = json.loads(TABLE.read_text(encoding="utf-8"))

# "namespace.name" -> why ours differs. Each entry must match a difference the
# comparison finds (a stale one fails the test too).
ALLOWED: dict[str, str] = {
    "pld.tensor.allreduce": "the real default of `signal` is a private sentinel object "
                            "(`_ALLREDUCE_SIGNAL_MISSING`) meaning 'not given: the host "
                            "synthesizes the signal'; ours is None with the same meaning",
}

_KIND = {"posonlyargs": inspect.Parameter.POSITIONAL_ONLY,
         "args": inspect.Parameter.POSITIONAL_OR_KEYWORD,
         "kwonlyargs": inspect.Parameter.KEYWORD_ONLY}

# names the real defaults are written with, as our values
_DEFAULTS_NS: dict[str, Any] = {
    "DataType": type("DataType", (), {n: getattr(pl, n) for n in dir(pl)
                                      if isinstance(getattr(pl, n), pl.DataType)}),
    "MemorySpace": pl.MemorySpace, "PadValue": pl.PadValue,
    "AtomicType": pl.AtomicType, "TensorLayout": pl.TensorLayout, "ReduceOp": pld.ReduceOp,
    "AUTO": pl.system.AUTO, "ir": type("ir", (), {"FunctionType": pl.FunctionType}),
}


def real_params(text: str) -> list[tuple[str, Any, Any]]:
    """(name, kind, default or Parameter.empty) of a signature the table writes as text."""
    args = ast.parse(f"def f{text}: pass").body[0].args  # type: ignore[attr-defined]
    out: list[tuple[str, Any, Any]] = []
    positional = [*args.posonlyargs, *args.args]
    defaults = [None] * (len(positional) - len(args.defaults)) + list(args.defaults)
    for i, a in enumerate(positional):
        kind = _KIND["posonlyargs"] if i < len(args.posonlyargs) else _KIND["args"]
        out.append((a.arg, kind, defaults[i]))
    if args.vararg:
        out.append((args.vararg.arg, inspect.Parameter.VAR_POSITIONAL, None))
    for a, d in zip(args.kwonlyargs, args.kw_defaults):
        out.append((a.arg, _KIND["kwonlyargs"], d))
    if args.kwarg:
        out.append((args.kwarg.arg, inspect.Parameter.VAR_KEYWORD, None))
    return [(n, k, inspect.Parameter.empty if d is None else _real_default(d))
            for n, k, d in out]


class _Unevaluated:
    """A real default written with a name of the real package's internals."""

    def __init__(self, text: str):
        self.text = text

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Unevaluated) and other.text == self.text

    def __hash__(self) -> int:
        return hash(self.text)

    def __repr__(self) -> str:
        return self.text


def _real_default(node: ast.expr) -> Any:
    text = ast.unparse(node)
    try:
        return eval(compile(ast.Expression(node), "<default>", "eval"),
                    {"__builtins__": {}}, dict(_DEFAULTS_NS))
    except (NameError, AttributeError):
        return _Unevaluated(text)


def ours(space: str, name: str) -> Any:
    root, *rest = space.split(".")
    obj: Any = {"pl": pl, "pld": pld}[root]
    for part in rest:
        obj = getattr(obj, part)
    return getattr(obj, name, _MISSING)


_MISSING = object()


def _same_default(real: Any, mine: Any) -> bool:
    if real is inspect.Parameter.empty or mine is inspect.Parameter.empty:
        return real is mine
    if isinstance(real, _Unevaluated):
        return False
    return type(real) is type(mine) and real == mine if isinstance(real, bool) or \
        isinstance(mine, bool) else real == mine


def differences() -> dict[str, str]:
    """Every difference of our surface from the table: "namespace.name" -> what differs."""
    out: dict[str, str] = {}
    for space, names in REAL["namespaces"].items():
        for name, entry in names.items():
            key = f"{space}.{name}"
            obj = ours(space, name)
            if obj is _MISSING:
                out[key] = "missing"
                continue
            if entry["kind"] != "function":
                continue
            try:
                sig = inspect.signature(obj)
            except (TypeError, ValueError):
                out[key] = "no signature"
                continue
            real = real_params(entry["signature"])
            mine = [(p.name, p.kind, p.default) for p in sig.parameters.values()]
            what = _diff(real, mine)
            if what:
                out[key] = f"{what}: real {entry['signature']}, ours {_plain(sig)}"
    return out


def _diff(real: list, mine: list) -> str:
    if [n for n, _, _ in real] != [n for n, _, _ in mine]:
        return "names"
    for (n, rk, rd), (_, mk, md) in zip(real, mine):
        if rk != mk:
            return f"kind of {n}"
        if not _same_default(rd, md):
            return f"default of {n}"
    return ""


def _plain(sig: inspect.Signature) -> str:
    return str(sig.replace(return_annotation=inspect.Signature.empty, parameters=[
        p.replace(annotation=inspect.Parameter.empty) for p in sig.parameters.values()]))


def test_every_public_signature_matches_the_real_one():
    found = differences()
    unexpected = {k: v for k, v in found.items() if k not in ALLOWED}
    stale = sorted(k for k in ALLOWED if k not in found)
    report = "\n".join(f"{k}: {v}" for k, v in sorted(unexpected.items()))
    assert not unexpected, f"{len(unexpected)} differences from the real surface:\n{report}"
    assert not stale, f"allowed differences that no longer differ: {stale}"


def test_the_table_is_the_tools_output():
    """The table is what the tool writes for the commit it names (when that checkout is
    here: $PYPTO_REF or /work/pypto)."""
    checkout = Path(os.environ.get("PYPTO_REF", "/work/pypto"))
    commit = REAL["source"]["commit"]
    if not (checkout / "python" / "pypto" / "language").is_dir():
        pytest.skip("no real pypto checkout")
    head = subprocess.run(["git", "-C", str(checkout), "rev-parse", "HEAD"],
                          capture_output=True, text=True).stdout.strip()
    if head != commit:
        pytest.skip(f"checkout at {head[:9]}, table from {commit[:9]}")
    sys.path.insert(0, str(ROOT / "tools" / "real_pypto"))
    try:
        import signatures
    finally:
        sys.path.pop(0)
    assert signatures.table(checkout.resolve()) == REAL


def test_every_spelling_names_a_public_op_and_its_rule_parameters():
    """Each declared spelling belongs to a public name of a registered op, and every
    parameter it names goes to a parameter of that op's rule (or is marked `_`)."""
    from pypto.ops import spellings
    from pypto.ops.registry import BY_PUBLIC_NAME, get

    for public in spellings.SPELLINGS:
        assert public in BY_PUBLIC_NAME, public
        sp = get(BY_PUBLIC_NAME[public]).spelling(public)  # raises on an unknown target
        assert list(sp.signature.parameters) == list(sp.to_rule) or any(
            p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
            for p in sp.signature.parameters.values()), public


def test_parser_binds_the_spelling():
    """The parser binds a call with the signature `inspect.signature` shows."""
    from pypto.ops.registry import BY_PUBLIC_NAME, get

    for public, op in BY_PUBLIC_NAME.items():
        space, _, name = public.rpartition(".")
        if space == "pl.scalar":  # the IR text's spelling of scalar ops, not a namespace
            continue
        stub = ours(space, name)
        assert inspect.signature(stub) == get(op).spelling(public).signature, public
