"""Read the real `pypto.language` public surface's signatures from a checkout, with `ast`.

Usage:
    python tools/real_pypto/signatures.py [--checkout DIR] [--out FILE]

DIR is a hw-native-sys/pypto checkout (default: $PYPTO_REF, else /work/pypto). Nothing
of it is imported or executed: each module of `python/pypto/` is parsed, names are
followed through `from ... import ...` and plain `a = b` aliases to where they are
defined, and for every public name of the namespaces below the table records what it
is and, for a function, its parameters (name, kind, default as source text). Only
those signature facts are kept, never code. `@overload` stubs are skipped: the
implementation's parameters are what a call binds to (the real parser calls the
wrapper, `pypto/language/parser/_dsl_invoker.py`).

The table (`tests/frontend/data/real_signatures.json`, default --out) is what
`tests/frontend/test_signatures.py` compares pypto-lab's surface with.
"""
from __future__ import annotations

import argparse
import ast
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
DEFAULT_OUT = REPO / "tests" / "frontend" / "data" / "real_signatures.json"

# public namespace -> the real module that defines it
NAMESPACES = {
    "pl": "pypto.language",
    "pl.tile": "pypto.language.op.tile_ops",
    "pl.tensor": "pypto.language.op.tensor_ops",
    "pl.system": "pypto.language.op.system_ops",
    "pl.array": "pypto.language.op.array_ops",
    "pl.prefetch": "pypto.language.op.prefetch_ops",
    "pld": "pypto.language.distributed",
    "pld.tile": "pypto.language.distributed.op.tile_ops",
    "pld.tensor": "pypto.language.distributed.op.tensor_ops",
    "pld.system": "pypto.language.distributed.op.system_ops",
}

class Module:
    """One parsed module of the checkout: its top-level bindings, last one wins."""

    def __init__(self, name: str, path: Path, root: Path):
        self.name = name
        self.path = path
        self.rel = path.relative_to(root).as_posix()
        self.is_package = path.name in ("__init__.py", "__init__.pyi")
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        self.bindings: dict[str, ast.AST] = {}
        self.all: list[str] | None = None
        for node in tree.body:
            self._bind(node)

    def _bind(self, node: ast.AST) -> None:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            if not any(_decorator_name(d) == "overload" for d in node.decorator_list):
                self.bindings[node.name] = node
            else:
                self.bindings.setdefault(node.name, node)
        elif isinstance(node, ast.ClassDef):
            self.bindings[node.name] = node
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            for alias in node.names:
                if alias.name != "*":
                    self.bindings[alias.asname or alias.name.split(".")[0]] = node
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for t in targets:
                if isinstance(t, ast.Name):
                    if t.id == "__all__" and node.value is not None:
                        self.all = [e.value for e in node.value.elts]  # type: ignore[attr-defined]
                    else:
                        self.bindings[t.id] = node
        elif isinstance(node, ast.If):  # `if TYPE_CHECKING:` blocks and the like
            for sub in node.body:
                self._bind(sub)

    def public(self) -> list[str]:
        if self.all is not None:
            return list(self.all)
        return sorted(n for n in self.bindings if not n.startswith("_"))


def _decorator_name(node: ast.AST) -> str:
    if isinstance(node, ast.Call):
        node = node.func
    if isinstance(node, ast.Attribute):
        return node.attr
    return node.id if isinstance(node, ast.Name) else ""


