"""Every runnable single-card pypto-lib kernel file is in a tier list
(tools/pyptolib_tiers.py): checked against a synthetic checkout always, and against a
real one when there is one (PYPTO_LIB, else /work/pypto-lib)."""
import importlib.util
import os
from pathlib import Path

import pytest

TOOL = Path(__file__).resolve().parents[2] / "tools" / "pyptolib_tiers.py"
spec = importlib.util.spec_from_file_location("pyptolib_tiers", TOOL)
tiers = importlib.util.module_from_spec(spec)
spec.loader.exec_module(tiers)

KERNEL = """import pypto.language as pl
{extra}
def build():
    from golden import run_jit
    return run_jit

if __name__ == "__main__":
    build()
"""


def _write(root: Path, rel: str, text: str) -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def test_runnable_files_are_classified(tmp_path):
    _write(tmp_path, "models/a/kernel.py", KERNEL.format(extra=""))
    _write(tmp_path, "models/a/ranks.py",
           KERNEL.format(extra="import pypto.language.distributed as pld"))
    _write(tmp_path, "models/a/device_only.py", "# ci: no-sim\n" + KERNEL.format(extra=""))
    _write(tmp_path, "models/a/wip_draft.py", KERNEL.format(extra=""))
    _write(tmp_path, "models/a/helpers.py", "X = 1\n")
    _write(tmp_path, "models/a/convert.py", "if __name__ == '__main__':\n    print('weights')\n")
    _write(tmp_path, "golden/runner.py", KERNEL.format(extra=""))
    single, multi = tiers.runnable_files(tmp_path)
    assert single == ["models/a/kernel.py"]
    assert multi == ["models/a/ranks.py"]


CHECKOUT = Path(os.environ.get("PYPTO_LIB", "/work/pypto-lib"))


@pytest.mark.skipif(not (CHECKOUT / "models").is_dir(), reason="no pypto-lib checkout")
def test_every_single_card_file_of_the_checkout_is_in_a_tier_list():
    assert tiers.untiered(CHECKOUT) == []
    single, multi = tiers.runnable_files(CHECKOUT)
    listed = tiers.tier_of(CHECKOUT)
    assert all(listed.get(f) == "tier3b" for f in multi)
    assert not [f for f in single if listed.get(f) == "tier3b"]
    # tier 3b is exactly the multi-card runnable files: no `_draft.py` (pypto-lib's CI
    # runs `find ... ! -name '*_draft.py'`, prefill_cp_fwd_draft.py included)
    assert sorted(f for f, t in listed.items() if t == "tier3b") == sorted(multi)


def test_a_run_renders_as_the_conformance_table():
    run = {"seconds": 12.5, "peak_mb": 900.0, "files": [
        {"file": "models/a/kernel.py", "status": "pass", "reason": "", "seconds": 4.0,
         "cpu_seconds": 3.5, "peak_mb": 300.0, "runs": [
             {"stages": {"simulate": 1.25},
              "batch_refusals": {"k_rows": "varying operand of gather"}},
             {"stages": {"simulate": 0.5}, "batch_refusals": {
                 "k_rows": "varying operand of gather",
                 "k_tail": "an access to 'kv_pad' with an unknown window"}}]},
        {"file": "models/a/tail.py", "path": "/lib/models/a/tail.py", "status": "diagnosed",
         "reason": "unwritten | region at /lib/models/a/tail.py:3",
         "seconds": 8.0, "cpu_seconds": 2.25, "peak_mb": 900.0, "runs": [
             {"stages": {"simulate": 2.0}, "batch_refusals": {
                 "t_copy": "an access to 'y' with an unknown window"}}]},
        {"file": "models/a/broken.py", "status": "fail", "reason": "SyntaxError",
         "seconds": 0.5, "peak_mb": None, "runs": []}]}
    lines = tiers.markdown_table(run).splitlines()
    assert lines[2] == "| `models/a/kernel.py` | pass | 1.8 | 4.0 | 3.5 | 300 | 2 |  |"
    assert lines[3] == ("| `models/a/tail.py` | diagnosed | 2.0 | 8.0 | 2.2 | 900 | 1 | "
                        "unwritten / region at models/a/tail.py:3 |")
    assert lines[4] == "| `models/a/broken.py` | fail |  | 0.5 |  |  | 0 | SyntaxError |"
    assert lines[6] == ("3 files: 1 pass, 1 diagnosed, 1 fail; run wall time 12.5 s (files' "
                        "wall times summed 12.5 s, CPU 5.8 s, simulate stages summed 3.8 s); "
                        "largest "
                        "peak 900 MB")
    assert lines[-2:] == ["| an access to '*' with an unknown window | 2 |",
                          "| varying operand of gather | 1 |"]
