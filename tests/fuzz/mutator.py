"""Break valid kernels: AST mutations of the seed kernels' source text.

`mutate(source, chooser)` applies one to three mutations and returns the new source and
a description. Every random decision goes through a *chooser*, so the same mutator is
driven by hypothesis (`HypothesisChooser(data)`, with shrinking when a case fails) or by
a seeded `random.Random` (`RandomChooser(seed)`). Both are deterministic for a given seed.

Mutations: near-miss / unknown op names and wrong namespaces, wrong or negative literal
shapes/offsets/bounds, absurd sizes, dtype swaps, deleted / duplicated / swapped
statements, dropped or changed returns, statements moved into or out of `pl.at` scopes
(or scopes unwrapped, added, nested), `pl.range` -> `range` and other iterator swaps,
inserted non-`pl` Python constructs, annotation rank/dtype/direction changes, wrong
arity and keyword typos, bad subscripts, operator and name swaps.
"""
from __future__ import annotations

import ast
import copy
import random
import warnings
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from vocab import (
    ABSURD,
    ASYNC_TEMPLATES,
    BAD_ANNOTATIONS,
    DTYPES,
    NOT_DTYPES,
    OP_NAMES,
    PY_TEMPLATES,
    UNKNOWN_OPS,
)

SEEDS = Path(__file__).resolve().parent / "seeds"


# --- choosers ----------------------------------------------------------------------------------


class RandomChooser:
    def __init__(self, seed: int):
        self.rng = random.Random(seed)

    def choice(self, seq: Sequence) -> Any:
        return seq[self.rng.randrange(len(seq))]

    def integer(self, lo: int, hi: int) -> int:
        return self.rng.randint(lo, hi)


class HypothesisChooser:
    def __init__(self, data: Any):
        from hypothesis import strategies as st

        self.data, self.st = data, st

    def choice(self, seq: Sequence) -> Any:
        return seq[self.data.draw(self.st.integers(0, len(seq) - 1))]

    def integer(self, lo: int, hi: int) -> int:
        return self.data.draw(self.st.integers(lo, hi))


# --- seeds and sites ----------------------------------------------------------------------------


def seed_sources() -> dict[str, str]:
    return {p.stem: p.read_text() for p in sorted(SEEDS.glob("seed_*.py"))}


def _funcs(tree: ast.Module) -> list[ast.FunctionDef]:
    return [n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]


def _bodies(func: ast.AST) -> list[list[ast.stmt]]:
    """Every statement list inside a function (its body, loop/with/if bodies)."""
    out = []
    for node in ast.walk(func):
        for attr in ("body", "orelse", "finalbody"):
            b = getattr(node, attr, None)
            if isinstance(b, list) and b and isinstance(b[0], ast.stmt):
                out.append(b)
    return out


def _all_bodies(tree: ast.Module) -> list[list[ast.stmt]]:
    return [b for f in _funcs(tree) for b in _bodies(f)]


def _nodes(tree: ast.Module, cls: type | tuple, in_funcs: bool = True) -> list:
    roots = _funcs(tree) if in_funcs else [tree]
    return [n for r in roots for n in ast.walk(r) if isinstance(n, cls)]


def _parents(tree: ast.AST) -> dict:
    par = {}
    for node in ast.walk(tree):
        for child in ast.iter_child_nodes(node):
            par[child] = node
    return par


def _dotted(node: ast.AST) -> str | None:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
        return ".".join(reversed(parts))
    return None


def _pl_calls(tree: ast.Module) -> list[ast.Call]:
    return [c for c in _nodes(tree, ast.Call) if (_dotted(c.func) or "").startswith("pl.")]


def _is_scope(node: ast.AST, names: tuple = ("pl.at", "pl.spmd")) -> bool:
    return isinstance(node, ast.With) and any(
        isinstance(i.context_expr, ast.Call) and _dotted(i.context_expr.func) in names
        for i in node.items)


def _stmt(text: str) -> list[ast.stmt]:
    return ast.parse(text).body


def _expr(text: str) -> ast.expr:
    return ast.parse(text, mode="eval").body


