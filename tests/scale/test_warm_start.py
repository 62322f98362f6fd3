"""Warm starts (`pypto.zygote`, `pypto.scale.warm`): a file forked from a
preloaded process behaves as a fresh `python -m pypto.cli FILE` and is watched, timed
out and limited like one."""
import json
import os
import shutil
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from scale_kernels import write

import pypto
from pypto import zygote
from pypto.scale import warm
from pypto.scale.corpus import CorpusFile
from pypto.scale.runfile import FileOptions, run_file

# every file below mentions torch (in a comment), so it may run warm either way
PROBE = textwrap.dedent('''\
    # torch: not imported here; the word lets the runner start this file warm
    import json, os, random, sys
    import numpy as np
    info = {"pid": os.getpid(), "ppid": os.getppid(), "sid": os.getsid(0),
            "cwd": os.getcwd(), "argv": sys.argv[1:], "path": sys.path[:2],
            "threads": os.environ.get("PYPTO_GOLDEN_NUM_THREADS"),
            "preloaded": "pypto.compile" in sys.modules,
            "np": float(np.random.rand()), "py": random.random(),
            # (the name in pieces: a file naming that module is one the runner may start warm)
            "tseed": (sys.modules["tor" + "ch"].initial_seed()
                      if "tor" + "ch" in sys.modules else None)}
    print("PROBE " + json.dumps(info))
    sys.exit(int(os.environ.get("PROBE_EXIT", "0")))
    ''')


def _gone(pid: int) -> bool:
    """No such process, or a zombie (killed; this sandbox's init may not reap it)."""
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] == "Z"
    except FileNotFoundError:
        return True


def _probe(tmp_path, name="probe.py", body=PROBE, **opts):
    f = tmp_path / name
    f.write_text(body)
    return run_file(CorpusFile(str(f), name), FileOptions(**opts)), f


def _info(result, out_file):
    return json.loads(next(ln for ln in result["output"].splitlines()
                           if ln.startswith("PROBE "))[6:])


@pytest.fixture
def show_output(monkeypatch):
    """runfile keeps a passing file's output only when it fails: make the probe fail."""
    monkeypatch.setenv("PROBE_EXIT", "5")


def test_a_warm_child_is_a_fresh_process_of_its_own(tmp_path, show_output):
    r1, f = _probe(tmp_path, threads=3)
    r2, _ = _probe(tmp_path, threads=3)
    assert r1["exit_code"] == 5 and r1["status"] == "fail"
    a, b = _info(r1, f), _info(r2, f)
    z = warm.zygote_for(str(f))
    assert z is not None and z.alive()
    assert a["preloaded"] and b["preloaded"], "the probe did not run warm"
    assert a["pid"] != b["pid"] and a["ppid"] == z.proc.pid  # forked by the zygote
    assert a["sid"] == a["pid"]  # a session of its own: its group can be killed
    assert a["cwd"].endswith("cwd") and a["cwd"] != b["cwd"]  # each in its own scratch
    # as `python -m pypto.cli FILE`: the file's directory, then the working directory
    assert a["argv"] == [] and a["path"] == [str(f.parent), a["cwd"]]
    assert a["threads"] == "3"
    # the random generators are reseeded per child, as in fresh processes
    assert a["np"] != b["np"] and a["py"] != b["py"]
    if a["tseed"] is not None:  # (torch preloaded by the zygote)
        fresh = subprocess.run([sys.executable, "-c", "import torch; "
                                "print(torch.initial_seed())"], capture_output=True,
                               text=True, check=True).stdout.strip()
        fixed = int(fresh) == zygote._TORCH_FIXED_SEED
        # torch's seed as a fresh process has it: the fixed one, or drawn per process
        assert (a["tseed"] == b["tseed"] == int(fresh)) if fixed else (a["tseed"] != b["tseed"])


def test_a_file_without_torch_runs_cold_when_torch_is_preloaded(tmp_path, show_output):
    pytest.importorskip("torch")
    r, f = _probe(tmp_path, body=PROBE.replace("# torch: not imported here; ", "# "))
    assert not _info(r, f)["preloaded"]
    assert _info(r, f)["ppid"] == os.getpid()  # started by the runner itself


def test_cold_runs_when_asked_and_looks_the_same(tmp_path, show_output, monkeypatch):
    w, f = _probe(tmp_path, threads=3)
    monkeypatch.setenv("PYPTO_SIM_COLD", "1")
    c, _ = _probe(tmp_path, threads=3)
    warm_, cold = _info(w, f), _info(c, f)
    assert warm_["preloaded"] and not cold["preloaded"]
    for key in ("argv", "threads"):
        assert warm_[key] == cold[key]
    assert cold["path"] == [str(f.parent), cold["cwd"]] and cold["sid"] == cold["pid"]


