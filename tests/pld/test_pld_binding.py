"""How a harness run's specs bind to a multi-card (`@pl.jit.host`) program: by name, as
pypto-lib's harness dispatches an L3 program (`_l3_ordered_args` looks each parameter
up by name among the specs), so a spec list in another order than the parameters still
runs each parameter on its own tensor; a parameter no spec names is refused."""
from __future__ import annotations

import inspect

import numpy as np
import pytest
import rank_kernels
from rank_kernels import NR, S, rank_differences

from pypto.golden import TensorSpec, ratio_allclose, run_jit
from pypto.ir.distributed_compiled_program import DistributedConfig

CFG = dict(distributed_config=DistributedConfig(device_ids=[0, 1]))


def _a():
    return np.arange(NR * S, dtype=np.float32).reshape(NR, 1, S)


def _b():
    return np.full((NR, 1, 8), 0.5, dtype=np.float32) * np.arange(1, NR + 1).reshape(NR, 1, 1)


def _golden(t):
    t["out"][:] = np.nan  # only the first 8 columns are written
    t["out"][:, :, :8] = t["a"][:, :, :8] - t["b"]


def _specs():
    return {"a": TensorSpec("a", [NR, 1, S], np.float32, init_value=_a),
            "b": TensorSpec("b", [NR, 1, 8], np.float32, init_value=_b),
            "out": TensorSpec("out", [NR, 1, S], np.float32, is_output=True)}


def _run(names):
    specs = [_specs()[n] for n in names]
    return run_jit(rank_differences, specs, _golden, compile_cfg=CFG,
                   runtime_cfg=dict(platform="a2a3sim"),
                   compare_fn={"out": ratio_allclose(ignore_nan=True, max_error_ratio=0.0)})


def test_specs_in_another_order_bind_to_the_parameters_of_their_names(capsys):
    r = _run(["b", "out", "a"])
    assert r.passed, r.error
    got = r.outputs["out"].actual
    assert np.array_equal(got[:, :, :8], _a()[:, :, :8] - _b())
    assert ("specs bind to the host program's parameters by name (pypto-lib dispatches a "
            "@pl.jit.host program so); not in parameter order: a, b, out"
            in capsys.readouterr().out)


def test_specs_in_parameter_order_say_nothing_about_binding(capsys):
    r = _run(["a", "b", "out"])
    assert r.passed, r.error
    assert "bind to the host program" not in capsys.readouterr().out


def test_a_parameter_no_spec_names_is_refused_naming_it():
    specs = list(_specs().values())
    specs[1] = TensorSpec("bias", [NR, 1, 8], np.float32, init_value=_b)
    r = run_jit(rank_differences, specs, _golden, compile_cfg=CFG, verbose=False)
    assert not r.passed
    assert r.error == ("specs do not match the kernel's parameters (no spec named 'b'): "
                       "kernel (a, b, out), specs (a, bias, out); a multi-card "
                       "(@pl.jit.host) program is dispatched with each parameter looked up "
                       "by its name among the specs")


def test_the_workbench_checks_a_host_programs_specs_by_name_too():
    from pypto_lab.specs import SpecMismatchError, check_specs

    compiled = rank_differences.compile()
    specs = _specs()
    check_specs(compiled, [specs["out"], specs["b"], specs["a"]])  # any order fits
    wrong = TensorSpec("b", [NR, 1, 4], np.float32, init_value=_b)
    with pytest.raises(SpecMismatchError) as err:  # the shape is still checked, by name
        check_specs(compiled, [specs["out"], wrong, specs["a"]])
    assert err.value.message.startswith("specs[1] (TensorSpec 'b') has shape [2, 1, 4], "
                                        "but 'b' is pl.Tensor[[2, 1, 8], pl.FP32]")
    assert err.value.span.line == _param_line("b")
    with pytest.raises(SpecMismatchError) as err:
        check_specs(compiled, [specs["a"], specs["out"]])
    assert err.value.message == ("specs do not match the parameters of 'rank_differences' "
                                 "(no spec named 'b'): kernel (a, b, out), specs (a, out)")
    assert err.value.span.line == _param_line("def rank_differences")


def _param_line(text: str) -> int:
    lines, start = inspect.getsourcelines(rank_kernels.rank_differences)
    if text.startswith("def "):
        return start + next(i for i, ln in enumerate(lines) if ln.startswith(text))
    return start + next(i for i, ln in enumerate(lines) if f" {text}: pl." in ln)
