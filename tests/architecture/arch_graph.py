"""The import graph of the project's packages, read from the source (nothing is imported).

Every `import` / `from ... import` statement is an edge, wherever it sits: at module
level, in a class body, or inside a function (a function-level import still ties the
two modules together; it only delays the tie). Imports under `if TYPE_CHECKING:` are
not edges: they never run. `from a.b import c` is an edge to the module `a.b.c` when
that is a module, else to `a.b`. Importing `a.b.c` also initialises the packages `a`
and `a.b`; those implicit parent edges are not counted (a package that re-exports
its children would otherwise form a circle with each of them).
"""
from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("pypto", "pypto_lab")


@dataclass(frozen=True)
class Import:
    importer: str  # dotted module name
    target: str  # a project module, or the top-level name of an outside package
    line: int
    lazy: bool  # inside a function body: runs when the function is called
    internal: bool  # the target is a module of the project

    def where(self) -> str:
        return f"{module_path(self.importer)}:{self.line}"


def modules(packages: tuple[str, ...] = PACKAGES) -> dict[str, Path]:
    """Dotted module name -> file, for every .py file of the packages."""
    out: dict[str, Path] = {}
    for package in packages:
        for path in sorted((ROOT / package).rglob("*.py")):
            parts = list(path.relative_to(ROOT).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            out[".".join(parts)] = path
    return out


def module_path(name: str) -> str:
    path = modules().get(name)
    return str(path.relative_to(ROOT)) if path else name


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _owner(name: str, known: dict[str, Path]) -> str | None:
    """The longest project module that `name` names or lies in, or None."""
    while name:
        if name in known:
            return name
        name = name.rpartition(".")[0]
    return None


def _targets(module: str, node: ast.Import | ast.ImportFrom, is_package: bool,
             known: dict[str, Path]) -> list[str]:
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    base = node.module or ""
    if node.level:
        package = module.split(".") if is_package else module.split(".")[:-1]
        package = package[:len(package) - node.level + 1]
        base = ".".join(package + ([base] if base else []))
    return [f"{base}.{alias.name}" if f"{base}.{alias.name}" in known else base
            for alias in node.names]


def imports(packages: tuple[str, ...] = PACKAGES) -> list[Import]:
    """Every import statement of the packages' modules (one record per target)."""
    known = modules(packages)
    found: list[Import] = []
    seen: set[Import] = set()
    for module, path in known.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for record in _imports_in(tree, module, path.name == "__init__.py", known):
            if record.target != module and record not in seen:
                seen.add(record)
                found.append(record)
    return found


def _imports_in(node: ast.AST, module: str, is_package: bool, known: dict,
                lazy: bool = False) -> list[Import]:
    if isinstance(node, ast.If) and _is_type_checking(node.test):
        return [r for stmt in node.orelse for r in _imports_in(stmt, module, is_package, known,
                                                               lazy)]
    out = []
    if isinstance(node, (ast.Import, ast.ImportFrom)):
        for name in _targets(module, node, is_package, known):
            owner = _owner(name, known)
            target = owner if owner is not None else name.split(".")[0]
            out.append(Import(module, target, node.lineno, lazy, owner is not None))
    inner = lazy or isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
    for child in ast.iter_child_nodes(node):
        out.extend(_imports_in(child, module, is_package, known, inner))
    return out


def circles(edges: list[Import]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan), sorted."""
    graph: dict[str, set[str]] = {}
    for e in edges:
        if e.internal:
            graph.setdefault(e.importer, set()).add(e.target)
            graph.setdefault(e.target, set())
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def connect(v: str) -> None:
        # iterative Tarjan: a deep import chain must not hit the recursion limit
        work = [(v, iter(sorted(graph[v])))]
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    w = stack.pop()
                    on_stack.discard(w)
                    component.append(w)
                    if w == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            connect(v)
    return sorted(found)


def cycle_path(component: list[str], edges: list[Import]) -> list[Import]:
    """One closed path of import statements through `component`, to show in a failure."""
    inside = set(component)
    out: dict[str, list[Import]] = {}
    for e in edges:
        if e.internal and e.importer in inside and e.target in inside:
            out.setdefault(e.importer, []).append(e)
    start = component[0]
    # breadth-first from start back to start
    seen = {start: None}
    queue = [start]
    back: dict[str, Import] = {}
    while queue:
        node = queue.pop(0)
        for e in out.get(node, []):
            if e.target == start:
                path = [e]
                while node != start:
                    path.append(back[node])
                    node = back[node].importer
                return path[::-1]
            if e.target not in seen:
                seen[e.target] = node
                back[e.target] = e
                queue.append(e.target)
    return []