def test_a_warm_kernel_file_passes_and_fails_as_a_cold_one(tmp_path, monkeypatch):
    good = write(tmp_path, "good.py")
    bad = write(tmp_path, "bad.py", factor=3)
    for p in (good, bad):
        p.write_text("# torch\n" + p.read_text())
    results = {}
    for cold in ("", "1"):
        monkeypatch.setenv("PYPTO_SIM_COLD", cold)
        results[cold] = [run_file(CorpusFile(str(p), p.name)) for p in (good, bad)]
    for w, c in zip(results[""], results["1"]):  # (the inputs are random: no reasons)
        assert (w["status"], w["exit_code"]) == (c["status"], c["exit_code"])
        assert [r["verdict"] for r in w["runs"]] == [r["verdict"] for r in c["runs"]]
    assert [r["status"] for r in results[""]] == ["pass", "fail"]


def test_a_warm_file_past_its_timeout_is_killed_with_its_children(tmp_path):
    body = textwrap.dedent('''\
        # torch
        import subprocess, sys, time
        child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
        print("CHILD", child.pid, flush=True)
        time.sleep(60)
        ''')
    t0 = time.monotonic()
    r, _ = _probe(tmp_path, body=body, timeout=2.0)
    assert r["status"] == "timeout" and time.monotonic() - t0 < 30
    pid = int(next(ln for ln in r["output"].splitlines() if ln.startswith("CHILD")).split()[1])
    time.sleep(0.5)
    assert _gone(pid)  # its whole process group went


def test_a_warm_file_over_its_memory_limit_is_killed(tmp_path):
    body = "# torch\nimport numpy as np, time\nx = np.ones(400 << 20, np.uint8)\ntime.sleep(30)\n"
    r, _ = _probe(tmp_path, body=body, memory_limit=300 << 20, timeout=60.0)
    assert r["status"] == "killed" and "over the memory limit" in r["reason"]
    assert r["peak_mb"] is not None and r["peak_mb"] > 300


def test_a_crashing_warm_file_is_reported_and_the_zygote_lives_on(tmp_path, show_output):
    body = "# torch\nimport os, signal\nos.kill(os.getpid(), signal.SIGSEGV)\n"
    r, _ = _probe(tmp_path, name="crash.py", body=body)
    assert r["status"] == "killed" and "SIGSEGV" in r["reason"]
    again, f = _probe(tmp_path)
    assert _info(again, f)["preloaded"]


def test_the_zygote_ends_with_its_runner(tmp_path):
    script = textwrap.dedent(f'''\
        import sys, time
        sys.path.insert(0, {str(os.path.dirname(__file__))!r})
        from pypto.scale import warm
        z = warm.zygote_for({str(tmp_path / "x_torch.py")!r})
        print(z.proc.pid, flush=True)
        time.sleep(60)
        ''')
    (tmp_path / "x_torch.py").write_text("# torch\n")
    p = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    zpid = int(p.stdout.readline())
    p.kill()
    p.wait()
    for _ in range(100):
        if _gone(zpid):
            break
        time.sleep(0.1)
    else:
        raise AssertionError("the zygote outlived its runner")


def test_one_zygote_per_run(tmp_path, show_output):
    r1, f = _probe(tmp_path)
    first = warm.zygote_for(str(f))
    again = warm.zygote_for(str(f))
    assert first is again  # within one run: the same zygote
    other = run_file(CorpusFile(str(f), f.name), FileOptions(), run="another run")
    z = warm.zygote_for(str(f), "another run")
    assert z is not first and not first.alive()  # the old run's zygote is closed
    assert _info(other, f)["ppid"] == z.proc.pid  # the new run's file ran on the new one
    assert other["version"] == r1["version"] == pypto.__version__


def test_an_upgraded_package_is_served_by_a_new_zygote(tmp_path, monkeypatch):
    """pypto-lab upgraded between two files of one run: the second file runs with the
    new version, and each result says which it ran with."""
    site = tmp_path / "site"
    shutil.copytree(Path(pypto.__file__).parent, site / "pypto",
                    ignore=shutil.ignore_patterns("__pycache__"))
    monkeypatch.setenv("PYTHONPATH", str(site))
    f = tmp_path / "probe.py"
    f.write_text("# torch\nimport pypto\nprint('VERSION', pypto.__version__)\n")
    before = run_file(CorpusFile(str(f), f.name), run="upgrade")
    z = warm.zygote_for(str(f), "upgrade")
    assert z is not None and z.package == str(site / "pypto" / "__init__.py")
    init = site / "pypto" / "__init__.py"
    init.write_text(init.read_text().replace(f'__version__ = "{pypto.__version__}"',
                                             '__version__ = "99.0"'))
    after = run_file(CorpusFile(str(f), f.name), run="upgrade")
    assert before["version"] == pypto.__version__ and after["version"] == "99.0"
    assert not z.alive() and warm.zygote_for(str(f), "upgrade").version == "99.0"
