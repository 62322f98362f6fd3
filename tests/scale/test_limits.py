"""A file's limits cover its whole session: a helper process it starts counts towards
the memory limit and is killed with it (issue 31 item 8), cold and warm."""
import os
import textwrap
import time

import pytest

from pypto.scale.corpus import CorpusFile
from pypto.scale.procs import Limits, session_members
from pypto.scale.runfile import FileOptions, run_file

HELPER = textwrap.dedent('''\
    {mark}
    import subprocess, sys, time
    helper = subprocess.Popen([sys.executable, "-c",
                               "import numpy as np, time; x = np.ones(700 << 20, np.uint8); "
                               "time.sleep(30)"])
    print("HELPER", helper.pid, flush=True)
    time.sleep(10)
    ''')


def _gone(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] == "Z"
    except FileNotFoundError:
        return True


@pytest.mark.parametrize("mark", ["# torch (warm)", "# cold"])
def test_a_helper_process_counts_towards_the_memory_limit(tmp_path, mark, monkeypatch):
    if mark == "# cold":
        monkeypatch.setenv("PYPTO_SIM_COLD", "1")
    f = tmp_path / "helper.py"
    f.write_text(HELPER.format(mark=mark))
    r = run_file(CorpusFile(str(f), "helper.py"),
                 FileOptions(memory_limit=500 << 20, timeout=60.0))
    assert r["status"] == "killed"  # (the file itself holds a few MB: it would pass)
    assert r["reason"].startswith("over the memory limit (0.49 GiB, peak ")
    assert r["reason"].endswith(" GiB with its 1 helper process): killed")
    assert r["peak_mb"] > 500
    pid = int(next(ln for ln in r["output"].splitlines() if ln.startswith("HELPER")).split()[1])
    for _ in range(50):
        if _gone(pid):
            break
        time.sleep(0.1)
    assert _gone(pid)  # the helper went with the file


def test_session_members_and_the_startless_clock(tmp_path):
    import subprocess
    import sys

    proc = subprocess.Popen([sys.executable, "-c", "import subprocess, sys, time; "
                             "subprocess.Popen([sys.executable, '-c', 'import time; "
                             "time.sleep(30)']); time.sleep(30)"], start_new_session=True)
    try:
        for _ in range(100):
            members = session_members(proc.pid)
            if len(members) == 2:
                break
            time.sleep(0.05)
        assert proc.pid in members and len(members) == 2
        assert os.getpid() not in members
        watch = Limits(None, None).start(proc.pid)
        assert watch.check() == "" and watch.deadline is None
        assert Limits(None, None, wanted=lambda: False).start(proc.pid).check() == "abandoned"
    finally:
        os.killpg(proc.pid, 9)
        proc.wait()
