"""Which rebindings of a `@pl.jit` body keep their variable (and so their type).

The real `@pl.jit` specializer rewrites a body before its parser reads it: a name bound
again *at the depth of its first binding* (for / if / with bodies are one level
deeper each; a natural `while` body is not) becomes a new variable (`x` -> `x_v1`), so
it may take another type. A rebinding deeper than that is a loop carry or an update in
place and keeps its name; the parser then applies its rule (#642): a name bound to a
plain variable it can see (its scopes leak, or not, as below) may not be reassigned
with a different type. Loop-carried `init_values` names are not plain variables there,
and `pl.yield_` results are bound by the loop or if that yields them.

Two refinements of the specializer, kept: a name first bound in a sibling loop body at
the same depth and rebound in this loop's body is *carried* when the body reads it
before writing it (a bridge `x_v1 = x` before the loop, then `x_v1` in the body) and
*fresh* otherwise (forgotten, then bound as new); an else branch forgets the names the
then branch introduced.

`checked_rebinds(tree, params)` returns, for each statement, the names whose binding
there the parser checks. This is read from the source only; the types are compared
when the statement is parsed (`FunctionParser._check_retype`).
"""
from __future__ import annotations

import ast
from typing import Any

_VAR, _CARRY = "var", "carry"  # what a name is bound to in a parser scope


def _is_yield(value: Any) -> bool:
    return isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and \
        value.func.attr == "yield_"


def _stores(node: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and
            isinstance(n.ctx, ast.Store)}


def _loads(node: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and
            isinstance(n.ctx, ast.Load)}


def _read_first(body: list[ast.stmt], written: set[str], exposed: set[str]) -> None:
    """Names read before they are written in `body`, in execution order."""
    for s in body:
        if isinstance(s, (ast.Assign, ast.AnnAssign)):
            if s.value is not None:
                exposed |= _loads(s.value) - written
            for t in (s.targets if isinstance(s, ast.Assign) else [s.target]):
                exposed |= _loads(t) - written
                written |= _stores(t)
        elif isinstance(s, ast.AugAssign):
            exposed |= (_loads(s.value) | _stores(s.target)) - written
            written |= _stores(s.target)
        elif isinstance(s, ast.For):
            exposed |= _loads(s.iter) - written
            written |= _stores(s.target)
            _read_first(s.body, written, exposed)
        elif isinstance(s, ast.If):
            exposed |= _loads(s.test) - written
            then, other = set(written), set(written)
            _read_first(s.body, then, exposed)
            if s.orelse:
                _read_first(s.orelse, other, exposed)
                written |= then & other
        elif isinstance(s, ast.With):
            for item in s.items:
                exposed |= _loads(item.context_expr) - written
                if item.optional_vars is not None:
                    written |= _stores(item.optional_vars)
            _read_first(s.body, written, exposed)
        else:
            exposed |= _loads(s) - written


