"""Run every fuzz seed kernel (tests/fuzz/seeds) on fixed random inputs and hash all of its
outputs, so determinism can be compared across runs and processes."""
from __future__ import annotations

import hashlib
import importlib.util
import sys
from pathlib import Path

SEEDS = Path(__file__).resolve().parents[1] / "fuzz" / "seeds"


def _load(path: Path):
    name = f"robust_seed_{path.stem}"
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


def digest() -> str:
    """sha256 over the outputs of every seed kernel (fresh inputs and outputs each call)."""
    import numpy as np

    sys.path.insert(0, str(SEEDS.parent))
    import fuzzlib

    h = hashlib.sha256()
    for path in sorted(SEEDS.glob("seed_*.py")):
        mod = _load(path)
        compiled = mod.kernel.compile()
        args = fuzzlib.make_inputs(compiled, mod, np.random.default_rng(7))
        mod.kernel(*args)
        for p, a in zip(compiled.entry.params, args):
            if p.direction.value != "In" and isinstance(a, np.ndarray):
                h.update(path.stem.encode() + p.var.name.encode() + a.tobytes())
    return h.hexdigest()
