"""The args-dump tags of a dispatch: `pl.dump_tag(t)` and `dumps=[...]`.

As in the real parser (`_handle_dump_tag`, `_merge_forward_sticky_dump`), a tag marks
a *value*, not a name: every later dispatch that receives that very value dumps it, and
rebinding the name makes a new, untagged value. A dispatch carries its tagged tensors as
a `("dumps", (Var, ...))` attribute; SSA renames them with the rest of the scope's
attributes and the outliner turns them into the launch's `dumps` (the indices of the
parameters receiving them), which the simulator's args-dump capture reads.
"""
from __future__ import annotations

import ast
from collections.abc import Callable, Iterable
from typing import Any

from pypto.errors import PyptoTypeError
from pypto.ir.nodes import Var
from pypto.ir.transform import walk


def is_tagged(p: Any, value: Any) -> bool:
    """Whether `value` is a value `pl.dump_tag` marked in the function `p` parses."""
    return any(value is t for t in p.dump_tags)


def live_tags(p: Any, explicit: Iterable[Any] = ()) -> list[Var]:
    """The tensors a scope opened now dumps: its `dumps=` entries, then the tagged values
    its names are still bound to."""
    out = [v for v in explicit if isinstance(v, Var)]
    for v in p.dump_tags:
        if p.env.get(v.name) is v and not any(v is o for o in out):
            out.append(v)
    return out


def dumps_attr(tagged: list[Var], body: Any) -> list[tuple[str, tuple]]:
    """The scope attribute of the tagged tensors its `body` uses (a tag the scope never
    receives is dropped, as the real outliner drops it)."""
    if not tagged:
        return []
    used = {n.name for n in walk(tuple(body)) if isinstance(n, Var)}
    keep = tuple(v for v in tagged if v.name in used)
    return [("dumps", keep)] if keep else []


def call_dumps(p: Any, args: Iterable[Any], explicit: Iterable[Any] = ()) -> tuple:
    """The arguments of a kernel call that are tagged or listed in its `dumps=`."""
    listed = list(explicit)
    return tuple(a for a in args if isinstance(a, Var)
                 and (is_tagged(p, a) or any(a is e for e in listed)))


def listed_dumps(node: ast.expr, args: Iterable[Any], value_of: Callable[[ast.expr], Any],
                 error: Callable[..., Exception], submit: str) -> list:
    """The entries of a submit's `dumps=[a, ...]`, each one of its arguments (`value_of`
    reads an entry in the parser at hand; `error` is its located-error maker). Shared by
    the decorator parser and the text reader, which read the same option."""
    entries = node.elts if isinstance(node, (ast.List, ast.Tuple)) else None
    if entries is None:
        raise error(PyptoTypeError, f"{submit}'s dumps= must be a list of its arguments",
                    node)
    args = list(args)
    values: list = []
    for e in entries:
        v = value_of(e)
        if not any(v is a for a in args):
            raise error(PyptoTypeError, f"{submit}'s dumps= entry '{ast.unparse(e)}' is not "
                        "an argument of this submit", e,
                        hint="list tensors passed to the kernel in this call")
        if not any(v is o for o in values):
            values.append(v)
    return values


__all__ = ["call_dumps", "dumps_attr", "is_tagged", "listed_dumps", "live_tags"]
