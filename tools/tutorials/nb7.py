"""Tutorial 7. pypto-lib kernel files."""
from __future__ import annotations

from tutorials.cells import SETUP, code, md

NB7 = [
    md("""
    # 7 · Bringing a pypto-lib kernel file

    pypto-lib kernels live in files with a fixed shape: the `@pl.jit` kernel, a
    `build_tensor_specs()` function, a golden function, and a `__main__` block that calls
    `golden.run_jit` and exits non-zero on failure. `pypto-sim FILE.py` runs such a file
    unchanged on the simulator (its `import golden` resolves to `pypto.golden`).

    [`kernels/add_rms_norm.py`](kernels/add_rms_norm.py), next to this notebook, is a small
    file of that shape written for this tutorial: a residual add followed by RMSNorm.
    """),
    SETUP,
    code("""
    from pathlib import Path

    print(Path("kernels/add_rms_norm.py").read_text())
    """),
    md("""
    ## Run it from the shell

    In a terminal you would type `pypto-sim kernels/add_rms_norm.py`. From the notebook,
    `!` runs a shell command; `{sys.executable} -m pypto.cli` is the same program run by
    the Python this notebook runs on, so it works even when that environment's `bin/`
    is not on the shell's PATH (JupyterLab started as `venv/bin/jupyter lab`). The
    `[RUN]` lines are the harness's stages; the exit status is the file's own.
    """),
    code("""
    import sys

    !{sys.executable} -m pypto.cli kernels/add_rms_norm.py
    """, check=True),
    md("""
    The file's own options pass through (`--help` lists them). `pypto-sim` adds
    `-p a2a3sim` when the file takes a platform and none is given. The platform decides
    what memory nobody wrote holds, by the L2 guide's rule: allocator residue, NaN or
    garbage on `a2a3sim`, often zero on the `a2a3` device. A golden that asserts zeros
    over a `pl.Out` region the kernel never writes fails here, with the region and the
    fixes; `-p a2a3` reads it as zeros and passes with a warning naming the region,
    since there the pass is platform luck.
    """),
    code("""
    !{sys.executable} -m pypto.cli kernels/add_rms_norm.py --tokens 5
    """, check=True),
    md("""
    ## Inspect it in the workbench

    Import the file as a module. `install_golden_alias()` makes `import golden` resolve
    to `pypto.golden` in this process too, the way `pypto-sim` does, so the file's own
    `build_tensor_specs()` works here.
    """),
    code("""
    import sys
    from pypto.cli import install_golden_alias

    install_golden_alias()
    sys.path.insert(0, "kernels")
    import add_rms_norm as lib

    specs = lib.build_tensor_specs(tokens=40)
    golden = lib.golden_add_rms_norm
    [(s.name, s.shape) for s in specs]
    """, check=True),
    md("""
    A `%%pypto` cell only has to *name* the kernel: binding it to a variable is enough for
    the magic to compile it and, with `--run`, to run it with the file's specs and golden.
    """),
    code("""
    %%pypto --run specs golden --rtol 1e-3 --atol 1e-3
    kernel = lib.add_rms_norm
    """),
    code("""
    cell = _
    print(cell.run.report)
    """, check=True),
    md("""
    `pypto_lab.inspect` gathers every view of a kernel in one panel: the summary, the
    region graph, the IR after all passes, and, given a run, the report, the heatmap (all
    grey: every element within tolerance) and the estimated timeline.
    """),
    code("""
    pypto_lab.inspect(cell)
    """),
    md("""
    ## Where to go from here

    * Change `TOKEN_TILE` in the file and re-run the cell above: the summary's UB estimate
      and the timeline follow.
    * Break the kernel (make `y` a plain `pl.Tensor`, or stop the loop early) and look at
      the heatmap, as in notebook 2.
    * `python benchmarks/conformance.py` runs whole lists of pypto-lib files this way.
    """),
]
