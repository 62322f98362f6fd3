"""benchmarks/big_kernels.py --lean: a file's saved inputs replayed without its generator."""
import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "benchmarks" / "big_kernels.py"

# Its generator leaves a line in GEN_LOG per call, so the test sees whether it ran; the
# input is random, so a replay that drew new inputs would disagree with the saved golden.
KERNEL = textwrap.dedent('''
    import pypto.language as pl

    N = 32
    GEN_LOG = __file__ + ".gen"


    @pl.jit
    def triple(x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="triple"):
            y[0:N, :] = pl.mul(x[0:N, :], 3.0)
        return y


    def build_tensor_specs(scale):
        import numpy as np
        from golden import TensorSpec
        with open(GEN_LOG, "a") as f:
            f.write(f"{scale}\\n")
        x = np.random.default_rng().standard_normal((N, N)).astype(np.float32) * scale
        return [TensorSpec("x", [N, N], np.float32, init_value=x),
                TensorSpec("y", [N, N], np.float32, is_output=True)]


    if __name__ == "__main__":
        from golden import run_jit

        def golden(v):
            v["y"][:] = v["x"] * 3

        for scale in (1.0, 100.0):
            result = run_jit(fn=triple, specs=build_tensor_specs(scale), golden_fn=golden,
                             rtol=0, atol=0)
            if not result.passed:
                raise SystemExit(1)
''')


def _bench(root: Path, cache: Path, *extra: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(BENCH), str(root), "kernels/triple.py",
                           "--cache", str(cache), *extra], capture_output=True, text=True,
                          timeout=300)


def test_lean_runs_replay_the_saved_inputs_without_the_generator(tmp_path):
    root = tmp_path / "lib"
    (root / "kernels").mkdir(parents=True)
    kernel = root / "kernels" / "triple.py"
    kernel.write_text(KERNEL)
    gen_log = Path(str(kernel) + ".gen")
    cache = tmp_path / "cache"

    p = _bench(root, cache, "--lean")  # nothing saved yet: the fill run draws the inputs
    assert p.returncode == 0, p.stderr
    # the fill run drew them (once per harness run); the --lean run after it did not
    assert gen_log.read_text().split() == ["1.0", "100.0"]
    saved = sorted(d.name for d in (cache / "kernels__triple").iterdir())
    assert saved == ["1", "2"]
    specs = json.loads((cache / "kernels__triple" / "2" / "specs.json").read_text())
    assert [(s["name"], s["shape"], s["is_output"], s["has_init"]) for s in specs] == \
        [("x", [32, 32], False, True), ("y", [32, 32], True, False)]

    gen_log.unlink()
    out = tmp_path / "lean.json"
    p = _bench(root, cache, "--lean", "--json", str(out))
    assert p.returncode == 0, p.stderr
    assert not gen_log.exists()  # the generator never ran
    rep = json.loads(out.read_text())[str(kernel)]["this"][0]
    assert rep["exit"] == 0
    # both runs replayed and passed bit-exactly: the saved inputs matched their goldens
    assert [r["passed"] for r in rep["runs"]] == [True, True]


def _replay_specs():
    """benchmarks/replay_specs.py (a script's neighbour, not a package module)."""
    sys.path.insert(0, str(BENCH.parent))
    try:
        import replay_specs
    finally:
        sys.path.pop(0)
    return replay_specs


def test_lean_needs_a_saved_run_and_says_so(tmp_path):
    replay_specs = _replay_specs()
    run_dir = tmp_path / "1"
    run_dir.mkdir()
    with pytest.raises(FileNotFoundError, match=r"specs\.json is missing: run big_kernels"
                       r"\.py once without --lean"):
        replay_specs.load(run_dir)


def test_lean_refuses_a_file_without_the_generator_call(tmp_path):
    replay_specs = _replay_specs()
    f = tmp_path / "plain.py"
    f.write_text("if __name__ == '__main__':\n    specs = make_specs()\n")
    with pytest.raises(RuntimeError) as err:
        replay_specs.run_path(str(f), [])
    assert str(err.value) == (f"{f}: no `build_tensor_specs()` call under `if __name__ == "
                              "'__main__':` to replay")