def _param_names(tree: ast.Module) -> list[str]:
    return [a.arg for f in _funcs(tree) for a in f.args.args]


def _local_names(tree: ast.Module) -> list[str]:
    names = {n.id for n in _nodes(tree, ast.Name) if isinstance(n.ctx, ast.Store)}
    return sorted(names)


def _module_consts(tree: ast.Module) -> list[ast.Constant]:
    out = []
    for n in tree.body:
        if isinstance(n, ast.Assign) and isinstance(n.value, ast.Constant) and \
                type(n.value.value) is int:
            out.append(n.value)
    return out


# --- mutation operators ------------------------------------------------------------------------
# Each takes (tree, chooser) and mutates the tree in place, returning a description, or
# None when it has nowhere to apply.

Op = Callable[[ast.Module, Any], "str | None"]


def _near_miss(name: str, ch: Any) -> str:
    base = name.split(".")[-1]
    prefix = name[: len(name) - len(base)]
    kind = ch.choice(["drop", "double", "swap", "plural", "case", "underscore", "other",
                      "unknown", "namespace"])
    if kind == "drop" and len(base) > 1:
        i = ch.integer(0, len(base) - 1)
        base = base[:i] + base[i + 1:]
    elif kind == "double":
        i = ch.integer(0, len(base) - 1)
        base = base[:i] + base[i] + base[i:]
    elif kind == "swap" and len(base) > 1:
        i = ch.integer(0, len(base) - 2)
        base = base[:i] + base[i + 1] + base[i] + base[i + 2:]
    elif kind == "plural":
        base = base + "s"
    elif kind == "case":
        base = base.capitalize()
    elif kind == "underscore":
        base = base.replace("_", "") if "_" in base else base + "_"
    elif kind == "other":
        return "pl." + ch.choice(OP_NAMES)
    elif kind == "unknown":
        return "pl." + ch.choice(UNKNOWN_OPS)
    elif kind == "namespace":
        return ch.choice(["pl.tile.", "pl.tensor.", "pl.", "pl.system.", "pl.array."]) + base
    return prefix + base


def op_rename(tree: ast.Module, ch: Any) -> str | None:
    calls = _pl_calls(tree)
    if not calls:
        return None
    call = ch.choice(calls)
    old = _dotted(call.func)
    new = _near_miss(old, ch)
    call.func = _expr(new)
    return f"rename {old} -> {new}"


def op_literal(tree: ast.Module, ch: Any) -> str | None:
    consts = [c for c in _nodes(tree, ast.Constant) if type(c.value) is int]
    consts += _module_consts(tree)
    if not consts:
        return None
    c = ch.choice(consts)
    v = c.value
    new = ch.choice([0, -1, -v, v + 1, v - 1, v * 2, v // 2 + 1, 3, 7, 1, -16, 10 ** 12,
                     2 ** 31])
    c.value = new
    return f"literal {v} -> {new}"


def op_inflate(tree: ast.Module, ch: Any) -> str | None:
    consts = _module_consts(tree) + [c for c in _nodes(tree, ast.Constant)
                                     if type(c.value) is int and c.value > 1]
    if not consts:
        return None
    c = ch.choice(consts)
    v, c.value = c.value, ch.choice(ABSURD)
    return f"inflate {v} -> {c.value}"


def op_dtype(tree: ast.Module, ch: Any) -> str | None:
    sites = [n for n in ast.walk(tree) if isinstance(n, ast.Attribute) and
             isinstance(n.value, ast.Name) and n.value.id == "pl" and n.attr in DTYPES]
    if not sites:
        return None
    node = ch.choice(sites)
    old = node.attr
    if ch.integer(0, 4) == 0:
        new = ch.choice(NOT_DTYPES)
        repl = _expr(new)
        par = _parents(tree)[node]
        for field, value in ast.iter_fields(par):
            if value is node:
                setattr(par, field, repl)
            elif isinstance(value, list):
                setattr(par, field, [repl if v is node else v for v in value])
    else:
        new = ch.choice([d for d in DTYPES if d != old])
        node.attr = new
    return f"dtype {old} -> {new}"


