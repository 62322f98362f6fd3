"""Every simulator option and every call argument is validated (issue 16, items 7-8):
a wrong one is a user error naming it and saying what it expects; nothing is silently
ignored or silently converted."""
from __future__ import annotations

import inspect

import numpy as np
import pytest

import pypto.language as pl
from pypto.errors import ConfigError, SimulationError
from pypto.sim import SimConfig, simulate


@pl.jit
def scaled(x: pl.Tensor[[16, 16], pl.FP32], n: pl.Scalar[pl.INDEX],
           y: pl.Out[pl.Tensor[[16, 16], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="scale"):
        y[:, :] = pl.mul(x[:, :], pl.cast(n, pl.FP32))
    return y


@pl.jit
def shifted(x: pl.Tensor[[16, 16], pl.FP32], off: pl.Scalar[pl.INDEX],
            y: pl.Out[pl.Tensor[[16, 16], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="past_the_end"):
        y[:, :] = pl.slice(x, [16, 16], [off, 0])
    return y


def _arrays():
    return np.ones((16, 16), np.float32), np.zeros((16, 16), np.float32)


# --- checks ----------------------------------------------------------------------------


@pytest.mark.parametrize("given", ["oob", "OOB", ("OOB",), ("oob,ub",), "oob, ub", ["oob"],
                                   {"oob"}, ("Oob", "oob")])
def test_check_spellings_that_mean_oob(given):
    cfg = SimConfig(checks=given)
    assert "oob" in cfg.checks and set(cfg.checks) <= {"oob", "ub"}
    # and the check does run: the out-of-bounds slice faults
    x, y = _arrays()
    with pytest.raises(SimulationError, match=r"out of bounds|past the end|outside"):
        shifted(x, 8, y, config=cfg)


def test_checks_are_held_in_one_spelling():
    assert SimConfig(checks="race, OOB").checks == ("oob", "race")
    assert SimConfig(checks=["uninit", "ub", "ub"]).checks == ("ub", "uninit")
    assert SimConfig(checks=None).checks == ()
    assert SimConfig(checks="").checks == ()
    # one spelling: equal configs are equal (and share one executable)
    assert SimConfig(checks="div ub,OOB window") == SimConfig()


def test_a_string_of_checks_is_not_read_letter_by_letter():
    # it used to be read as the set of its characters: {'o', 'b'} - no check at all
    x, y = _arrays()
    with pytest.raises(SimulationError):
        shifted(x, 8, y, config=SimConfig(checks="oob"))
    shifted(x, 8, y, config=SimConfig(checks=()))  # without the check the same call runs


@pytest.mark.parametrize("given,message,hint", [
    ("races", "unknown simulator check(s) 'races'; choose from oob, ub, race, window, uninit",
     "did you mean 'race'?"),
    (("oob", "bounds"), "unknown simulator check(s) 'bounds'", "several checks"),
    (3, "SimConfig.checks must be a tuple of check names or a string, got 3 (int)",
     "the checks are oob, ub, race, window, uninit"),
    ((1,), "SimConfig.checks names checks by strings, got 1 (int)",
     "oob, ub, race, window, uninit"),
])
def test_unknown_checks_are_refused(given, message, hint):
    with pytest.raises(ConfigError) as ei:
        SimConfig(checks=given)
    assert message in ei.value.message
    assert hint in ei.value.hint
    assert isinstance(ei.value, ValueError)  # what it was before: still caught alike


# --- the other options -------------------------------------------------------------------


@pytest.mark.parametrize("options,message", [
    ({"seed": "a"}, "SimConfig.seed must be an integer, got 'a' (str)"),
    ({"seed": 1.5}, "SimConfig.seed must be an integer, got 1.5 (float)"),
    ({"trace": "yes"}, "SimConfig.trace must be True or False, got 'yes' (str)"),
    ({"strict": 0}, "SimConfig.strict must be True or False, got 0 (int)"),
    ({"batch": None}, "SimConfig.batch must be True or False, got None (NoneType)"),
    ({"max_work": 0}, "SimConfig.max_work must be an integer >= 1 (loop iterations + blocks), "
                      "got 0"),
    ({"max_work": 1e9}, "SimConfig.max_work must be an integer >= 1"),
    ({"padding": "zeros"}, "SimConfig.padding must be one of 'zero', 'nan', got 'zeros' (str)"),
    ({"uninit": None}, "SimConfig.uninit must be one of 'residue', 'zero', got None"),
    ({"oob_reads": "ignore"}, "SimConfig.oob_reads must be one of 'fault', 'warn'"),
    ({"platform": 3}, "SimConfig.platform must be a platform name or None, got 3 (int)"),
])
def test_bad_options_are_refused(options, message):
    with pytest.raises(ConfigError) as ei:
        SimConfig(**options)
    assert message in ei.value.message


def test_option_spellings():
    cfg = SimConfig(padding="NaN", uninit="Zero", oob_reads="WARN", platform="A5SIM",
                    seed=np.int64(3), trace=np.bool_(True))
    assert (cfg.padding, cfg.uninit, cfg.oob_reads, cfg.platform) == ("nan", "zero", "warn",
                                                                      "a5sim")
    assert type(cfg.seed) is int and cfg.seed == 3 and cfg.trace is True


def test_unknown_platforms_name_the_simulated_ones():
    with pytest.raises(SimulationError, match="unknown platform 'tpu'") as ei:
        SimConfig(platform="tpu")
    assert "a2a3sim, a5sim" in ei.value.hint
    with pytest.raises(SimulationError, match="real Ascend hardware"):
        SimConfig(platform="a5")


def test_unknown_option_names():
    with pytest.raises(ConfigError) as ei:
        SimConfig(chekcs=("oob",))
    assert ei.value.message == "SimConfig got unknown option(s) 'chekcs'"
    assert "did you mean 'checks'?" in ei.value.hint
    assert "platform, checks, strict, trace, seed" in ei.value.hint
    # the signature stays the dataclass's (editors and help() show the options)
    assert "max_work" in inspect.signature(SimConfig).parameters


def test_config_argument_forms():
    x, y = _arrays()
    with pytest.raises(ConfigError) as ei:
        scaled(x, 2, y, config="any string")
    assert "config= takes a pypto.sim.SimConfig, a dict of its options or None, not " \
           "'any string' (str)" in ei.value.message
    with pytest.raises(ConfigError) as ei:
        scaled(x, 2, y, config={"chekcs": "race"})
    assert "unknown simulator option(s) 'chekcs' in config=" in ei.value.message
    assert "did you mean 'checks'?" in ei.value.hint
    with pytest.raises(ConfigError, match=r"SimConfig\.trace must be True or False"):
        scaled(x, 2, y, config={"trace": "on"})
    r = scaled(x, 2, y, config={"trace": True, "checks": "OOB"})
    assert r.config.checks == ("oob",) and r.trace is not None
    np.testing.assert_array_equal(y, 2 * x)


def test_simulate_validates_its_options():
    x, y = _arrays()
    with pytest.raises(ConfigError, match="unknown simulator check"):
        simulate(scaled, x, 2, y, checks=("oob", "ub", "uninitialized"))
    with pytest.raises(ConfigError, match=r"SimConfig\.seed must be an integer"):
        simulate(scaled, x, 2, y, seed="a")


# --- call arguments ---------------------------------------------------------------------


def _param_span(fn, name: str):
    """(line, column) of parameter `name` in the source of `fn`."""
    lines, first = inspect.getsourcelines(fn.fn)
    for i, text in enumerate(lines):
        col = text.find(f"{name}: pl.")
        if col >= 0:
            return first + i, col + 1
    raise AssertionError(name)


@pytest.mark.parametrize("value,message,hint", [
    (None, "argument 'n' is pl.Scalar[pl.INDEX]: it expects an integer, got None", None),
    ("3", "argument 'n' is pl.Scalar[pl.INDEX]: it expects an integer, got '3' (str)",
     "pass the number itself, not its text"),
    (True, "argument 'n' is pl.Scalar[pl.INDEX]: it expects an integer, got True (bool)", None),
    (2.5, "argument 'n' is pl.Scalar[pl.INDEX] but got the float 2.5", "int(n)"),
    (2 ** 70, "argument 'n' is pl.Scalar[pl.INDEX] but 1180591620717411303424 is out of its "
              "range [-9223372036854775808, 9223372036854775807]", None),
    (np.zeros(2), "argument 'n' is a scalar parameter (pl.Scalar[pl.INDEX]) but got an array",
     None),
])
def test_bad_scalar_arguments_are_located_user_errors(value, message, hint):
    x, y = _arrays()
    with pytest.raises(SimulationError) as ei:
        scaled(x, value, y)
    err = ei.value
    assert err.message == message
    if hint is not None:
        assert hint in err.hint
    line, col = _param_span(scaled, "n")
    assert (err.span.file, err.span.line, err.span.col) == (__file__, line, col)
    assert not y.any()  # nothing was touched


@pytest.mark.parametrize("value", [3, np.int32(3), np.int64(3), 3.0, np.float32(3.0),
                                   np.array(3)])
def test_good_scalar_arguments(value):
    x, y = _arrays()
    scaled(x, value, y)
    np.testing.assert_array_equal(y, 3 * x)
