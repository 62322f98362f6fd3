"""pytest plugin that stands in for the real pypto's `tests/st/conftest.py` (and its
`tests/ut` one) when their tests run against pypto-lab: the `--platform` allowlist and
its deselection rule, the fixtures the tests take (`test_runner`, `test_config`, ...),
and a JSON record of every test's outcome for tools/real_pypto_tests.py."""
from __future__ import annotations

import json
import os

import parser_verdicts
import pytest
from harness.core.harness import ALL_PLATFORM_IDS
from harness.core.test_runner import TestRunner, on_sim

from pypto.runtime.runner import RunConfig

_outcomes: dict[str, dict] = {}


def pytest_addoption(parser):
    parser.addoption("--platform", default="a2a3sim",
                     help="comma-separated platform ids to run (default: a2a3sim)")
    parser.addoption("--device", default="0", help="accepted; the simulator has no device")
    parser.addoption("--report-json", default=None, help="write each test's outcome here")


def _platform_filter(config) -> set:
    ids = [t.strip() for t in str(config.getoption("--platform")).split(",") if t.strip()]
    known = [t for t in ids if t in ALL_PLATFORM_IDS]
    if ids and not known:
        raise pytest.UsageError(f"--platform must name one of {', '.join(ALL_PLATFORM_IDS)}")
    return set(known or ALL_PLATFORM_IDS)


def pytest_configure(config):
    if os.environ.get("REAL_PYPTO_SUITE") == "parser":
        parser_verdicts.install(os.environ["REAL_PYPTO_CHECKOUT"])
    for line in ("platforms(*ids): run only on these platform ids",
                 "slow: a slow test", "device_batch: runs through test_runner"):
        config.addinivalue_line("markers", line)


def pytest_collection_modifyitems(config, items):
    """Keep a test when its platform parameter (if any) is allowed by both --platform
    and its own `platforms` marker; a test without one runs on the first allowed id."""
    cli = _platform_filter(config)
    keep, drop = [], []
    for item in items:
        marker = next(item.iter_markers(name="platforms"), None)
        allowed = cli & (set(marker.args) if marker is not None else set(ALL_PLATFORM_IDS))
        params = getattr(getattr(item, "callspec", None), "params", {})
        platform = params.get("platform")
        entry = _outcomes.setdefault(item.nodeid, {"outcome": "not-run", "error": ""})
        entry["variant"] = platform is not None
        entry["file"] = item.path.name
        (keep if (platform in allowed if platform is not None else allowed) else drop).append(
            item)
    for item in drop:
        _outcomes.pop(item.nodeid, None)
    if drop:
        config.hook.pytest_deselected(items=drop)
        items[:] = keep


@pytest.fixture(scope="session")
def test_config(request) -> RunConfig:
    ids = [t.strip() for t in str(request.config.getoption("--platform")).split(",")
           if t.strip() in ALL_PLATFORM_IDS]
    return RunConfig(platform=on_sim(ids[0]) if ids else "a2a3sim")


@pytest.fixture(scope="session")
def test_runner(test_config) -> TestRunner:
    return TestRunner(test_config)


@pytest.fixture(scope="session")
def device_ids(request) -> list[int]:
    return [0]


@pytest.fixture
def optimization_strategy() -> str:
    return "Default"


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    if call.when == "setup" and os.environ.get("REAL_PYPTO_SUITE") == "parser":
        parser_verdicts.start_test(item)
    outcome = yield
    if call.when == "call" and os.environ.get("REAL_PYPTO_SUITE") == "parser":
        entry = _outcomes.setdefault(item.nodeid, {"outcome": "passed", "error": ""})
        entry["verdict"] = parser_verdicts.verdict(item, call)
    return outcome


def pytest_runtest_logreport(report):
    entry = _outcomes.setdefault(report.nodeid, {"outcome": "passed", "error": ""})
    if report.when == "setup" and entry["outcome"] == "not-run":
        entry["outcome"] = "passed"
    if report.failed:
        entry["outcome"] = "failed" if report.when == "call" else "error"
        entry["error"] = _short(report)
    elif report.skipped and report.when in ("setup", "call"):
        entry["outcome"] = "skipped"
        entry["error"] = _short(report)


@pytest.hookimpl(hookwrapper=True)
def pytest_make_collect_report(collector):
    outcome = yield
    report = outcome.get_result()
    if report.failed:
        name = collector.path.name
        _outcomes[f"{name}::<import>"] = {"outcome": "collect-error", "error": _short(report),
                                          "file": name}


def _short(report) -> str:
    text = getattr(report, "longreprtext", "") or str(report.longrepr or "")
    lines = [ln for ln in text.splitlines() if ln.strip()]
    errs = [ln for ln in lines if ln.startswith("E ")]
    return "\n".join((errs or lines)[-12:])


def pytest_sessionfinish(session):
    path = session.config.getoption("--report-json") or os.environ.get("REAL_PYPTO_REPORT")
    if path:
        with open(path, "w") as fh:
            json.dump(_outcomes, fh, indent=1)