def op_delete(tree: ast.Module, ch: Any) -> str | None:
    bodies = _all_bodies(tree)
    if not bodies:
        return None
    body = ch.choice(bodies)
    i = ch.integer(0, len(body) - 1)
    gone = body.pop(i)
    if not body:
        body.append(ast.Pass())
    return f"delete '{ast.unparse(gone).splitlines()[0][:50]}'"


def op_duplicate(tree: ast.Module, ch: Any) -> str | None:
    bodies = _all_bodies(tree)
    if not bodies:
        return None
    body = ch.choice(bodies)
    i = ch.integer(0, len(body) - 1)
    body.insert(i + ch.integer(0, 1), copy.deepcopy(body[i]))
    return f"duplicate '{ast.unparse(body[i]).splitlines()[0][:50]}'"


def op_swap(tree: ast.Module, ch: Any) -> str | None:
    bodies = [b for b in _all_bodies(tree) if len(b) > 1]
    if not bodies:
        return None
    body = ch.choice(bodies)
    i = ch.integer(0, len(body) - 2)
    body[i], body[i + 1] = body[i + 1], body[i]
    return f"swap statements {i}, {i + 1}"


def op_return(tree: ast.Module, ch: Any) -> str | None:
    rets = []
    for f in _funcs(tree):
        for b in _bodies(f):
            rets += [(b, s) for s in b if isinstance(s, ast.Return)]
    if not rets:
        return None
    body, ret = ch.choice(rets)
    names = _param_names(tree) + _local_names(tree)
    what = ch.choice(["drop", "drop", "none", "const", "name", "tuple", "undefined", "expr"])
    if what == "drop":
        body.remove(ret)
        if not body:
            body.append(ast.Pass())
        return "drop return"
    ret.value = {
        "none": lambda: None,
        "const": lambda: _expr(ch.choice(["3", "1.5", "'y'", "N"])),
        "name": lambda: _expr(ch.choice(names)) if names else None,
        "tuple": lambda: _expr(f"({ch.choice(names)}, {ch.choice(names)})") if names else None,
        "undefined": lambda: _expr("yy"),
        "expr": lambda: _expr(f"pl.exp({ch.choice(names)})") if names else None,
    }[what]()
    return f"return -> {ast.unparse(ret)}"


def op_scope(tree: ast.Module, ch: Any) -> str | None:
    withs = []
    for b in _all_bodies(tree):
        withs += [(b, s) for s in b if _is_scope(s)]
    bodies = _all_bodies(tree)
    what = ch.choice(["into", "out_before", "out_after", "unwrap", "wrap", "nest", "level"])
    if what == "wrap" or not withs:
        body = ch.choice(bodies)
        i = ch.integer(0, len(body) - 1)
        j = ch.integer(i, min(len(body) - 1, i + 2))
        kind = ch.choice(["pl.at(level=pl.Level.CORE_GROUP, name_hint='w')",
                          "pl.at(level=pl.Level.CORE_GROUP)", "pl.spmd(2)",
                          "pl.at(level=pl.Level.CLUSTER)", "pl.manual_scope()"])
        new = _stmt(f"with {kind}:\n    pass")[0]
        new.body = body[i:j + 1]
        body[i:j + 1] = [new]
        return f"wrap statements {i}..{j} in {kind.split('(')[0]}"
    body, w = ch.choice(withs)
    i = body.index(w)
    if what == "into" and i > 0:
        s = body.pop(i - 1)
        w.body.insert(0, s)
        return f"move '{ast.unparse(s).splitlines()[0][:40]}' into the scope"
    if what in ("out_before", "out_after", "into"):
        k = ch.integer(0, len(w.body) - 1)
        s = w.body.pop(k)
        if not w.body:
            w.body.append(ast.Pass())
        body.insert(i if what == "out_before" else i + 1, s)
        return f"move '{ast.unparse(s).splitlines()[0][:40]}' out of the scope"
    if what == "unwrap":
        body[i:i + 1] = w.body
        return "unwrap the scope"
    if what == "nest":
        inner = copy.deepcopy(w)
        inner.body = w.body
        w.body = [inner]
        return "nest the scope in itself"
    call = w.items[0].context_expr
    for kw in getattr(call, "keywords", []):
        if kw.arg == "level":
            new = ch.choice(["HOST", "CLUSTER", "CORE", "AIV", "CHIP", "GLOBAL", "NOPE"])
            kw.value = _expr(f"pl.Level.{new}")
            return f"scope level -> {new}"
    return None


