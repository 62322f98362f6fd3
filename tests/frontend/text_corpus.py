"""Every kernel the project has: the `@pl.jit` entries and `@pl.program` classes defined in
tests/, examples/, benchmarks/ and notebooks/ (the notebooks' code cells, without their
magics, displays and runs), for the tests that must hold for any kernel."""
from __future__ import annotations

import ast
import importlib.util
import json
import linecache
import sys
import warnings
from pathlib import Path

from pypto.language.jit import JITFunction, ProgramDef

ROOT = Path(__file__).resolve().parents[2]
_SKIP_DIRS = {"architecture"}
# calls that run or display something: a notebook cell statement making one is skipped
_RUNS = {"run", "run_jit", "compile", "lower", "simulate", "print", "display"}


def _load_file(path: Path):
    name = f"_corpus_{path.parent.name}_{path.stem}"
    if name in sys.modules:
        return sys.modules[name]
    sys.path.insert(0, str(path.parent))
    try:
        spec = importlib.util.spec_from_file_location(name, path)
        mod = importlib.util.module_from_spec(spec)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            spec.loader.exec_module(mod)
    except BaseException:  # noqa: BLE001 - a module that needs a fixture or optional dep
        return None
    finally:
        sys.path.remove(str(path.parent))
    sys.modules[name] = mod
    return mod


def _runs_something(stmt: ast.stmt) -> bool:
    for node in ast.walk(stmt):
        if isinstance(node, ast.Call):
            f = node.func
            name = f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) \
                else ""
            if name in _RUNS:
                return True
        if isinstance(node, ast.Name) and node.id in ("pypto_lab", "_"):
            return True
    return False


def _notebook_namespace(path: Path) -> dict:
    """The definitions of a notebook's code cells, executed in order in one namespace."""
    ns: dict = {"__name__": f"_corpus_nb_{path.stem}"}
    cells = [c for c in json.loads(path.read_text())["cells"] if c["cell_type"] == "code"]
    for i, cell in enumerate(cells):
        lines = [line for line in "".join(cell["source"]).splitlines()
                 if not line.startswith(("%", "!"))]
        source = "\n".join(lines) + "\n"
        filename = f"<notebook {path.name} cell {i}>"
        linecache.cache[filename] = (len(source), None, source.splitlines(keepends=True),
                                     filename)
        try:
            tree = ast.parse(source)
        except SyntaxError:
            continue
        for stmt in tree.body:
            if isinstance(stmt, (ast.Expr, ast.For, ast.While, ast.With, ast.If, ast.Try)) or \
                    (isinstance(stmt, ast.Assign) and _runs_something(stmt)):
                continue
            code = compile(ast.Module([stmt], []), filename, "exec")
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    exec(code, ns)  # our own tutorial cells
            except Exception:  # noqa: BLE001 - a cell needing what we skipped
                continue
    return ns


def kernels() -> dict[str, object]:
    """id -> JITFunction / ProgramDef, each kernel once."""
    files = [f for f in sorted(ROOT.glob("tests/**/*.py")) + sorted(ROOT.glob("examples/*.py"))
             + sorted(ROOT.glob("benchmarks/*.py")) + sorted(ROOT.glob("notebooks/**/*.py"))
             if not _SKIP_DIRS & set(f.relative_to(ROOT).parts) and f.name != "conftest.py"
             and not f.name.startswith("test_text")]
    spaces = [(str(f.relative_to(ROOT)), vars(m)) for f in files
              if (m := _load_file(f)) is not None]
    spaces += [(str(nb.relative_to(ROOT)), _notebook_namespace(nb))
               for nb in sorted(ROOT.glob("notebooks/*.ipynb"))]
    out: dict[str, object] = {}
    seen: set[int] = set()
    for where, names in spaces:
        for attr, value in sorted(names.items()):
            if isinstance(value, (JITFunction, ProgramDef)) and id(value) not in seen:
                seen.add(id(value))
                out[f"{where}:{attr}"] = value
    return out