class _Rebinds:
    def __init__(self, params: list[str]):
        self.depth = 0
        self.first: dict[str, int] = dict.fromkeys(params, 0)  # depth of first binding
        self.alias: dict[str, Any] = {}  # name -> the variable it currently names
        self.fresh = 0
        self.scopes: list[dict[Any, str]] = [{p: _VAR for p in params}]
        self.checked: dict[int, set[str]] = {}

    # -- the parser's scopes, over the specializer's variables --------------------------

    def _visible(self, var: Any) -> str | None:
        for scope in reversed(self.scopes):
            if var in scope:
                return scope[var]
        return None

    def _bind(self, stmt: ast.stmt, name: str, var: Any) -> None:
        if self._visible(var) == _VAR:
            self.checked.setdefault(id(stmt), set()).add(name)  # reassigned: same type
        else:
            self.scopes[-1][var] = _VAR

    def _new_alias(self, name: str) -> Any:
        self.fresh += 1
        self.alias[name] = (name, self.fresh)
        return self.alias[name]

    # -- statements ---------------------------------------------------------------------

    def body(self, stmts: list[ast.stmt]) -> None:
        for s in stmts:
            self.stmt(s)

    def _name_target(self, s: ast.stmt, name: str, value: Any, annotated: bool) -> None:
        if name not in self.first:
            self.first[name] = self.depth
            var: Any = name
        elif self.depth == self.first[name]:
            var = self._new_alias(name)  # a new variable: any type
            self.scopes[-1][var] = _VAR
            return
        else:  # deeper: the same variable (an annotated one keeps the name it is written)
            var = name if annotated else self.alias.get(name, name)
        if _is_yield(value):
            if len(self.scopes) > 1:
                self.scopes[-2].setdefault(var, _VAR)  # bound by the loop / if yielding it
            return
        self._bind(s, name, var)

    def stmt(self, s: ast.stmt) -> None:
        if isinstance(s, ast.Assign) and len(s.targets) == 1 and \
                isinstance(s.targets[0], ast.Name):
            self._name_target(s, s.targets[0].id, s.value, False)
        elif isinstance(s, ast.AnnAssign) and isinstance(s.target, ast.Name) and s.value:
            self._name_target(s, s.target.id, s.value, True)
        elif isinstance(s, ast.Assign):  # unpacking: never renamed
            for name in sorted(set().union(*(_stores(t) for t in s.targets))):
                if _is_yield(s.value):
                    if len(self.scopes) > 1:
                        self.scopes[-2].setdefault(self.alias.get(name, name), _VAR)
                else:
                    self._bind(s, name, name)
        elif isinstance(s, ast.For):
            self._for(s)
        elif isinstance(s, ast.If):
            self._if(s)
        elif isinstance(s, ast.With):
            self.depth += 1
            self.scopes.append({})
            self.body(s.body)
            self._leave(True)
            self.depth -= 1
        elif isinstance(s, ast.While):  # the specializer does not deepen a while body
            self.scopes.append({})
            self.body(s.body)
            self._leave(True)

    def _leave(self, leak: bool) -> None:
        scope = self.scopes.pop()
        if leak:
            for var, what in scope.items():
                self.scopes[-1][var] = what

    def _for(self, s: ast.For) -> None:
        self.depth += 1
        exposed: set[str] = set()
        _read_first(s.body, set(), exposed)
        collide = [n for b in s.body if isinstance(b, (ast.Assign, ast.AnnAssign))
                   for t in (b.targets if isinstance(b, ast.Assign) else [b.target])
                   for n in sorted(_stores(t)) if self.first.get(n) == self.depth]
        self.depth -= 1
        for name in dict.fromkeys(collide):
            if name in exposed:  # carried: bridged before the loop, the alias in the body
                var = self._new_alias(name)
                self.scopes[-1][var] = _VAR
                self.first[name] = self.depth
            else:  # fresh: bound anew in this body
                self.first.pop(name, None)
                self.alias.pop(name, None)
        self.depth += 1
        carried = not isinstance(s.target, ast.Name)  # `for i, (a, b) in ...(init_values=)`
        scope: dict[Any, str] = dict.fromkeys(_stores(s.target), _VAR)
        if carried and isinstance(s.target, ast.Tuple):
            for elt in s.target.elts[1:]:
                for n in _stores(elt):
                    scope[n] = _CARRY
        self.scopes.append(scope)
        self.body(s.body)
        yields = any(isinstance(b, (ast.Assign, ast.Expr)) and _is_yield(b.value)
                     for b in s.body)
        self._leave(not carried and not yields)
        self.depth -= 1

    def _if(self, s: ast.If) -> None:
        self.depth += 1
        before = set(self.first)
        self.scopes.append({})
        self.body(s.body)
        self._leave(not _yields(s.body))
        if s.orelse:
            for name in set(self.first) - before:
                self.first.pop(name, None)
                self.alias.pop(name, None)
            self.scopes.append({})
            self.body(s.orelse)
            self._leave(not _yields(s.orelse))
        self.depth -= 1


def _yields(body: list[ast.stmt]) -> bool:
    return any(isinstance(b, (ast.Assign, ast.AnnAssign, ast.Expr)) and _is_yield(b.value)
               for b in body)


def checked_rebinds(tree: ast.FunctionDef | ast.AsyncFunctionDef,
                    params: list[str]) -> dict[int, set[str]]:
    """id(statement) -> the names whose binding there must keep the variable's type."""
    r = _Rebinds(params)
    r.body(tree.body)
    return r.checked


__all__ = ["checked_rebinds"]
