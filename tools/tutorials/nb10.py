"""Tutorial 10. Will it fit? A kernel that outgrows the runtime's ring heap at a longer
sequence, diagnosed at its scope's line and fixed with `pl.scope()`."""
from __future__ import annotations

from tutorials.cells import SETUP, code, md

NB10 = [
    md("""
    # 10 · Will it fit? The runtime's ring heaps

    A tensor the orchestration allocates with `pl.create_tensor` does not come from a
    general allocator on the device. The runtime carves it out of a **ring heap**: one of
    four rings, chosen by how deeply the allocating scope is nested (`pl.scope()`, and the
    body of every loop of an auto-scoped function, each add one level). A ring hands out
    memory at its head and takes it back at its tail, and it can take back a tensor only
    once the tasks using it are done **and the scope that allocated it has ended**. The
    ring also holds a slot for every task in its task window.

    A kernel that keeps too much alive in one open scope stops on the device with an
    `orch_error_code` (2 is `HEAP_RING_DEADLOCK`), usually after minutes of setup, and only
    at the sequence length that crosses the line. pypto-lib's kernels set the capacities
    with `PTO2_RING_HEAP` and friends. The simulator replays every traced run through the
    same rings, so the same kernel fails here, with the scope's line.

    This notebook makes a prefill-like kernel outgrow a small heap, finds the scope that
    holds the memory, and fixes it.
    """),
    SETUP,
    code("""
    import os
    from pypto.golden import TensorSpec

    # a 1 MiB heap per ring, set the way pypto-lib's files set it (before the run)
    os.environ["PTO2_RING_HEAP"] = str(1 << 20)

    D, CHUNK = 128, 64
    S = pl.dynamic("S")  # the sequence length: one kernel for every length

    def specs_for(seq):
        rng = np.random.default_rng(0)
        return [TensorSpec("x", [seq, D], np.float32,
                           init_value=lambda: rng.standard_normal((seq, D)) * 0.05),
                TensorSpec("w", [D, D], np.float32,
                           init_value=lambda: rng.standard_normal((D, D)) * 0.05),
                TensorSpec("y", [seq, D], np.float32, is_output=True)]

    def golden(values):
        values["y"][:] = np.exp(values["x"] @ values["w"])
    """),
    md("""
    ## A stage scope around the whole loop

    `auto_scope=False` turns off the scope per loop body, so the kernel decides where its
    scopes are, as many pypto-lib kernels do. Here one `pl.scope()` wraps the whole stage:
    each chunk allocates an intermediate `h` (64×128 floats, 32 KiB), projects into it and
    activates it. Every `h` belongs to that one scope, so none is taken back before the
    stage ends. The rings view (`--show rings`) draws what each ring holds after every
    submit, against its capacity.
    """),
    code("""
    %%pypto --run specs golden --rtol 1e-3 --atol 1e-3 --show rings
    @pl.jit(auto_scope=False)
    def prefill(x: pl.Tensor[[S, D], pl.FP32], w: pl.Tensor[[D, D], pl.FP32],
                y: pl.Out[pl.Tensor[[S, D], pl.FP32]]):
        seq = pl.tensor.dim(x, 0)
        with pl.scope():  # the stage: every chunk's h lives until this scope ends
            for c in pl.range(0, seq, CHUNK):
                h = pl.create_tensor([CHUNK, D], dtype=pl.FP32)
                with pl.at(level=pl.Level.CORE_GROUP, name_hint="proj"):
                    h[:, :] = pl.matmul(x[c : c + CHUNK, :], w[:, :])
                with pl.at(level=pl.Level.CORE_GROUP, name_hint="act"):
                    y[c : c + CHUNK, :] = pl.exp(h[:, :])
        return y

    specs = specs_for(1024)
    """),
    md("""
    At 1,024 tokens it passes: 16 chunks of 32 KiB, 512 KiB at the peak, half the heap. The
    staircase is the warning: the heap held grows with the sequence. The numbers behind the
    figure are the core's `RingReport` (`run.rings`, one per rank):
    """),
    code("""
    report = _.kernels[0].run.rings[0]
    peak = report.heap_peak[1]
    print(f"ring 1 heap peak: {peak.value // 1024} KiB of {report.capacities.heap[1] // 1024} KiB")
    print("deadlock:", report.deadlock)
    """, check=True),
    md("""
    ## Four times the sequence

    The same kernel at 4,096 tokens (`--kernel prefill` runs the kernel of the cell above;
    this cell only changes the specs). On the device this is the run that dies after its
    setup; here it fails with the runtime's error name, the submit that did not fit and the
    innermost open scope: line 6 of the kernel's cell, the stage scope.
    """),
    code("""
    %%pypto --run specs golden --kernel prefill --rtol 1e-3 --atol 1e-3 --show rings
    specs = specs_for(4096)
    """),
    code("""
    run = _.kernels[0].run
    print(run.error.split(";")[0])
    dead = run.rings[0].deadlock
    print(f"{dead.name} on ring {dead.ring}: held {dead.used // 1024} KiB, "
          f"needed {dead.needed // 1024} KiB more, at submit {dead.submit.pos}")
    """, check=True),
    md("""
    ## What would it take? Capacities without re-running

    The replay keeps the run's submits, so `what_if` answers "which heap would this need"
    without simulating again. The stage holds every chunk, so the heap it needs grows with
    the sequence: 2 MiB here, 8 MiB at 16k tokens.
    """),
    code("""
    from pypto.sim.runtime.rings import RingCapacities

    report = run.rings[0]
    for mib in (1, 2, 4):
        caps = RingCapacities.resolve(ring_heap=mib << 20)
        verdict = report.what_if(caps).deadlock
        print(f"{mib} MiB heap:", "fits" if verdict is None else verdict.name)
    """, check=True),
    md("""
    ## The fix: one scope per chunk

    Raising the capacity only moves the line. Nothing after a chunk reads its `h`, so the
    scope can end with the chunk: move `pl.scope()` inside the loop. The ring takes each `h`
    back once its chunk is done, and the heap held stays at one chunk whatever the length.
    """),
    code("""
    %%pypto --run specs golden --rtol 1e-3 --atol 1e-3 --show rings
    @pl.jit(auto_scope=False)
    def prefill_scoped(x: pl.Tensor[[S, D], pl.FP32], w: pl.Tensor[[D, D], pl.FP32],
                       y: pl.Out[pl.Tensor[[S, D], pl.FP32]]):
        seq = pl.tensor.dim(x, 0)
        for c in pl.range(0, seq, CHUNK):
            with pl.scope():  # one chunk: its h is taken back when the chunk is done
                h = pl.create_tensor([CHUNK, D], dtype=pl.FP32)
                with pl.at(level=pl.Level.CORE_GROUP, name_hint="proj"):
                    h[:, :] = pl.matmul(x[c : c + CHUNK, :], w[:, :])
                with pl.at(level=pl.Level.CORE_GROUP, name_hint="act"):
                    y[c : c + CHUNK, :] = pl.exp(h[:, :])
        return y

    specs = specs_for(4096)
    """),
    code("""
    run = _.kernels[0].run
    peak = max(p.value for p in run.rings[0].heap_peak)
    print("passed:", run.passed, "| heap peak of any ring:", peak // 1024, "KiB")
    """, check=True),
    md("""
    ## The device's own record: scope_stats.jsonl

    With `runtime_cfg={"enable_scope_stats": True}` the harness writes
    `dfx_outputs/scope_stats/scope_stats.jsonl` in the runtime's version-6 format: each
    scope's begin and end with what its ring held. simpler's viewer draws it:
    `python -m simpler_setup.tools.scope_stats_plot <that file>`.
    """),
    code("""
    import json
    import tempfile
    from pathlib import Path
    from pypto.golden import run_jit

    out = Path(tempfile.mkdtemp())
    result = run_jit(prefill_scoped, specs_for(1024), golden, rtol=1e-3, atol=1e-3,
                     runtime_cfg={"enable_scope_stats": True},
                     compile_cfg={"output_dir": str(out)}, verbose=False)
    lines = (out / "dfx_outputs" / "scope_stats" / "scope_stats.jsonl").read_text().splitlines()
    meta = json.loads(lines[0])
    print("version", meta["version"], "| records", meta["total"], "| heap_max", meta["heap_max"])
    """, check=True),
    md("""
    **What to take away.** A tensor lives until its scope ends, not until its last use.
    When a kernel must run at lengths you cannot try on the device, run it here at a
    longer length with the device's capacities (`PTO2_RING_HEAP`, `runtime_cfg["ring_heap"]`)
    and look at the staircase. An allocation that grows with the sequence (one tensor
    holding every token) fails the same way, with "more than its whole heap": tile that
    stage instead.

    **Back to:** [1 · First kernel](01_first_kernel.ipynb).
    """),
]
