"""A corpus run on a shared, real Dask cluster (`dask scheduler` / `dask worker`
processes on 127.0.0.1) when things go wrong around it (issue 31 items 1 and 4): two
runs overlapping on one scheduler, the scheduler killed mid-run, a scheduler with no
workers, pypto-sim interrupted, bad --scheduler values."""
import json
import os
import signal
import subprocess
import sys
import time

import pytest

pytest.importorskip("distributed")

from dask_cluster import Cluster
from scale_kernels import write

import pypto
from pypto.scale.conformance import task_key
from pypto.scale.corpus import CorpusFile
from pypto.scale.runfile import FileOptions


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    c = Cluster(tmp_path_factory.mktemp("dask-shared"), workers=2)
    yield c
    c.close()


def start(*args, cwd):
    """pypto-sim in the background, its output merged and read line by line."""
    return subprocess.Popen([sys.executable, "-m", "pypto.cli", *map(str, args)], cwd=cwd,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            start_new_session=True)


def read_until(proc, predicate, lines, timeout=120.0):
    """Read `proc`'s lines into `lines` until one satisfies `predicate` (or fail)."""
    t0 = time.monotonic()
    for line in proc.stdout:
        lines.append(line)
        if predicate(line):
            return line
        if time.monotonic() - t0 > timeout:
            break
    raise AssertionError("never seen; output:\n" + "".join(lines))


def finish(proc, lines, timeout=120):
    try:
        lines += proc.stdout.readlines()
        return proc.wait(timeout=timeout)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


def children_of(directory) -> list[str]:
    """Live file processes (`python -m pypto.cli DIR/...`) of a run over `directory`."""
    return subprocess.run(["pgrep", "-f", f"pypto.cli {directory}"], capture_output=True,
                          text=True).stdout.split()


def wait_gone(directory, seconds=15.0) -> list[str]:
    t0 = time.monotonic()
    while children_of(directory) and time.monotonic() - t0 < seconds:
        time.sleep(0.2)
    return children_of(directory)


def test_task_keys_are_unique_per_run_and_input(tmp_path):
    f = write(tmp_path, "k.py")
    cf, opts = CorpusFile(str(f), "k.py"), FileOptions()
    key = task_key(cf, opts, "run1")
    assert key.startswith("pypto-sim-run1-") and key == task_key(cf, opts, "run1")
    assert task_key(cf, opts, "run2") != key
    assert task_key(cf, FileOptions(checks="none"), "run1") != key
    (tmp_path / "other").mkdir()
    g = write(tmp_path / "other", "k.py")  # the same label under another root
    assert task_key(CorpusFile(str(g), "k.py"), opts, "run1") != key
    f.write_text(f.read_text() + "\n# edited\n")
    assert task_key(cf, opts, "run1") != key


def test_two_overlapping_runs_each_run_their_own_file(cluster, tmp_path):
    """Two users' runs on one scheduler, the same label `k.py` under two roots: the
    first passes slowly, the second fails at once, while the first still runs."""
    for name, kw in (("a", dict(pause=10.0)), ("b", dict(factor=3))):
        (tmp_path / name).mkdir()
        write(tmp_path / name, "k.py", **kw)
    first = start("--scheduler", cluster.address, "--root", tmp_path / "a", "k.py",
                  "--json", tmp_path / "a.json", "--status-every", "1", cwd=tmp_path)
    lines: list[str] = []
    try:
        read_until(first, lambda ln: "1 running" in ln, lines)  # a's k.py holds its task
        assert first.poll() is None
        second = subprocess.run(
            [sys.executable, "-m", "pypto.cli", "--scheduler", cluster.address, "--root",
             tmp_path / "b", "k.py", "--json", tmp_path / "b.json"], cwd=tmp_path,
            capture_output=True, text=True, timeout=180)
        assert finish(first, lines) == 0, "".join(lines)
    finally:
        if first.poll() is None:
            os.killpg(first.pid, signal.SIGKILL)
            first.wait()
    assert second.returncode == 1, second.stdout + second.stderr
    a = json.loads((tmp_path / "a.json").read_text())["files"]
    b = json.loads((tmp_path / "b.json").read_text())["files"]
    assert [(r["file"], r["status"], r["path"]) for r in a] == [
        ("k.py", "pass", str(tmp_path / "a" / "k.py"))]
    assert [(r["file"], r["status"], r["path"]) for r in b] == [
        ("k.py", "fail", str(tmp_path / "b" / "k.py"))]
    assert "mismatched" in b[0]["reason"]


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_an_interrupted_run_lists_every_file(cluster, tmp_path, sig):
    d = tmp_path / "slow"
    d.mkdir()
    for i in range(3):
        write(d, f"s{i}.py", pause=60.0)
    out = tmp_path / "r.json"
    proc = start("--scheduler", cluster.address, d, "--json", out, "--status-every", "1",
                 cwd=tmp_path)
    lines: list[str] = []
    read_until(proc, lambda ln: "2 running" in ln, lines)
    assert children_of(d)  # (the files' processes are there to be stopped)
    proc.send_signal(sig)
    t0 = time.monotonic()
    code = finish(proc, lines, timeout=60)
    assert code == 128 + sig.value, "".join(lines)
    assert time.monotonic() - t0 < 30
    doc = json.loads(out.read_text())
    assert doc["state"] == "interrupted" and doc["counts"] == {"not-run": 3}
    assert sorted(r["file"] for r in doc["files"]) == ["slow/s0.py", "slow/s1.py", "slow/s2.py"]
    assert {r["reason"] for r in doc["files"]} == {
        f"no result: the run was interrupted ({sig.name})"}
    assert lines[-1].startswith("3 files: 3 not-run;") and "(interrupted)" in lines[-1]
    assert wait_gone(d) == []  # the workers stopped the cancelled files
    assert cluster.worker_count() == 2  # and live on


