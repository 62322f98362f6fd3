"""pypto-sim on many files without Dask (--serial), and the single-file edge cases of
issue 16 item 9: a directory, a file with no kernel, a file that runs none, --timeout."""
import json
import re
import subprocess
import sys
import time

import pytest
from scale_kernels import write

from pypto.scale.corpus import CorpusError, collect


def pypto_sim(*args, cwd, timeout=240):
    return subprocess.run([sys.executable, "-m", "pypto.cli", *map(str, args)], cwd=cwd,
                          capture_output=True, text=True, timeout=timeout)


def test_collect_directories_globs_lists_and_skips(corpus, tmp_path):
    files = collect([str(corpus)])
    assert [f.label.rsplit("/", 1)[-1] for f in files] == [
        "a_pass.py", "b_pass.py", "c_wrong.py", "d_tail.py", "helpers.py"]
    assert [f.skip for f in files][-1].startswith("no __main__ block")
    listing = tmp_path / "list.txt"
    listing.write_text("# tier x\ncorpus/a_*.py\n\ncorpus/d_tail.py\ncorpus/a_pass.py\n")
    files = collect([f"@{listing}"], root=tmp_path)
    assert [f.label for f in files] == ["corpus/a_pass.py", "corpus/d_tail.py"]
    (corpus / "e_draft.py").write_text("if __name__ == '__main__':\n    pass\n")
    (corpus / "f.py").write_text("# ci: no-sim\nif __name__ == '__main__':\n    pass\n")
    skips = {f.label.rsplit("/", 1)[-1]: f.skip for f in collect([str(corpus)])}
    assert skips["e_draft.py"] == "draft file" and skips["f.py"] == "marked # ci: no-sim"


def test_collect_says_what_was_given(tmp_path):
    with pytest.raises(CorpusError, match=r"nope\.py: no such file or directory"):
        collect([str(tmp_path / "nope.py")])
    with pytest.raises(CorpusError, match=r"the pattern matches no file under"):
        collect(["x/*.py"], root=tmp_path)
    (tmp_path / "empty").mkdir()
    with pytest.raises(CorpusError, match=r"empty: a directory with no \.py files under it"):
        collect([str(tmp_path / "empty")])
    with pytest.raises(CorpusError, match=r"list file .*missing\.txt"):
        collect([f"@{tmp_path / 'missing.txt'}"])


def test_serial_corpus_verdicts_json_and_html(corpus, tmp_path):
    out_json, out_html = tmp_path / "r.json", tmp_path / "r.html"
    proc = pypto_sim("--serial", corpus, "--json", out_json, "--html", out_html, cwd=tmp_path)
    assert proc.returncode == 1, proc.stdout + proc.stderr  # one fails, one is diagnosed
    doc = json.loads(out_json.read_text())
    by = {r["file"].rsplit("/", 1)[-1]: r for r in doc["files"]}
    assert {k: r["status"] for k, r in by.items()} == {
        "a_pass.py": "pass", "b_pass.py": "pass", "c_wrong.py": "fail",
        "d_tail.py": "diagnosed", "helpers.py": "skip"}
    assert re.match(r"'y' 327\d\d/32768 mismatched", by["c_wrong.py"]["reason"])
    assert by["d_tail.py"]["reason"] == ("unwritten pl.Out region: 'y' indices 224:256 along "
                                         "axis 0, 4096 element(s) never written")
    assert by["d_tail.py"]["runs"][0]["outputs"][0]["diagnosis"] == by["d_tail.py"]["reason"]
    for name in ("a_pass.py", "c_wrong.py", "d_tail.py"):
        r = by[name]
        assert r["peak_mb"] > 20 and 0 < r["seconds"] < 120 and r["runs"][0]["simulated"]
        assert r["cpu_seconds"] > 0  # the file process's CPU time (user + system)
    assert doc["counts"] == {"pass": 2, "diagnosed": 1, "fail": 1, "skip": 1}
    assert doc["cluster"] == {"kind": "serial"}
    assert "[5/5]" in proc.stdout and "2 pass, 1 diagnosed, 1 fail, 1 skip" in proc.stdout
    page = out_html.read_text()
    assert "d_tail.py" in page and "unwritten pl.Out region" in page and "<table>" in page


def test_a_directory_is_run_not_called_missing(corpus, tmp_path):
    proc = pypto_sim("--serial", "-q", corpus, cwd=tmp_path)
    assert "no such file" not in proc.stderr
    assert "5 files: 2 pass, 1 diagnosed, 1 fail, 1 skip" in proc.stdout


