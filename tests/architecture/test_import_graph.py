"""The architecture, checked over the import graph of `pypto/` and `pypto_lab/`.

1. No import circle anywhere (function-level imports are edges too).
2. The layers: the IR at the ground, ops over it, passes and the simulator above, the
   golden harness above the simulator, the workbench on top; nothing imports a layer
   above its own.
3. No heavy or notebook package (IPython, ipywidgets, plotly, networkx, torch, dask)
   imported at module level anywhere in `pypto`.
4. A budget of function-level imports in `pypto`: only the deliberate lazy ones listed
   in `LAZY_ALLOWED`, each with its reason.

There are no exceptions: the circles, the layer break and the 65 function-level imports
this test found when it was written are gone. Graph construction: `arch_graph.py`.
"""
from __future__ import annotations

import pytest
from arch_graph import Import, circles, cycle_path, imports, modules

# --- the layers ----------------------------------------------------------------------

# layer -> (the modules in it, by dotted prefix; the layers it builds on directly).
# A module may import its own layer and every layer reachable through `builds on`.
LAYERS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    # the ground: IR nodes, types, dtypes, spans, the printer; the error model; the
    # platform table (the hardware numbers the passes and the simulator read)
    "ir": (("pypto.ir", "pypto.errors", "pypto.diagnostics", "pypto.platform"), ()),
    # configuration names of the real toolchain (SoC family and its model, memory
    # planner); the SoC model is built from the platform table
    "config": (("pypto.backend", "pypto.pypto_core"), ("ir",)),
    # one registry entry per op: signature, type rule, unit, numpy implementation
    "ops": (("pypto.ops",), ("ir",)),
    # the pl vocabulary the parser reads: constructs, annotations, enums, op stubs,
    # and what the decorators make; the pld (multi-card) vocabulary likewise
    "language": (("pypto.language.dsl", "pypto.language.enums", "pypto.language.typing",
                  "pypto.language.ops", "pypto.language.kernels",
                  "pypto.language.distributed"), ("ops",)),
    "frontend": (("pypto.frontend",), ("language",)),
    "passes": (("pypto.passes",), ("ops",)),
    # the simulator runs what the passes made, reading their analyses (the buffer
    # estimate, the task graph) and their dataflow helpers
    "sim": (("pypto.sim",), ("passes",)),
    "compile": (("pypto.compile",), ("frontend", "passes")),
    # the runtime's DFX artifacts (deps.json, args dumps, swimlanes, ...) from a run
    "dfx": (("pypto.dfx",), ("sim",)),
    # the float64 shadow run and the error measures it shares with the comparators
    "precision": (("pypto.precision",), ("dfx",)),
    "golden": (("pypto.golden",), ("compile", "sim", "dfx", "precision")),
    "scale": (("pypto.scale",), ("golden",)),
    # the real toolchain's run configuration and result names, over the harness
    "runtime": (("pypto.runtime",), ("golden", "config")),
    # the front doors: `import pypto.language as pl` with its decorators, the CLI (and
    # its warm-start zygote, which runs it)
    "entry": (("pypto", "pypto.language", "pypto.language.jit", "pypto.cli", "pypto.zygote"),
              ("scale", "runtime")),
    "workbench": (("pypto_lab",), ("entry",)),
}

HEAVY = ("IPython", "ipywidgets", "plotly", "networkx", "torch", "dask")

# (importer, imported) -> why this function-level import is deliberate
LAZY_ALLOWED: dict[tuple[str, str], str] = {
    ("pypto.language.jit", "pypto.compile"):
        "the pl front door compiles on first use: `import pypto.language` stays cheap and "
        "the frontend below it never imports the front door",
    ("pypto.language.jit", "pypto.sim"):
        "the pl front door runs the simulator on the first call with arrays",
    ("pypto.scale.cluster", "distributed"):
        "Dask is the optional [scale] extra: imported only when a client is opened (a "
        "corpus run, a sweep) or a task asks for its worker",
    ("pypto.language", "pypto.frontend.text"):
        "pl.parse reads text with the frontend, imported on first use (`import pypto.language` "
        "stays cheap)",
    ("pypto.golden.data", "torch"):
        "torch is imported only when the caller hands us torch data",
}