def op_iterator(tree: ast.Module, ch: Any) -> str | None:
    fors = [f for f in _nodes(tree, ast.For) if isinstance(f.iter, ast.Call)]
    if not fors:
        return None
    loop = ch.choice(fors)
    old = _dotted(loop.iter.func)
    new = ch.choice(["range", "pl.range", "pl.parallel", "pl.unroll", "pl.pipeline",
                     "pl.spmd", "pl.while_", "enumerate", "pl.split_aiv", "pl.ranges"])
    loop.iter.func = _expr(new)
    return f"iterator {old} -> {new}"


def op_insert(tree: ast.Module, ch: Any) -> str | None:
    bodies = _all_bodies(tree)
    if not bodies:
        return None
    params = _param_names(tree) or ["x"]
    p = ch.choice(params)
    func = ch.choice(_funcs(tree))
    if ch.integer(0, 9) == 0:
        # async: the function becomes `async def`, so `await` & co. are valid Python
        new = ast.AsyncFunctionDef(**{f: getattr(func, f) for f in func._fields
                                      if f in ast.AsyncFunctionDef._fields})
        tree.body[tree.body.index(func)] = new
        text = ch.choice(ASYNC_TEMPLATES).format(p=p)
        new.body.insert(ch.integer(0, len(new.body)), _stmt(text)[0])
        return f"async def + '{text.splitlines()[0]}'"
    body = ch.choice(_bodies(func) or bodies)
    text = ch.choice(PY_TEMPLATES).format(p=p)
    if text.startswith("global"):
        body = func.body  # `global` must come before the name's uses
    if ch.integer(0, 4) == 0 and text.startswith("try"):
        s = body[0]
        t = _stmt(text)[0]
        t.body = [s]
        body[0] = t
        return "wrap a statement in try"
    i = ch.integer(0, len(body))
    body[i:i] = _stmt(text)
    return f"insert '{text.splitlines()[0]}'"


def op_annotation(tree: ast.Module, ch: Any) -> str | None:
    args = [a for f in _funcs(tree) for a in f.args.args if a.annotation is not None]
    if not args:
        return None
    a = ch.choice(args)
    subs = [n for n in ast.walk(a.annotation) if isinstance(n, ast.Subscript) and
            _dotted(n.value) in ("pl.Tensor", "pl.Tile") and isinstance(n.slice, ast.Tuple)
            and n.slice.elts and isinstance(n.slice.elts[0], ast.List)]
    what = ch.choice(["add_dim", "drop_dim", "direction", "replace", "remove", "dim"])
    if subs and what in ("add_dim", "drop_dim", "dim"):
        shape = ch.choice(subs).slice.elts[0]
        if what == "add_dim":
            shape.elts.insert(ch.integer(0, len(shape.elts)),
                              _expr(ch.choice(["8", "1", "N", "2"])))
        elif what == "drop_dim" and shape.elts:
            shape.elts.pop(ch.integer(0, len(shape.elts) - 1))
        elif shape.elts:
            k = ch.integer(0, len(shape.elts) - 1)
            shape.elts[k] = _expr(ch.choice(["0", "-1", "3", "10 ** 12", "N + 1", "1.5",
                                             "'M'", "None", "pl.dynamic('Z')"]))
        return f"annotation of '{a.arg}': {what} -> {ast.unparse(a.annotation)}"
    if what == "direction":
        ann = a.annotation
        d = _dotted(ann.value) if isinstance(ann, ast.Subscript) else None
        if d in ("pl.Out", "pl.InOut"):
            a.annotation = ch.choice([ann.slice, _expr(f"pl.{'InOut' if d == 'pl.Out' else 'Out'}"
                                                        f"[{ast.unparse(ann.slice)}]")])
        else:
            a.annotation = _expr(f"{ch.choice(['pl.Out', 'pl.InOut'])}[{ast.unparse(ann)}]")
        return f"direction of '{a.arg}' -> {ast.unparse(a.annotation)}"
    if what == "remove":
        a.annotation = None
        return f"remove the annotation of '{a.arg}'"
    a.annotation = _expr(ch.choice(BAD_ANNOTATIONS))
    return f"annotation of '{a.arg}' -> {ast.unparse(a.annotation)}"


