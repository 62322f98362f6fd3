"""pypto-sim on a small kernel file written the way pypto-lib writes them."""
import subprocess
import sys
import textwrap

import pytest
from golden_helpers import needs_sim

from pypto.cli import file_argv, install_golden_alias

KERNEL = textwrap.dedent('''
    import pypto.language as pl

    N = 32


    @pl.jit
    def twice(
        x: pl.Tensor[[N, N], pl.FP32],
        y: pl.Out[pl.Tensor[[N, N], pl.FP32]],
    ):
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="twice"):
            t = x[0:N, :]
            y[0:N, :] = pl.add(t, t)
        return y


    def build_specs():
        import numpy as np
        from golden import TensorSpec

        return [TensorSpec("x", [N, N], np.float32, init_value=np.random.randn),
                TensorSpec("y", [N, N], np.float32, is_output=True)]


    if __name__ == "__main__":
        import argparse
        import sys
        from golden import run_jit

        parser = argparse.ArgumentParser()
        parser.add_argument("-p", "--platform", type=str, default="a2a3",
                            choices=["a2a3", "a2a3sim", "a5", "a5sim"])
        parser.add_argument("--wrong", action="store_true")
        args = parser.parse_args()
        print("PLATFORM", args.platform)
        factor = 3 if args.wrong else 2

        def golden(v):
            v["y"][:] = v["x"] * factor

        result = run_jit(fn=twice, specs=build_specs(), golden_fn=golden,
                         runtime_cfg=dict(platform=args.platform, device_id=0),
                         rtol=1e-5, atol=1e-5)
        if not result.passed:
            if result.error:
                print(result.error)
            raise SystemExit(1)
''')


def pypto_sim(path, *args, cwd):
    return subprocess.run([sys.executable, "-m", "pypto.cli", str(path), *args], cwd=cwd,
                          capture_output=True, text=True, timeout=300)


@pytest.fixture
def kernel_file(tmp_path):
    p = tmp_path / "twice.py"
    p.write_text(KERNEL)
    return p


def test_argv_gets_a_sim_platform(kernel_file):
    assert file_argv(kernel_file, []) == [str(kernel_file), "-p", "a2a3sim"]
    assert file_argv(kernel_file, ["--wrong"]) == [str(kernel_file), "-p", "a2a3sim", "--wrong"]
    for given in (["-p", "a5sim"], ["--platform=a5"], ["-pa2a3"], ["--platform", "a2a3"]):
        assert file_argv(kernel_file, given) == [str(kernel_file), *given]


def test_argv_left_alone_without_platform_option(tmp_path):
    p = tmp_path / "plain.py"
    p.write_text("print('hi')\n")
    assert file_argv(p, ["x"]) == [str(p), "x"]


def test_golden_alias():
    install_golden_alias()
    import golden
    import golden.validation

    import pypto.golden

    assert golden is pypto.golden
    assert golden.validation.ratio_allclose is pypto.golden.ratio_allclose


def test_usage_and_missing_file(tmp_path):
    from pypto.cli import main

    assert main([]) == 2
    assert main(["--help"]) == 0
    assert main([str(tmp_path / "nope.py")]) == 2


def test_exit_status_is_the_files(tmp_path):
    p = tmp_path / "exits.py"
    p.write_text("import sys\nprint(sys.argv[1:])\nraise SystemExit(int(sys.argv[1]))\n")
    for code in ("1", "5"):
        proc = pypto_sim(p, code, cwd=tmp_path)
        assert proc.returncode == int(code)
        assert f"['{code}']" in proc.stdout
    # a clean exit before any kernel ran proves nothing: 3, "nothing was simulated"
    proc = pypto_sim(p, "0", cwd=tmp_path)
    assert proc.returncode == 3 and "nothing was simulated" in proc.stderr
    boom = tmp_path / "boom.py"
    boom.write_text("raise RuntimeError('kaput')\n")
    proc = pypto_sim(boom, cwd=tmp_path)
    assert proc.returncode == 1 and "RuntimeError: kaput" in proc.stderr