class Checkout:
    def __init__(self, root: Path):
        self.root = root
        self.src = root / "python"
        self._modules: dict[str, Module | None] = {}

    def module(self, name: str) -> Module | None:
        if name not in self._modules:
            base = self.src.joinpath(*name.split("."))
            for cand in (base / "__init__.py", base.with_suffix(".py"), base / "__init__.pyi",
                         base.with_suffix(".pyi")):
                if cand.is_file():
                    self._modules[name] = Module(name, cand, self.src)
                    break
            else:
                self._modules[name] = None
        return self._modules[name]

    def resolve(self, mod: Module, name: str, depth: int = 0) -> dict[str, Any]:
        """What `name` in `mod` is: a function (with its parameters), a class, a module,
        a value, or `external` (defined outside the checkout's Python sources)."""
        if depth > 20:
            raise RecursionError(f"{mod.name}.{name}: alias cycle")
        node = mod.bindings.get(name)
        if node is None:
            sub = self.module(f"{mod.name}.{name}") if mod.is_package else None
            if sub is not None:
                return {"kind": "module", "module": sub.name}
            return {"kind": "missing"}
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            return {"kind": "function", "defined": f"{mod.rel}:{node.lineno}",
                    "signature": signature_text(node.args)}
        if isinstance(node, ast.ClassDef):
            return {"kind": "class", "defined": f"{mod.rel}:{node.lineno}"}
        if isinstance(node, ast.ImportFrom):
            alias = next(a for a in node.names if (a.asname or a.name) == name)
            target = _absolute(mod, node)
            sub = self.module(f"{target}.{alias.name}")
            owner = self.module(target)
            if owner is not None and owner.bindings.get(alias.name) not in (None, node):
                return self.resolve(owner, alias.name, depth + 1)
            if sub is not None:
                return {"kind": "module", "module": sub.name}
            return {"kind": "external", "from": f"{target}.{alias.name}"}
        if isinstance(node, ast.Import):
            return {"kind": "module", "module": next(a.name for a in node.names
                                                     if (a.asname or a.name) == name)}
        value = node.value  # type: ignore[attr-defined]
        if isinstance(value, ast.Name) and value.id != name and value.id in mod.bindings:
            return self.resolve(mod, value.id, depth + 1)
        return {"kind": "value", "defined": f"{mod.rel}:{node.lineno}"}


def _absolute(mod: Module, node: ast.ImportFrom) -> str:
    if not node.level:
        return node.module or ""
    parts = mod.name.split(".")
    base = parts if mod.is_package else parts[:-1]
    base = base[:len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def signature_text(args: ast.arguments) -> str:
    """`(a, b=1, *, c=None)`: the parameters, their kinds and defaults, no annotations
    (`ast.unparse` of the arguments with the annotations dropped)."""
    bare = ast.arguments(
        posonlyargs=[ast.arg(a.arg) for a in args.posonlyargs],
        args=[ast.arg(a.arg) for a in args.args],
        vararg=ast.arg(args.vararg.arg) if args.vararg else None,
        kwonlyargs=[ast.arg(a.arg) for a in args.kwonlyargs],
        kw_defaults=list(args.kw_defaults), kwarg=ast.arg(args.kwarg.arg) if args.kwarg else None,
        defaults=list(args.defaults))
    return f"({ast.unparse(bare)})"


def table(root: Path) -> dict[str, Any]:
    co = Checkout(root)
    spaces: dict[str, dict[str, Any]] = {}
    for space, modname in NAMESPACES.items():
        mod = co.module(modname)
        if mod is None:
            raise SystemExit(f"{root}: no module {modname}")
        spaces[space] = {n: co.resolve(mod, n) for n in sorted(mod.public())}
    return {"source": _source(root), "namespaces": spaces}


def _source(root: Path) -> dict[str, str]:
    try:
        commit = subprocess.run(["git", "-C", str(root), "rev-parse", "HEAD"], check=True,
                                capture_output=True, text=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        commit = "unknown"
    return {"repo": "hw-native-sys/pypto", "commit": commit,
            "tool": "tools/real_pypto/signatures.py"}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--checkout", type=Path,
                    default=Path(os.environ.get("PYPTO_REF", "/work/pypto")))
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT)
    args = ap.parse_args(argv)
    data = table(args.checkout.resolve())
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    counts = {s: sum(1 for v in names.values() if v["kind"] == "function")
              for s, names in data["namespaces"].items()}
    print(f"{args.out}: {sum(counts.values())} functions "
          + ", ".join(f"{s} {n}" for s, n in counts.items()), file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
