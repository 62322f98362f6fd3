"""benchmarks/conformance.py is pypto-sim on a checkout: its arguments translate."""
import importlib.util
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "conformance.py"


def load():
    spec = importlib.util.spec_from_file_location("conformance", SCRIPT)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_arguments_become_pypto_sims():
    c = load()
    assert c.pypto_sim_argv(["/lib"]) == ["--root", "/lib", *c.TIER1]
    assert c.pypto_sim_argv(["/lib", "--list", "t2.txt", "--timeout", "240", "--serial"]) == [
        "--root", "/lib", "--list", "t2.txt", "--timeout", "240", "--serial"]
    assert c.pypto_sim_argv(["/lib", "models/a.py", "--uninit=residue", "--", "-p", "a2a3"]) \
        == ["--root", "/lib", "--uninit=residue", "models/a.py", "--", "-p", "a2a3"]


def test_a_list_runs_with_the_reasons(corpus, tmp_path, capsys):
    c = load()
    listing = tmp_path / "l.txt"
    listing.write_text("c_wrong.py\nd_tail.py\n")
    code = c.main([str(corpus), "--list", str(listing), "--serial", "--show-output"])
    out = capsys.readouterr().out
    assert code == 1  # the wrong golden; a diagnosed file alone would be 0
    assert "2 files: 1 diagnosed, 1 fail" in out
    assert "--- c_wrong.py (fail)" in out and "Output(s) does not match golden" in out


def test_diagnosed_files_alone_conform(corpus, tmp_path):
    c = load()
    out = tmp_path / "mine.json"
    assert c.main([str(corpus), "d_tail.py", "a_pass.py", "--serial", "--json", str(out)]) == 0
    assert '"diagnosed": 1' in out.read_text()