# --- helpers -------------------------------------------------------------------------


def layer_of(module: str) -> str | None:
    """The layer whose longest prefix names `module`."""
    best, length = None, -1
    for name, (prefixes, _) in LAYERS.items():
        for prefix in prefixes:
            if (module == prefix or module.startswith(prefix + ".")) and len(prefix) > length:
                best, length = name, len(prefix)
    return best


def reachable(layer: str) -> set[str]:
    """`layer` and every layer it builds on, directly or not."""
    out, todo = set(), [layer]
    while todo:
        name = todo.pop()
        if name not in out:
            out.add(name)
            todo.extend(LAYERS[name][1])
    return out


@pytest.fixture(scope="module")
def graph() -> list[Import]:
    return imports()


def _show(records: list[Import]) -> str:
    return "\n".join(f"  {r.where()}: {r.importer} imports {r.target}"
                     f"{' (inside a function)' if r.lazy else ''}" for r in records)


# --- the rules -----------------------------------------------------------------------


def test_graph_sees_every_module_and_its_imports(graph):
    # The reader must see what Python sees: a few known edges, lazy and not.
    mods = modules()
    assert {"pypto.frontend.parser", "pypto.frontend.dispatch", "pypto.sim", "pypto_lab"} <= \
        set(mods)
    edges = {(r.importer, r.target, r.lazy) for r in graph}
    assert ("pypto.frontend.parser", "pypto.frontend.dispatch", False) in edges
    assert ("pypto.language.jit", "pypto.compile", True) in edges
    assert ("pypto.frontend.calls", "pypto.language.dsl", False) in edges  # from pl import dsl
    # `if TYPE_CHECKING:` imports never run and are no edge
    assert ("pypto.errors", "pypto.ir.span", False) not in edges


def test_no_import_circle(graph):
    bad = [f"{len(component)} modules: {', '.join(component)}\n"
           + _show(cycle_path(component, graph)) for component in circles(graph)]
    assert not bad, ("import circles (move the shared piece down a layer, or register into a "
                     "table that a lower module owns):\n" + "\n".join(bad))


def test_every_module_has_a_layer():
    missing = sorted(m for m in modules() if layer_of(m) is None)
    assert not missing, (f"modules in no layer: {missing}; add their package to LAYERS in "
                         f"{__file__}")


def test_layers_only_build_on_layers_below(graph):
    bad = []
    for r in graph:
        if not r.internal:
            continue
        src, dst = layer_of(r.importer), layer_of(r.target)
        if src is not None and dst is not None and dst not in reachable(src):
            bad.append(f"  {r.where()}: {r.importer} ({src}) imports {r.target} ({dst})")
    assert not bad, "imports against the layers (a layer may use only those below it):\n" + \
        "\n".join(bad)


def test_core_imports_no_heavy_package_at_module_level(graph):
    bad = [r for r in graph if r.importer.split(".")[0] == "pypto" and not r.internal
           and not r.lazy and r.target in HEAVY]
    assert not bad, f"pypto imports {HEAVY} only lazily, at a package boundary:\n" + _show(bad)


def test_function_level_imports_are_the_deliberate_ones(graph):
    lazy = [r for r in graph if r.lazy and r.importer.split(".")[0] == "pypto"]
    bad = [r for r in lazy if (r.importer, r.target) not in LAZY_ALLOWED]
    assert not bad, ("imports inside functions (import at module level; if the import must "
                     "be lazy, add it to LAZY_ALLOWED with the reason):\n" + _show(bad))


def test_allow_lists_name_real_imports(graph):
    # an entry whose import is gone is stale: the lists must say what the code does
    pairs = {(r.importer, r.target) for r in graph if r.lazy}
    stale = sorted(set(LAZY_ALLOWED) - pairs)
    assert not stale, f"LAZY_ALLOWED names imports that no longer exist: {stale}"
