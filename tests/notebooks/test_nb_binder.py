"""binder/ is checked offline: the files repo2docker reads parse, are pinned and
executable, and (when jupyter-repo2docker is installed) its dry run produces the
expected Dockerfile without Docker (`--no-build --no-run` needs no daemon)."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import tomllib
from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet

ROOT = Path(__file__).resolve().parents[2]
BINDER = ROOT / "binder"
MUST_PIN = {"jupyterlab", "ipywidgets", "plotly", "networkx", "numpy", "ml-dtypes", "ipykernel",
            "nbformat"}


def _norm(name: str) -> str:
    return name.lower().replace("_", "-")


def requirement_lines() -> list[str]:
    lines = []
    for raw in (BINDER / "requirements.txt").read_text().splitlines():
        line = raw.split("#", 1)[0].strip()
        if line:
            lines.append(line)
    return lines


def test_requirements_are_pinned_and_install_the_project_with_lab():
    pinned, local = {}, []
    for line in requirement_lines():
        if line.startswith((".", "-e")):
            local.append(line)
            continue
        req = Requirement(line)
        specs = list(req.specifier)
        assert len(specs) == 1 and specs[0].operator == "==", f"not pinned: {line}"
        pinned[_norm(req.name)] = specs[0].version
    assert local == [".[lab]"], "the project itself, from the repository root, with [lab]"
    assert set(pinned) >= MUST_PIN, f"missing pins: {sorted(MUST_PIN - set(pinned))}"


def test_pins_satisfy_the_projects_own_requirements():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    wanted = [Requirement(r) for r in project["dependencies"]
              + project["optional-dependencies"]["lab"]]
    pinned = {}
    for line in requirement_lines():
        if not line.startswith((".", "-e")):
            req = Requirement(line)
            pinned[_norm(req.name)] = next(iter(req.specifier)).version
    for req in wanted:
        name = _norm(req.name)
        if name in pinned:
            assert SpecifierSet(str(req.specifier)).contains(pinned[name]), \
                f"binder pins {name}=={pinned[name]} but pyproject wants {req}"


@pytest.mark.parametrize("script", ["postBuild", "start"])
def test_scripts_are_executable_bash_that_stops_on_errors(script):
    path = BINDER / script
    text = path.read_text()
    assert os.access(path, os.X_OK), f"binder/{script} must be executable"
    assert text.startswith("#!/bin/bash\n")
    subprocess.run(["bash", "-n", str(path)], check=True)
    if script == "postBuild":
        assert "set -e" in text
    else:
        last = [ln for ln in text.splitlines() if ln.strip() and not ln.startswith("#")][-1]
        assert last.strip() == 'exec "$@"', "start must hand over to the server"


def test_postbuild_enables_the_extension(tmp_path):
    env = dict(os.environ, PYPTO_LAB_CONFIG_PREFIX=str(tmp_path))
    subprocess.run(["bash", str(BINDER / "postBuild")], check=True, env=env, cwd=ROOT)
    config = tmp_path / "etc" / "ipython" / "ipython_config.py"

    class Section(dict):
        def __getattr__(self, name):
            return self.setdefault(name, Section())

    c = Section()
    exec(config.read_text(), {"c": c})  # our own generated config
    assert c.InteractiveShellApp.extensions == ["pypto_lab"]


def test_start_runs_the_command_with_mimetype_figures():
    out = subprocess.run([str(BINDER / "start"), sys.executable, "-c",
                          "import os; print(os.environ['PYPTO_LAB_PLOTLYJS'])"],
                         capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "none"


def test_config_layout():
    names = {p.name for p in BINDER.iterdir()}
    assert {"requirements.txt", "postBuild", "start", "runtime.txt"} <= names
    assert "Dockerfile" not in names, "a Dockerfile would override every other file"
    assert not ("environment.yml" in names and "runtime.txt" in names)
    assert (BINDER / "runtime.txt").read_text().strip() == "python-3.11"
    assert not (ROOT / ".binder").exists(), "binder/ and .binder/ together is an error"
    assert not (BINDER / "apt.txt").exists(), "apt.txt cannot be checked offline; keep none"


def test_repo2docker_dry_run():
    exe = shutil.which("jupyter-repo2docker")
    if exe is None:
        pytest.skip("jupyter-repo2docker is not installed (pip install '.[test]')")
    out = subprocess.run([exe, "--no-build", "--debug", "--no-run", str(ROOT)],
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    text = out.stdout + out.stderr
    assert "FROM docker.io/library/buildpack-deps:" in text
    assert "python=3.11" in text
    assert 'pip install --no-cache-dir -r "binder/requirements.txt"' in text
    assert "RUN ./binder/postBuild" in text
    assert 'R2D_ENTRYPOINT="${REPO_DIR}/binder/start"' in text
