"""Simulate time, peak memory and batching of pypto-lib's big kernel files.

    python benchmarks/big_kernels.py CHECKOUT [PATTERN ...] [--list FILE] [--cache DIR]
                                     [--vs OTHER_TREE] [--rounds N] [--json OUT] [--lean]

Each file runs in a fresh process through `pypto-sim` (its own `__main__`, `-p a2a3sim`,
the harness's trace and checks), with two changes that make the simulate stage the
thing measured: the first run of a file saves its inputs and goldens under `--cache`
(the harness's `save_data`), later runs replay them (`golden_data`), so torch's golden
is computed once and every run simulates the same inputs. Per file and run it reports
the harness's simulate seconds, the process's peak RSS before and after the simulate
stage, `batch_stats` and `batch_refusals` (why regions ran block by block).

`--vs TREE` runs every file also with another checkout of this project first on
`PYTHONPATH` (e.g. `git archive main` unpacked in a scratch directory), alternating the
two per round, so before / after are measured back to back under the same load; the
table gives their ratio. The machine is noisy: quote medians and ratios.

`--lean` replays the saved inputs without running the file's own input generator
(`replay_specs.py`): the peak RSS is then the run's own, not the generator's.
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

import replay_specs  # (beside this script)

for _v in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_v, "1")

_TAG = "BIGKERNEL "


def _peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def _region_seconds(sim) -> dict:
    """Host seconds per region name (its tasks' `seconds`, summed) of a traced run:
    {name: [tasks, seconds, blocks]}."""
    out: dict = {}
    trace = getattr(sim, "trace", None)
    for t in getattr(trace, "tasks", None) or ():
        if t.kind in ("at", "spmd"):
            g = out.setdefault(t.name, [0, 0.0, 0])
            g[0] += 1
            g[1] += t.seconds
            g[2] += t.blocks
    return out


def _one(path: Path, cache: Path, profile: str | None = None, lean: bool = False) -> int:
    """Run one file in this process (the child side), print one JSON line. `lean`: from
    its saved inputs without running its input generator (`replay_specs`)."""
    import runpy

    import pypto.cli as cli
    import pypto.golden as golden
    import pypto.golden.runner as runner

    report: dict = {"file": str(path), "runs": []}
    calls = [0]
    real_simulate = runner._simulate

    def simulate(*args, **kwargs):
        before = _peak_mb()
        t0, c0 = time.perf_counter(), time.process_time()
        row: dict = {"rss_before_mb": before}
        report["runs"].append(row)
        prof = None
        if profile:
            import cProfile
            prof = cProfile.Profile()
        try:
            sim = prof.runcall(real_simulate, *args, **kwargs) if prof is not None else \
                real_simulate(*args, **kwargs)
        except BaseException as exc:
            row["error"] = f"{type(exc).__name__}: {str(exc)[:200]}"
            raise
        finally:
            row["simulate_s"] = time.perf_counter() - t0
            # CPU seconds of the process (BLAS pinned to one thread): what a loaded
            # machine's preemption does not add, so before / after compare across load
            row["simulate_cpu_s"] = time.process_time() - c0
            row["peak_mb"] = _peak_mb()
            if prof is not None:
                prof.dump_stats(f"{profile}.{len(report['runs']) - 1}")
        row.update(
            batch=dict(getattr(sim, "batch_stats", None) or {}),
            refusals=dict(getattr(sim, "batch_refusals", None) or {}),
            tasks=len(sim.trace.tasks) if getattr(sim, "trace", None) is not None else None,
            regions=_region_seconds(sim))
        return sim

    if lean:
        runs = _saved_runs(cache, path)
        runpy.run_path = lambda p, run_name="__main__": replay_specs.run_path(p, runs,
                                                                             run_name)

    def cached(real):
        def harness(*args, **kwargs):
            calls[0] += 1
            d = cache / f"{path.parent.name}__{path.stem}" / str(calls[0])
            if (d / "done").is_file():
                kwargs["golden_data"] = str(d / "data")
            else:
                kwargs["save_data"] = True
                cfg = dict(kwargs.get("compile_cfg") or {})
                cfg["output_dir"] = str(d)
                kwargs["compile_cfg"] = cfg
            res = real(*args, **kwargs)
            if not (d / "done").is_file() and (d / "data").is_dir():
                specs = kwargs["specs"] if "specs" in kwargs else args[1]
                replay_specs.save(specs, d)  # (for --lean runs)
                (d / "done").write_text("")
            report["runs"] and report["runs"][-1].update(
                passed=bool(res.passed), stages=dict(res.stages or {}))
            return res
        return harness

    runner._simulate = simulate
    for mod in (golden, runner):
        mod.run = cached(runner.run)
        mod.run_jit = cached(runner.run_jit)
    t0 = time.perf_counter()
    code = cli.main([str(path)])
    report.update(exit=code, total_s=time.perf_counter() - t0, peak_mb=_peak_mb())
    print(_TAG + json.dumps(report), flush=True)
    return code


def _saved_runs(cache: Path, path: Path) -> list[Path]:
    """The run directories the cache holds for a file, in the order its harness ran."""
    base = cache / f"{path.parent.name}__{path.stem}"
    runs = sorted((d for d in base.glob("*") if d.name.isdigit()), key=lambda d: int(d.name))
    if not runs or not all((d / "done").is_file() for d in runs):
        raise FileNotFoundError(f"{base}: no complete saved runs; run without --lean first")
    return runs


def _child(path: Path, cache: Path, tree: str | None, timeout: float,
           lean: bool = False) -> dict:
    env = dict(os.environ)
    if tree:
        env["PYTHONPATH"] = tree + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH")
                                    else "")
    cmd = [sys.executable, __file__, "--one", str(path), "--cache", str(cache)] + \
        (["--lean"] if lean else [])
    t0 = time.perf_counter()
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env,
                           cwd=cache)
    except subprocess.TimeoutExpired:
        return {"file": str(path), "exit": "timeout", "wall_s": timeout, "runs": []}
    for line in p.stdout.splitlines():
        if line.startswith(_TAG):
            rep = json.loads(line[len(_TAG):])
            rep["wall_s"] = time.perf_counter() - t0
            return rep
    tail = (p.stdout + p.stderr).strip().splitlines()[-3:]
    return {"file": str(path), "exit": p.returncode, "wall_s": time.perf_counter() - t0,
            "runs": [], "error": " | ".join(tail)}


def _sim_s(rep: dict) -> float | None:
    runs = rep.get("runs") or []
    return sum(r["simulate_s"] for r in runs) if runs else None


def _sim_cpu_s(rep: dict) -> float | None:
    runs = rep.get("runs") or []
    if not runs or any("simulate_cpu_s" not in r for r in runs):
        return None
    return sum(r["simulate_cpu_s"] for r in runs)


def _fmt(x: float | None, spec: str = ".1f") -> str:
    return "-" if x is None else format(x, spec)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("checkout", nargs="?")
    ap.add_argument("patterns", nargs="*")
    ap.add_argument("--list")
    ap.add_argument("--cache", default=os.path.join(os.environ.get("TMPDIR", "/tmp"),
                                                     "pypto_big_kernels"))
    ap.add_argument("--vs", help="another checkout of this project to compare with")
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("--timeout", type=float, default=1800)
    ap.add_argument("--json")
    ap.add_argument("--lean", action="store_true",
                    help="replay the saved inputs without running the file's own input "
                         "generator (its build_tensor_specs; see replay_specs.py), so the "
                         "peak is the run's own")
    ap.add_argument("--one", help=argparse.SUPPRESS)
    ap.add_argument("--profile", help="with --one: cProfile the simulate stage into this "
                                      "file (.N per run)")
    ap.add_argument("--regions", type=int, default=0, metavar="N",
                    help="after the table: the N costliest regions over all files (host "
                         "seconds of their tasks, this tree's first run) and, for each that "
                         "ran block by block, why (batch_refusals)")
    a = ap.parse_args(argv)
    cache = Path(a.cache).resolve()
    cache.mkdir(parents=True, exist_ok=True)
    if a.one:
        return _one(Path(a.one).resolve(), cache, a.profile, a.lean)
    if not a.checkout:
        ap.error("CHECKOUT is required")
    root = Path(a.checkout).resolve()
    pats = list(a.patterns)
    if a.list:
        pats += [ln.strip() for ln in Path(a.list).read_text().splitlines()
                 if ln.strip() and not ln.startswith("#")]
    files = [root / p for p in pats]
    trees = [("this", None)] + ([("vs", str(Path(a.vs).resolve()))] if a.vs else [])
    results: dict = {f: {k: [] for k, _ in trees} for f in map(str, files)}
    for f in files:
        if not any((cache / f"{f.parent.name}__{f.stem}").glob("*/done")):
            _child(f, cache, None, a.timeout)  # fill the cache (computes the golden)
        for _ in range(a.rounds):
            for k, tree in reversed(trees):
                rep = _child(f, cache, tree, a.timeout, a.lean)
                results[str(f)][k].append(rep)
                sims = _sim_s(rep)
                peak = max((r["peak_mb"] for r in rep["runs"]), default=None)
                print(f"{f.relative_to(root)} [{k}] exit={rep.get('exit')} simulate="
                      f"{_fmt(sims)} s cpu={_fmt(_sim_cpu_s(rep))} s peak={_fmt(peak, '.0f')} MB "
                      f"{rep.get('error', '')}", flush=True)
    print()
    head = "| file | simulate s | CPU s | peak MB | batched / fallback | refusals |"
    if a.vs:
        head = ("| file | simulate s (vs) | simulate s | ratio | CPU s (vs) | CPU s | CPU ratio | "
                "peak MB (vs) | peak MB | refusals (vs) | refusals |")
    print(head)
    print("|" + "---|" * (head.count("|") - 1))
    tot = {k: 0.0 for k, _ in trees}
    tot_cpu = {k: 0.0 for k, _ in trees}
    for f in map(str, files):
        cells = {}
        for k, _ in trees:
            reps = results[f][k]
            sims = [s for s in map(_sim_s, reps) if s is not None]
            med = statistics.median(sims) if sims else None
            tot[k] += med or 0.0
            cpus = [c for c in map(_sim_cpu_s, reps) if c is not None]
            cpu = statistics.median(cpus) if cpus else None
            tot_cpu[k] += cpu or 0.0
            runs = [r for rep in reps for r in rep["runs"]]
            peak = max((r["peak_mb"] for r in runs), default=None)
            refs = len({n for r in runs for n in r.get("refusals", {})})
            bat = sum(r.get("batch", {}).get("batched", 0) for r in runs[:1])
            fb = sum(r.get("batch", {}).get("fallback", 0) for r in runs[:1])
            cells[k] = (med, peak, refs, f"{bat} / {fb}", cpu)
        name = str(Path(f).relative_to(root))
        if a.vs:
            v, t = cells["vs"], cells["this"]
            ratio = t[0] / v[0] if t[0] and v[0] else None
            cpu_ratio = t[4] / v[4] if t[4] and v[4] else None
            print(f"| `{name}` | {_fmt(v[0])} | {_fmt(t[0])} | {_fmt(ratio, '.2f')} | "
                  f"{_fmt(v[4])} | {_fmt(t[4])} | {_fmt(cpu_ratio, '.2f')} | "
                  f"{_fmt(v[1], '.0f')} | {_fmt(t[1], '.0f')} | {v[2]} | {t[2]} |")
        else:
            t = cells["this"]
            print(f"| `{name}` | {_fmt(t[0])} | {_fmt(t[4])} | {_fmt(t[1], '.0f')} | {t[3]} | "
                  f"{t[2]} |")
    print("total simulate s: " + ", ".join(f"{k} {v:.1f}" for k, v in tot.items()))
    print("total simulate CPU s: " + ", ".join(f"{k} {v:.1f}" for k, v in tot_cpu.items()))
    if a.regions:
        _print_regions(results, root, a.regions)
    if a.json:
        Path(a.json).write_text(json.dumps(results, indent=1))
    return 0


def _print_regions(results: dict, root: Path, n: int) -> None:
    """The costliest regions of this tree's first runs, with their refusal reasons (a
    region is named `<entry>_<name_hint>` in `batch_refusals`)."""
    rows = []
    for f, by_tree in results.items():
        runs = [r for rep in by_tree["this"][:1] for r in rep["runs"]]
        for run in runs:
            refusals = run.get("refusals", {})
            for name, (tasks, secs, blocks) in run.get("regions", {}).items():
                why = next((v for k, v in refusals.items()
                            if k == name or k.endswith("_" + name)), "")
                rows.append((secs, str(Path(f).relative_to(root)), name, tasks, blocks, why))
    rows.sort(reverse=True)
    print(f"\nthe {n} costliest regions (host s of their tasks, traced):")
    print("| s | file | region | tasks | blocks | refusal |")
    print("|---|---|---|---|---|---|")
    for secs, f, name, tasks, blocks, why in rows[:n]:
        print(f"| {secs:.2f} | `{f}` | {name} | {tasks} | {blocks} | {why or '(no refusal)'} |")


if __name__ == "__main__":
    raise SystemExit(main())