def op_args(tree: ast.Module, ch: Any) -> str | None:
    calls = [c for c in _nodes(tree, ast.Call) if c.args or c.keywords]
    if not calls:
        return None
    call = ch.choice(calls)
    name = ast.unparse(call.func)
    names = _param_names(tree) + _local_names(tree)
    what = ch.choice(["drop", "extra", "swap", "kw_typo", "kw_unknown", "kw_value",
                      "kw_dup_positional", "positional_kw"])
    if what == "drop" and call.args:
        call.args.pop(ch.integer(0, len(call.args) - 1))
    elif what == "extra":
        call.args.append(_expr(ch.choice(names + ["1", "1.5", "None", "pl.FP32"])))
    elif what == "swap" and len(call.args) > 1:
        i = ch.integer(0, len(call.args) - 2)
        call.args[i], call.args[i + 1] = call.args[i + 1], call.args[i]
    elif what == "kw_typo" and call.keywords:
        kw = ch.choice(call.keywords)
        kw.arg = _near_miss(kw.arg, ch).split(".")[-1] if kw.arg else kw.arg
    elif what == "kw_unknown":
        call.keywords.append(ast.keyword(arg=ch.choice(["bogus", "dtype", "shape", "level",
                                                        "name", "axis", "out"]),
                                         value=_expr(ch.choice(["1", "pl.FP32", "[4, 4]"]))))
    elif what == "kw_value" and call.keywords:
        kw = ch.choice(call.keywords)
        kw.value = _expr(ch.choice(["3", "-1", "'x'", "None", "pl.FP32", "[1, 2, 3]",
                                    "pl.Level.HOST", "10 ** 12", "True", "(1,)"]))
    elif what == "kw_dup_positional" and call.args:
        call.keywords.append(ast.keyword(arg=ch.choice(["x", "lhs", "src", "tensor", "tile",
                                                        "shape"]),
                                         value=copy.deepcopy(call.args[0])))
    elif what == "positional_kw" and call.keywords:
        kw = call.keywords.pop(ch.integer(0, len(call.keywords) - 1))
        call.args.append(kw.value)
    else:
        call.args = call.args[:1]
        call.keywords = []
    return f"arity/keywords of {name}: {what} -> {ast.unparse(call)[:60]}"


def op_subscript(tree: ast.Module, ch: Any) -> str | None:
    subs = [s for s in _nodes(tree, ast.Subscript) if isinstance(s.value, ast.Name)]
    if not subs:
        return None
    s = ch.choice(subs)
    elts = list(s.slice.elts) if isinstance(s.slice, ast.Tuple) else [s.slice]
    what = ch.choice(["extra", "fewer", "negative", "step", "reversed", "past_end", "scalar",
                      "ellipsis", "none", "float", "huge", "empty", "name"])
    k = ch.integer(0, len(elts) - 1)
    e = elts[k]
    if what == "extra":
        elts.append(_slice_or_expr(ch.choice(["0", "0:4", ":"])))
    elif what == "fewer" and len(elts) > 1:
        elts.pop(k)
    elif what == "negative":
        elts[k] = _slice_or_expr(ch.choice(["-1", "-16:0", "-8:8", "0:-1"]))
    elif what == "step":
        elts[k] = ast.Slice(getattr(e, "lower", None), getattr(e, "upper", None),
                            _expr(ch.choice(["2", "-1", "0"])))
    elif what == "reversed" and isinstance(e, ast.Slice) and e.lower and e.upper:
        e.lower, e.upper = e.upper, e.lower
    elif what == "past_end":
        elts[k] = _slice_or_expr(ch.choice(["0:1000", "60:80", "0:N + 16", "N:N + 16",
                                            "1000:1016"]))
    elif what == "scalar":
        elts[k] = _expr(ch.choice(["0", "3", "N"]))
    elif what == "ellipsis":
        elts[k] = ast.Constant(...)
    elif what == "none":
        elts[k] = ast.Constant(None)
    elif what == "float":
        elts[k] = _slice_or_expr(ch.choice(["0.5", "0:1.5"]))
    elif what == "huge":
        elts[k] = _slice_or_expr(ch.choice(["0:10 ** 12", "10 ** 12", "2 ** 63:2 ** 63 + 4"]))
    elif what == "empty":
        elts[k] = _slice_or_expr(ch.choice(["4:4", "8:0"]))
    else:
        names = _param_names(tree) + _local_names(tree)
        elts[k] = _expr(ch.choice(names)) if names else e
    s.slice = ast.Tuple(elts, ast.Load()) if len(elts) != 1 else elts[0]
    return f"subscript {what} -> {ast.unparse(s)[:60]}"