def test_sibling_imports_resolve(tmp_path):
    (tmp_path / "helper_mod.py").write_text("VALUE = 41\n")
    p = tmp_path / "main_file.py"
    p.write_text("from helper_mod import VALUE\nraise SystemExit(7 if VALUE == 41 else 5)\n")
    assert pypto_sim(p, cwd="/").returncode == 7


@needs_sim
def test_kernel_file_passes(kernel_file, tmp_path):
    proc = pypto_sim(kernel_file, cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "PLATFORM a2a3sim" in proc.stdout and "[RUN] PASS" in proc.stdout


@needs_sim
def test_kernel_file_mismatch_exits_1(kernel_file, tmp_path):
    proc = pypto_sim(kernel_file, "--wrong", cwd=tmp_path)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "Output(s) does not match golden: ['y']" in proc.stdout


@needs_sim
def test_hardware_platform_maps_to_sim(kernel_file, tmp_path):
    proc = pypto_sim(kernel_file, "-p", "a2a3", cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "PLATFORM a2a3" in proc.stdout
    assert "a2a3 runs on its simulator twin a2a3sim" in proc.stdout


def test_torch_threads_follow_the_environment(tmp_path):
    pytest.importorskip("torch")
    import os

    p = tmp_path / "threads.py"
    p.write_text("import torch\nprint('THREADS', torch.get_num_threads())\n")
    env = dict(os.environ, PYPTO_GOLDEN_NUM_THREADS="1")
    proc = subprocess.run([sys.executable, "-m", "pypto.cli", str(p)], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 3, proc.stderr  # no kernel in it: nothing was simulated
    assert "THREADS 1" in proc.stdout


OOB_KERNEL = """import numpy as np
import pypto.language as pl


@pl.jit
def shifted(x: pl.Tensor[[8, 16], pl.FP32], off: pl.Scalar[pl.INDEX],
            y: pl.Out[pl.Tensor[[8, 16], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="shift"):
        y[0:8, :] = pl.exp(x[off:off + 8, :])
    return y


if __name__ == "__main__":
    x = np.zeros((8, 16), np.float32)
    shifted(x, 4, np.zeros_like(x))
"""


@needs_sim
def test_simulation_fault_shows_the_diagnostic_without_pypto_frames(tmp_path):
    p = tmp_path / "oob.py"
    p.write_text(OOB_KERNEL)
    proc = pypto_sim(p, cwd=tmp_path)
    assert proc.returncode == 1
    err = proc.stderr
    assert "error[S000]: out-of-bounds slice" in err
    assert f"--> {p}:9:28" in err  # the window read inside the region, in the user's file
    assert f'File "{p}", line 15' in err  # the kernel file's own frame is kept
    assert "pypto/sim" not in err and "pypto/golden" not in err and "pypto/cli" not in err


@needs_sim
def test_unwritten_tail_fails_on_the_sim_platform_and_passes_on_the_device(tmp_path):
    # the same file with the kernel writing only the first half of y, golden zeros there:
    # the guide's rule, residue on a2a3sim (NaN) and "often zero" on a2a3
    src = KERNEL.replace("y[0:N, :] = pl.add(t, t)", "y[0:16, :] = pl.add(t[0:16, :], t[0:16, :])")
    src = src.replace('v["y"][:] = v["x"] * factor', 'v["y"][:16] = v["x"][:16] * factor')
    p = tmp_path / "half.py"
    p.write_text(src)
    sim = pypto_sim(p, cwd=tmp_path)
    assert sim.returncode == 1, sim.stdout + sim.stderr
    assert ("unwritten pl.Out region: indices 16:32 along axis 0, 512 element(s) never "
            "written (last writer = none); every mismatch lies there") in sim.stdout
    assert "the golden asserts zeros there, a value the kernel never promised" in sim.stdout
    device = pypto_sim(p, "-p", "a2a3", cwd=tmp_path)
    assert device.returncode == 0, device.stdout + device.stderr
    assert ("[RUN]   warning: 'y' passes only because fresh memory on a2a3 reads as zeros: "
            "512 element(s) indices 16:32 along axis 0 are never written") in device.stdout
