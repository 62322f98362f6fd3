"""Run a pypto-lib kernel file without its input generator (`big_kernels.py --lean`).

A big file's own `build_tensor_specs()` can cost more memory than the whole simulation:
`deepseek_v4_pro/expert_routed.py` draws each 48 x 3072 x 7168 expert stack as a float32
tensor (4.2 GB) and quantises it through temporaries of the same size, so its process
peaks near 16 GB before any kernel runs. Once `big_kernels.py` has saved a file's
inputs and goldens (the harness's `save_data`), the specs themselves are only names,
shapes, dtypes and roles: `save` writes those beside the data, and `run_path` runs the
file as `python FILE` would, except that each call of `build_tensor_specs` in its
`if __name__ == "__main__":` block returns them instead (the k-th call: the specs of
the file's k-th harness run, whose data the harness then replays from disk). The
process's peak is then what the run itself holds: the inputs, the simulation, the
validation.
"""
from __future__ import annotations

import ast
import json
import sys
import types
from pathlib import Path
from typing import Any

GENERATOR = "build_tensor_specs"
SPECS_FILE = "specs.json"


def _dtype_record(dtype: Any) -> dict:
    """A dtype as JSON: torch dtypes stay torch (the run converts for torch goldens and
    compare functions when a spec names torch), anything else by its numpy name."""
    mod = type(dtype).__module__
    if mod.startswith("torch"):
        return {"torch": str(dtype).split(".")[-1]}
    from pypto.golden import _interop as io
    return {"numpy": io.np_dtype(dtype).name}


def save(specs: list, run_dir: Path) -> None:
    """Write the spec list of one harness run beside its saved data."""
    from pypto.golden.spec import ScalarSpec, TensorSpec
    out = []
    for s in specs:
        if isinstance(s, TensorSpec):
            out.append({"kind": "tensor", "name": s.name, "shape": list(s.shape),
                        "dtype": _dtype_record(s.dtype), "is_output": bool(s.is_output),
                        "has_init": s.init_value is not None,
                        "resident": s.resident if s.resident is not False else None})
        elif isinstance(s, ScalarSpec):
            out.append({"kind": "scalar", "name": s.name, "dtype": _dtype_record(s.dtype)})
        else:
            raise TypeError(f"unknown spec {s!r}")
    (run_dir / SPECS_FILE).write_text(json.dumps(out, indent=1))


def _dtype(rec: dict) -> Any:
    if "torch" in rec:
        import torch
        return getattr(torch, rec["torch"])
    from pypto.golden import _interop as io
    return io.np_dtype(rec["numpy"])


def _never_called() -> Any:
    raise RuntimeError("a replayed spec's init_value was called: its data should come "
                       "from the saved inputs (golden_data)")


def load(run_dir: Path) -> list:
    """The specs `save` wrote: inputs carry an init_value that must never run (the
    harness reads them from the saved data), pure outputs none (they start at zero)."""
    from pypto.golden.spec import ScalarSpec, TensorSpec
    f = run_dir / SPECS_FILE
    if not f.is_file():
        raise FileNotFoundError(f"{f} is missing: run big_kernels.py once without --lean "
                                "to save the file's inputs and specs")
    specs: list = []
    for r in json.loads(f.read_text()):
        dt = _dtype(r["dtype"])
        if r["kind"] == "scalar":
            specs.append(ScalarSpec(r["name"], dt, 0))
        else:
            specs.append(TensorSpec(r["name"], r["shape"], dt,
                                    init_value=_never_called if r["has_init"] else None,
                                    is_output=r["is_output"], resident=r["resident"]))
    return specs


class _Redirect(ast.NodeTransformer):
    """`build_tensor_specs(...)` -> `__replay_specs__()` (the arguments are dropped:
    they chose what the saved run already holds)."""

    def __init__(self) -> None:
        self.count = 0

    def visit_Call(self, node: ast.Call) -> Any:
        self.generic_visit(node)
        if isinstance(node.func, ast.Name) and node.func.id == GENERATOR:
            self.count += 1
            return ast.copy_location(
                ast.Call(ast.Name("__replay_specs__", ast.Load()), [], []), node)
        return node


def _is_main_guard(s: ast.stmt) -> bool:
    t = s.test if isinstance(s, ast.If) else None
    return isinstance(t, ast.Compare) and isinstance(t.left, ast.Name) and \
        t.left.id == "__name__" and len(t.comparators) == 1 and \
        isinstance(t.comparators[0], ast.Constant) and t.comparators[0].value == "__main__"


def run_path(path: str, run_dirs: list[Path], run_name: str = "__main__") -> dict:
    """Run the file at `path` as `runpy.run_path(path, run_name="__main__")` does, its
    main block's `build_tensor_specs()` calls answered from `run_dirs` in order."""
    src = Path(path).read_text()
    tree = ast.parse(src, path)
    redirect = _Redirect()
    for s in tree.body:
        if _is_main_guard(s):
            redirect.visit(s)
    if not redirect.count:
        raise RuntimeError(f"{path}: no `{GENERATOR}()` call under `if __name__ == "
                           "'__main__':` to replay")
    ast.fix_missing_locations(tree)
    code = compile(tree, path, "exec")
    calls = iter(run_dirs)

    def replay() -> list:
        try:
            d = next(calls)
        except StopIteration:
            raise RuntimeError(f"{path} asks for more spec lists than its saved runs "
                               f"({len(run_dirs)})") from None
        return load(d)

    mod = types.ModuleType(run_name)
    mod.__dict__.update(__file__=path, __builtins__=__builtins__, __loader__=None,
                        __package__=None, __spec__=None, __replay_specs__=replay)
    saved = sys.modules.get(run_name)
    sys.modules[run_name] = mod
    try:
        exec(code, mod.__dict__)
    finally:
        if saved is not None:
            sys.modules[run_name] = saved
    return dict(mod.__dict__)


__all__ = ["load", "run_path", "save"]