def _slice_or_expr(text: str) -> ast.expr:
    return ast.parse(f"_[{text}]", mode="eval").body.slice


def op_operator(tree: ast.Module, ch: Any) -> str | None:
    sites = _nodes(tree, (ast.BinOp, ast.Compare))
    if not sites:
        return None
    n = ch.choice(sites)
    if isinstance(n, ast.BinOp):
        n.op = ch.choice([ast.Add(), ast.Sub(), ast.Mult(), ast.Div(), ast.FloorDiv(), ast.Mod(),
                          ast.Pow(), ast.MatMult(), ast.BitAnd(), ast.BitOr(), ast.LShift()])
    else:
        n.ops = [ch.choice([ast.Lt(), ast.Gt(), ast.Eq(), ast.NotEq(), ast.Is(), ast.In(),
                            ast.LtE()]) for _ in n.ops]
    return f"operator -> {ast.unparse(n)[:60]}"


def op_name(tree: ast.Module, ch: Any) -> str | None:
    loads = [n for n in _nodes(tree, ast.Name) if isinstance(n.ctx, ast.Load) and n.id != "pl"]
    if not loads:
        return None
    n = ch.choice(loads)
    old = n.id
    pool = _param_names(tree) + _local_names(tree) + ["undefined_zz", "N", "np", "self",
                                                       "kernel", "range", "print", "True"]
    n.id = ch.choice(pool)
    return f"name {old} -> {n.id}"


OPERATORS: list[tuple[str, Op]] = [
    ("rename", op_rename), ("literal", op_literal), ("inflate", op_inflate),
    ("dtype", op_dtype), ("delete", op_delete), ("duplicate", op_duplicate),
    ("swap", op_swap), ("return", op_return), ("scope", op_scope),
    ("iterator", op_iterator), ("insert", op_insert), ("annotation", op_annotation),
    ("args", op_args), ("subscript", op_subscript), ("operator", op_operator),
    ("name", op_name),
]


def mutate(source: str, ch: Any, max_mutations: int = 3) -> tuple[str, str]:
    """Apply 1..max_mutations mutations; returns (new source, description). The result is
    always valid Python (mutations that would not be are re-drawn)."""
    for _attempt in range(20):
        tree = ast.parse(source)
        n = ch.choice([1, 1, 1, 1, 2, 2, 3][: 4 + 3 * (max_mutations > 1)])
        n = min(n, max_mutations)
        descs = []
        for _ in range(n):
            name, op = ch.choice(OPERATORS)
            try:
                d = op(tree, ch)
            except (IndexError, ValueError, AttributeError, TypeError, SyntaxError):
                d = None
            if d:
                descs.append(f"{name}: {d}")
        if not descs:
            continue
        try:
            ast.fix_missing_locations(tree)
            text = ast.unparse(tree) + "\n"
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                compile(text, "<mutant>", "exec")
        except (SyntaxError, ValueError, TypeError, RecursionError):
            continue
        if text.strip() == source.strip():
            continue
        return text, "; ".join(descs)
    return source, "unchanged"