def test_a_directory_with_nothing_runnable(tmp_path):
    d = tmp_path / "lib"
    d.mkdir()
    (d / "helpers.py").write_text("VALUE = 1\n")
    proc = pypto_sim(d, cwd=tmp_path)
    assert proc.returncode == 3
    assert proc.stderr.strip() == (
        "pypto-sim: 1 file(s) given, none runnable: lib/helpers.py (no __main__ block (a "
        "library module, not a kernel script)): nothing was simulated")


def test_a_file_without_a_kernel_says_nothing_was_simulated(tmp_path):
    p = tmp_path / "plain.py"
    p.write_text("print('hello')\n")
    proc = pypto_sim(p, cwd=tmp_path)
    assert proc.returncode == 3 and proc.stdout == "hello\n"
    assert proc.stderr == (f"pypto-sim: {p} defines no kernel (no @pl.jit function or "
                           "@pl.program class) and runs none: nothing was simulated\n")


def test_a_file_that_never_runs_its_kernel(tmp_path):
    p = write(tmp_path, "lib_only.py").read_text().split("if __name__")[0]
    f = tmp_path / "never.py"
    f.write_text(p)
    proc = pypto_sim(f, cwd=tmp_path)
    assert proc.returncode == 3
    assert proc.stderr == (f"pypto-sim: {f} defines double_rows but never runs a kernel (no "
                           "call, no run_jit / run; is the work under `if __name__ == "
                           "'__main__':`?): nothing was simulated\n")


def test_a_file_that_runs_its_kernel_is_not_flagged(tmp_path):
    f = write(tmp_path, "k.py")
    proc = pypto_sim(f, cwd=tmp_path)
    assert proc.returncode == 0 and proc.stderr == "", proc.stderr


def test_timeout_ends_a_runaway_file(tmp_path):
    # the 2 s count from the file's start (the child's own `import pypto.cli` can take
    # most of 2 s on a loaded machine): the file always gets to print, then is killed
    p = tmp_path / "forever.py"
    p.write_text("print('started', flush=True)\nwhile True:\n    pass\n")
    t0 = time.monotonic()
    proc = pypto_sim(p, "--timeout", "2", cwd=tmp_path, timeout=120)
    assert 2 <= time.monotonic() - t0 < 90
    assert proc.returncode == 124 and "started" in proc.stdout
    assert proc.stderr == f"pypto-sim: {p}: no result after 2 s: killed (--timeout)\n"


def test_the_timeout_counts_from_the_files_start(tmp_path):
    """A child whose start-up takes 1.5 s, then loops: a 1 s timeout kills it 1 s after
    it said it started, not 1 s after it was spawned."""
    from pypto.scale.procs import Limits
    from pypto.scale.runfile import _wait

    started = tmp_path / "started"
    slow_start = ("import os, sys, time\ntime.sleep(1.5)\n"
                  "open(sys.argv[1], 'w').close()\nwhile True:\n    pass\n")
    proc = subprocess.Popen([sys.executable, "-c", slow_start, str(started)],
                            start_new_session=True)
    t0 = time.monotonic()
    code, _, why, cpu = _wait(proc, Limits(1.0, None, started))
    assert why == "timeout" and code < 0 and started.exists()
    assert cpu > 0  # its busy loop's CPU time, load or not
    assert time.monotonic() - t0 >= 2.5
    # without the marker the clock starts at once (what a plain child gets)
    proc = subprocess.Popen([sys.executable, "-c", "while True: pass"],
                            start_new_session=True)
    t0 = time.monotonic()
    assert _wait(proc, Limits(0.5, None))[2] == "timeout" and time.monotonic() - t0 < 2.5


def test_a_child_that_never_starts_is_still_ended(tmp_path, monkeypatch):
    from pypto.scale import procs, runfile

    monkeypatch.setattr(procs, "STARTUP_GRACE", 1.0)
    proc = subprocess.Popen([sys.executable, "-c", "while True: pass"],
                            start_new_session=True)
    t0 = time.monotonic()
    assert runfile._wait(proc, procs.Limits(0.5, None, tmp_path / "never"))[2] == "timeout"
    assert 1.5 <= time.monotonic() - t0 < 10