def test_a_lost_scheduler_is_reported_as_such(tmp_path):
    (tmp_path / "dask").mkdir()
    c = Cluster(tmp_path / "dask", workers=2)
    try:
        d = tmp_path / "slow"
        d.mkdir()
        for i in range(4):
            write(d, f"s{i}.py", pause=60.0)
        write(d, "a_quick.py")
        out = tmp_path / "r.json"
        proc = start("--scheduler", c.address, d, "--json", out, "--status-every", "1",
                     cwd=tmp_path)
        lines: list[str] = []
        read_until(proc, lambda ln: "a_quick.py" in ln and ln.startswith("[1/5]"), lines)
        read_until(proc, lambda ln: "2 running" in ln, lines)
        c.kill_scheduler()
        t0 = time.monotonic()
        code = finish(proc, lines, timeout=90)
        assert code == 4, "".join(lines)
        assert time.monotonic() - t0 < 45
        text = "".join(lines)
        assert f"pypto-sim: lost the Dask scheduler at {c.address}: 4 of 5 files have no " \
            "result\n" in text
        assert "Traceback" not in text and "CancelledError" not in text
        doc = json.loads(out.read_text())
        assert doc["state"] == "cluster lost"
        assert doc["counts"] == {"pass": 1, "not-run": 4}
        by = {r["file"]: r for r in doc["files"]}
        assert by["slow/a_quick.py"]["status"] == "pass"
        assert {by[f"slow/s{i}.py"]["reason"] for i in range(4)} == {
            f"no result: lost the Dask scheduler at {c.address}"}
        # the workers closed, and stopped the files they were running on the way
        assert wait_gone(d) == []
    finally:
        c.close()


def test_a_scheduler_without_workers_is_given_up_on(tmp_path):
    (tmp_path / "dask").mkdir()
    c = Cluster(tmp_path / "dask", workers=0)
    try:
        d = tmp_path / "k"
        d.mkdir()
        write(d, "k0.py")
        write(d, "k1.py")
        out = tmp_path / "r.json"
        t0 = time.monotonic()
        proc = subprocess.run([sys.executable, "-m", "pypto.cli", "--scheduler", c.address,
                               d, "--json", out, "--wait-workers", "3"], cwd=tmp_path,
                              capture_output=True, text=True, timeout=120)
        assert time.monotonic() - t0 < 60
        assert proc.returncode == 4, proc.stdout + proc.stderr
        assert f"pypto-sim: warning: the scheduler at {c.address} has no workers; waiting " \
            "up to 3 s for one (--wait-workers)" in proc.stdout
        assert proc.stderr == (f"pypto-sim: no Dask worker at the scheduler {c.address} for "
                               "3 s: 2 of 2 files have no result\n")
        doc = json.loads(out.read_text())
        assert doc["state"] == "cluster lost" and doc["counts"] == {"not-run": 2}
        assert [r["file"] for r in doc["files"]] == ["k/k0.py", "k/k1.py"]
    finally:
        c.close()


@pytest.mark.parametrize("value, message", [
    ("http://127.0.0.1:8787", "'http://127.0.0.1:8787' is a web address (the dashboard's?); "
     "the scheduler's is tcp://HOST:PORT (e.g. tcp://10.0.0.5:8786, port 8786 by default)"),
    ("localhost:port", "'localhost:port': the scheduler's address is HOST:PORT with a port "
     "number (e.g. tcp://10.0.0.5:8786)"),
    ("", "--scheduler takes the scheduler's address (e.g. tcp://10.0.0.5:8786), got ''"),
    ("gopher://h:1", "'gopher://h:1': not a Dask scheduler address (e.g. tcp://10.0.0.5:8786)"),
])
def test_bad_scheduler_addresses_are_usage_errors(tmp_path, value, message):
    write(tmp_path, "k.py")
    proc = subprocess.run([sys.executable, "-m", "pypto.cli", "--scheduler", value, "k.py"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2
    assert proc.stderr == f"pypto-sim: {message}\n(pypto-sim --help for usage)\n"
    assert proc.stdout == ""


def test_the_report_names_versions_and_the_dashboard(cluster, corpus, tmp_path):
    out = tmp_path / "r.json"
    proc = subprocess.run([sys.executable, "-m", "pypto.cli", "--scheduler", cluster.address,
                           corpus, "--json", out, "-q"], cwd=tmp_path, capture_output=True,
                          text=True, timeout=240)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "pypto-sim: the scheduler runs no dashboard\n" in proc.stdout  # (--no-dashboard)
    doc = json.loads(out.read_text())
    assert doc["state"] == "finished" and doc["version"] == pypto.__version__
    assert doc["cluster"]["dashboard"] is None
    assert doc["cluster"]["workers_lost"] == [] and doc["cluster"]["ran_again"] == []
    ran = [r for r in doc["files"] if r["status"] != "skip"]
    assert [r["version"] for r in ran] == [pypto.__version__] * 4
