"""Corpus runs and sweeps on a real Dask cluster (scheduler and two workers started as
processes on 127.0.0.1, no mocks), a worker killed mid-run, and the LocalCluster default."""
import importlib.util
import json
import re
import subprocess
import sys
import time

import pytest

pytest.importorskip("distributed")

from dask_cluster import Cluster
from scale_kernels import write

from pypto.scale.sweep import sweep


def pypto_sim(*args, cwd, timeout=300):
    return subprocess.run([sys.executable, "-m", "pypto.cli", *map(str, args)], cwd=cwd,
                          capture_output=True, text=True, timeout=timeout)


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    c = Cluster(tmp_path_factory.mktemp("dask"), workers=2)
    yield c
    c.close()


def test_corpus_through_scheduler(cluster, corpus, tmp_path):
    out = tmp_path / "r.json"
    proc = pypto_sim("--scheduler", cluster.address, corpus, "--json", out, cwd=tmp_path)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    doc = json.loads(out.read_text())
    assert doc["cluster"]["kind"] == "scheduler" and doc["cluster"]["workers"] == 2
    assert doc["cluster"]["scheduler"] == cluster.address
    assert doc["counts"] == {"pass": 2, "diagnosed": 1, "fail": 1, "skip": 1}
    ran = [r for r in doc["files"] if r["status"] != "skip"]
    assert all(r["worker"].startswith("tcp://127.0.0.1:") for r in ran)
    # the memory limit of a file is its worker's (3 GiB, one thread)
    assert f"on 2 Dask worker(s) (scheduler, {cluster.address})" in proc.stdout


def test_sweep_through_scheduler(cluster, tmp_path):
    f = write(tmp_path, "sw.py", rows=512)
    result = sweep(f, {"TILE": [0, 32, 48, 128, 512]}, scheduler=cluster.address)
    by = {p.values["TILE"]: p for p in result.points}
    assert not by[0].compiles and by[0].verdict == "compile error"
    assert "loop step must not be 0" in by[0].reason
    assert by[48].compiles and by[48].verdict == "fault" and "out-of-bounds" in by[48].reason
    assert by[512].compiles and by[512].fits is False and by[512].verdict == "over budget"
    assert by[32].feasible and by[128].feasible
    assert by[32].est_us < by[128].est_us  # more, smaller tiles spread over the cores
    assert result.best is by[32]
    assert result.where == f"Dask cluster {cluster.address}"


def test_killed_worker_loses_no_result(tmp_path):
    (tmp_path / "dask").mkdir()
    c = Cluster(tmp_path / "dask", workers=2)
    try:
        doomed, survivor = c.address_of(0), c.address_of(1)
        d = tmp_path / "slow"
        d.mkdir()
        names = [f"k{i}.py" for i in range(6)]
        for n in names:
            write(d, n, pause=2.0)
        out = tmp_path / "r.json"
        proc = subprocess.Popen([sys.executable, "-m", "pypto.cli", "--scheduler", c.address,
                                 str(d), "--json", str(out), "--status-every", "0.5"],
                                cwd=tmp_path, stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, text=True)
        lines = []
        for line in proc.stdout:
            lines.append(line)
            # a status line shows a file running on the doomed worker: kill it under it
            running = dict((w, f) for f, w in re.findall(r"([\w/.]+) \d+ s on (tcp://[\d.:]+)",
                                                          line))
            if line.startswith("pypto-sim: 2 running") and doomed in running:
                victim = running[doomed]
                c.kill_worker(0)
                break
        lines += proc.stdout.readlines()
        assert proc.wait(timeout=240) == 0, "".join(lines)
        doc = json.loads(out.read_text())
        assert sorted(r["file"].rsplit("/", 1)[-1] for r in doc["files"]) == names
        assert all(r["status"] == "pass" for r in doc["files"]), doc["files"]
        assert "6 files: 6 pass" in lines[-1]
        # the file it was running ran again on the survivor, and the report says so
        assert f"pypto-sim: worker {doomed} died while running {victim}: the scheduler runs " \
            "it again\n" in lines
        assert doc["cluster"]["workers_lost"] == [doomed]
        assert doc["cluster"]["ran_again"] == [victim]
        again = next(r for r in doc["files"] if r["file"] == victim)
        assert again["attempts"] == [doomed, survivor] and again["worker"] == survivor
        assert again["reason"] == f"ran 2 times (worker {doomed} died running it)"
        assert f"; 1 worker(s) died or left: {doomed}; ran more than once: {victim}" \
            in lines[-1]
        assert {r["worker"] for r in doc["files"]} <= {doomed, survivor}
        time.sleep(1.0)
        orphans = subprocess.run(["pgrep", "-f", f"pypto.cli {d}"],
                                 capture_output=True, text=True).stdout.split()
        assert orphans == []
    finally:
        c.close()


def test_local_cluster_is_the_default(corpus, tmp_path):
    out, page = tmp_path / "r.json", tmp_path / "r.html"
    proc = pypto_sim(corpus, "--workers", "2", "--memory-limit", "2GiB", "--json", out,
                     "--html", page, cwd=tmp_path)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    doc = json.loads(out.read_text())
    assert doc["cluster"]["kind"] == "local" and doc["cluster"]["workers"] == 2
    assert doc["cluster"]["memory_limit"] == [2 * 2**30]
    assert doc["options"]["memory_limit"] == 2 * 2**30
    assert doc["counts"] == {"pass": 2, "diagnosed": 1, "fail": 1, "skip": 1}
    assert "4 pass" not in proc.stdout and "5 files: 2 pass, 1 diagnosed, 1 fail, 1 skip" \
        in proc.stdout
    assert page.read_text().count("<tr>") == 6
    if importlib.util.find_spec("bokeh") is None:
        assert "pypto-sim: no dashboard (Dask's needs bokeh: pip install bokeh)\n" in proc.stdout
        assert doc["cluster"]["dashboard"] is None
    else:  # a LocalCluster serves its dashboard on this machine
        assert f"pypto-sim: dashboard {doc['cluster']['dashboard']}\n" in proc.stdout
        assert doc["cluster"]["dashboard"].startswith("http://127.0.0.1:")
