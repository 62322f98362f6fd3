"""The knob notes, the PYPTO_BENCH lines, pypto-sim's DFX flags, the build directory and the
pass dumps (named as pypto's PassManager names them)."""
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from dfx_kernels import softmax, softmax_golden, softmax_specs

from pypto.dfx import knobs
from pypto.dfx.build_dir import BuildDir, default_root
from pypto.golden import run_jit

CI_SCRAPE = re.compile(r"effective_us .*mean=")  # pypto-lib daily_ci.yml's grep -P


def test_unhonoured_knobs_each_print_one_note(tmp_path, capsys):
    run_jit(softmax, softmax_specs(), softmax_golden,
            runtime_cfg=dict(log_level="v0", enable_scope_stats=True, ring_heap=1 << 20,
                             enable_chip_swimlane=4, enable_pmu=1),
            compile_cfg=dict(output_dir=str(tmp_path / "w"), skip_ptoas=True))
    notes = [ln for ln in capsys.readouterr().out.splitlines() if ln.startswith("[RUN]   note:")]
    # enable_scope_stats and ring_heap are honoured (the ring model): no note
    assert [n.split(":")[1].strip().split("=")[0].split()[0] for n in notes] == [
        "log_level", "compile_cfg", "enable_chip_swimlane", "enable_pmu"]
    assert notes[0].startswith("[RUN]   note: log_level: no simulator equivalent")
    assert "skip_ptoas" in notes[1] and "carries level 2" in notes[2]
    assert "enable_pmu=1: only event type 2" in notes[3]


def test_honoured_knobs_print_no_note(tmp_path, capsys):
    r = run_jit(softmax, softmax_specs(), softmax_golden,
                runtime_cfg=dict(enable_dep_gen=True, enable_dump_args=2, enable_pmu=2,
                                 enable_chip_swimlane=2),
                compile_cfg=dict(output_dir=str(tmp_path / "w"), dump_passes=True))
    out = capsys.readouterr().out
    assert "note:" not in out
    assert [a.kind for a in r.artifacts] == ["passes_dump", "deps", "args_dump", "swimlane",
                                             "pmu"]
    dfx = tmp_path / "w" / "dfx_outputs"
    assert f"python -m simpler_setup.tools.dump_viewer {dfx / 'args_dump'}" in out
    assert f"python -m simpler_setup.tools.deps_viewer {dfx / 'deps.json'}" in out
    assert f"python -m simpler_setup.tools.critical_path {dfx} --stdout" in out
    assert r.work_dir == tmp_path / "w"


def test_bench_prints_the_runtimes_line_and_a_labelled_estimate(monkeypatch, capsys):
    monkeypatch.setenv("PYPTO_BENCH", "1")
    run_jit(softmax, softmax_specs(), softmax_golden)
    lines = capsys.readouterr().out.splitlines()
    assert knobs.EFFECTIVE_UNAVAILABLE in lines
    est = next(ln for ln in lines if ln.startswith("[RUN]   est_us"))
    assert re.fullmatch(r"\[RUN\]   est_us \(cost model, not a device time\) "
                        r"critical_path=\d+\.\d serial=\d+\.\d", est)
    assert not any(CI_SCRAPE.search(ln) for ln in lines)
    assert knobs.bench_lines(None, None, replay=True) == [knobs.REPLAY_SKIPPED]


def test_bad_level_messages():
    with pytest.raises(ValueError, match="runtime_cfg enable_chip_swimlane must be 0-4"):
        knobs.DfxRequest.of({"enable_chip_swimlane": 5}, {})
    with pytest.raises(ValueError, match=r"runtime_cfg DFX knob: expected a level \(an "
                                         r"integer or a bool\), got 'x'"):
        knobs.DfxRequest.of({"enable_pmu": "x"}, {})
    with pytest.raises(ValueError, match="--enable-pmu takes an integer level, got 'x'"):
        knobs.split_cli_flags(["--enable-pmu=x"], "")
    with pytest.raises(ValueError, match="--dump-passes takes no value"):
        knobs.split_cli_flags(["--dump-passes=1"], "")


def test_cli_flags_a_file_does_not_declare_go_to_the_harness():
    source = 'p.add_argument("--enable-chip-swimlane", action="store_true")'
    rest, taken = knobs.split_cli_flags(
        ["--enable-chip-swimlane", "--enable-pmu", "--enable-dump-args", "3", "-p", "a2a3sim",
         "--dump-passes", "--enable-dep-gen"], source)
    assert rest == ["--enable-chip-swimlane", "-p", "a2a3sim"]
    assert taken == {"runtime": {"enable_pmu": 2, "enable_dump_args": 3,
                                 "enable_dep_gen": True},
                     "compile": {"dump_passes": True}}
    cfg: dict = {"enable_pmu": 4}
    comp: dict = {}
    knobs.apply_overrides(cfg, comp, {knobs.ENV_OVERRIDES: json.dumps(taken)})
    assert cfg == {"enable_pmu": 4, "enable_dump_args": 3, "enable_dep_gen": True}
    assert comp == {"dump_passes": True}


def test_pypto_sim_writes_the_artifacts(tmp_path):
    kernel = Path(__file__).with_name("dfx_kernels.py").read_text()
    f = tmp_path / "k.py"
    f.write_text(kernel + "\n\nif __name__ == '__main__':\n    from golden import run_jit\n"
                 "    r = run_jit(softmax, softmax_specs(), softmax_golden)\n"
                 "    raise SystemExit(0 if r.passed else 1)\n")
    out = subprocess.run([sys.executable, "-m", "pypto.cli", str(f), "--enable-pmu",
                          "--enable-chip-swimlane", "1"], cwd=tmp_path, capture_output=True,
                         text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    (root,) = (tmp_path / "build_output").iterdir()
    assert re.fullmatch(r"softmax_\d{8}_\d{6}", root.name)
    dfx = root / "dfx_outputs"
    assert sorted(p.name for p in dfx.iterdir()) == [
        "chip_swimlane_records.json", "deps.json", f"name_map_{root.name}.json", "pmu.csv"]
    assert "PMU CSV (estimated from the cost model) written to" in out.stdout


def test_build_dir_layout(monkeypatch, tmp_path):
    b = BuildDir(tmp_path / "P_20260101_000000")
    assert b.dfx() == b.root / "dfx_outputs"
    assert b.dfx(1, 0) == b.root / "dfx_outputs" / "rank1" / "d0"
    assert (b.data, b.passes_dump) == (b.root / "data", b.root / "passes_dump")
    monkeypatch.setenv("PYPTO_PROG_BUILD_DIR", str(tmp_path / "b"))
    assert default_root("P", 0).parent == tmp_path / "b"
    monkeypatch.delenv("PYPTO_PROG_BUILD_DIR")
    assert re.fullmatch(r"build_output/P_\d{8}_\d{6}", default_root("P").as_posix())


def test_passes_dump_files(tmp_path):
    r = run_jit(softmax, softmax_specs(), compile_only=True, verbose=False,
                compile_cfg=dict(dump_passes=True, output_dir=str(tmp_path / "w")))
    files = sorted(p.name for p in (tmp_path / "w" / "passes_dump").iterdir())
    records = r.compiled.records
    assert files[0] == "00_frontend.py" and len(files) == len(records) + 1
    assert files[1] == "01_after_InlineFunctions.py"
    assert all(re.fullmatch(r"\d\d_after_[A-Z][A-Za-z]+\.py", f) for f in files[1:])
    text = (tmp_path / "w" / "passes_dump" / files[-1]).read_text()
    assert text.startswith("# pypto-lab pass dump (after ") and "softmax_rows" in text