def test_corpus_timeout_and_memory_limit_and_crash(tmp_path):
    d = tmp_path / "bad"
    d.mkdir()
    (d / "slow.py").write_text("import time\nif __name__ == '__main__':\n    time.sleep(60)\n")
    (d / "hog.py").write_text("import numpy as np\nif __name__ == '__main__':\n"
                              "    a = np.ones(2**27)\n    import time; time.sleep(30)\n")
    (d / "crash.py").write_text("import os, signal\nif __name__ == '__main__':\n"
                                "    os.kill(os.getpid(), signal.SIGSEGV)\n")
    out = tmp_path / "r.json"
    proc = pypto_sim("--serial", "--timeout", "8", "--memory-limit", "512MiB", d, "--json", out,
                     cwd=tmp_path, timeout=120)
    assert proc.returncode == 1
    by = {r["file"].rsplit("/", 1)[-1]: r for r in json.loads(out.read_text())["files"]}
    assert by["slow.py"]["status"] == "timeout"
    assert by["slow.py"]["reason"] == "no result after 8 s: killed"
    assert by["hog.py"]["status"] == "killed"
    assert by["hog.py"]["reason"].startswith("over the memory limit (0.50 GiB, peak ")
    assert by["crash.py"]["status"] == "killed"
    assert by["crash.py"]["reason"] == "the file's process died of SIGSEGV"


@pytest.mark.parametrize("args, message", [
    (["--bogus", "x.py"], "unknown option --bogus (a file's own options go after it)"),
    (["--kernel", "k", "x.py"], "--kernel only go with --sweep"),
    (["--workers", "0", "x.py"], "--workers takes a positive integer, got '0'"),
    (["--scheduler", "tcp://127.0.0.1:1", "--workers", "2", "x.py"],
     "--scheduler runs on that cluster's workers: drop --workers/--serial"),
    (["--memory-limit", "lots", "--serial", "x.py"],
     "--memory-limit: not a size: 'lots' (e.g. 4GiB, 512MB, 2e9)"),
    (["--timeout"], "--timeout needs a value"),
])
def test_usage_errors(tmp_path, args, message):
    from pypto.cli import main

    (tmp_path / "x.py").write_text("if __name__ == '__main__':\n    pass\n")
    proc = pypto_sim(*args, cwd=tmp_path)
    assert proc.returncode == 2
    assert proc.stderr.splitlines()[0] == f"pypto-sim: {message}"
    assert main is not None


def test_unwritten_rows_plus_a_wrong_golden_is_a_failure_not_a_diagnosis(tmp_path):
    from pypto.scale.corpus import CorpusFile
    from pypto.scale.runfile import run_file

    f = write(tmp_path, "both.py", skip_rows=32, factor=3)
    r = run_file(CorpusFile(str(f), "both.py"))
    assert r["status"] == "fail", r
    assert re.match(r"'y' 327\d\d/32768 mismatched", r["reason"])
    assert r["runs"][0]["verdict"] == "fail"


@pytest.mark.parametrize("how", ["sys.exit(0)", "os._exit(0)", "raise SystemExit",
                                 "main()"])
def test_an_early_clean_exit_is_nothing_simulated_as_the_files_end_is(tmp_path, how):
    """`sys.exit(0)` / `os._exit(0)` before any kernel gave exit 0 and a pass, while
    falling off the end gave 3 (issue 31 item 8): both are 3, a pass means a kernel ran."""
    body = write(tmp_path, "k.py").read_text().split("if __name__")[0]
    f = tmp_path / "early.py"
    f.write_text("import os, sys\n" + body + "def main():\n    print('bye', flush=True)\n"
                 "    sys.exit(0)\n\n\nif __name__ == '__main__':\n"
                 f"    print('skipping', flush=True)\n    {how}\n")
    proc = pypto_sim(f, cwd=tmp_path)
    assert proc.returncode == 3, proc.stdout + proc.stderr
    assert proc.stderr == (f"pypto-sim: {f} defines double_rows but never runs a kernel (no "
                           "call, no run_jit / run; is the work under `if __name__ == "
                           "'__main__':`?): nothing was simulated\n")
    assert proc.stdout.startswith("skipping\n")
    from pypto.scale.corpus import CorpusFile
    from pypto.scale.runfile import run_file

    r = run_file(CorpusFile(str(f), "early.py"))
    assert (r["status"], r["exit_code"]) == ("fail", 3)
    assert r["reason"].endswith("never runs a kernel (no call, no run_jit / run; is the work "
                                "under `if __name__ == '__main__':`?): nothing was simulated")


@pytest.mark.parametrize("how", ["sys.exit(0)", "os._exit(0)"])
def test_a_clean_exit_after_a_kernel_ran_is_a_pass(tmp_path, how):
    text = write(tmp_path, "k.py").read_text()
    f = tmp_path / "ran.py"
    f.write_text("import os, sys\n" + text.replace("        time.sleep(PAUSE)\n",
                                                   f"        {how}\n"))
    proc = pypto_sim(f, cwd=tmp_path)
    assert proc.returncode == 0 and proc.stderr == "", proc.stderr
