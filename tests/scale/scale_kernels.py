"""Small kernel files written the way pypto-lib writes them (module constants, a
`build_tensor_specs`, a `golden_*` function, an argparse `__main__`), for the corpus
and sweep tests. numpy only: no torch needed."""
from __future__ import annotations

import textwrap
from pathlib import Path

TEMPLATE = textwrap.dedent('''
    import time

    import numpy as np
    import pypto.language as pl

    ROWS = {rows}
    COLS = 128
    TILE = {tile}
    FACTOR = {factor}
    PAUSE = {pause}


    @pl.jit
    def double_rows(
        x: pl.Tensor[[ROWS, COLS], pl.FP32],
        y: pl.Out[pl.Tensor[[ROWS, COLS], pl.FP32]],
    ):
        for r in pl.parallel(0, ROWS - {skip_rows}, TILE):
            with pl.at(level=pl.Level.CORE_GROUP, name_hint="double_rows"):
                t = x[r : r + TILE, :]
                y[r : r + TILE, :] = pl.add(t, t)
        return y


    def build_tensor_specs():
        from golden import TensorSpec

        return [TensorSpec("x", [ROWS, COLS], np.float32, init_value=np.random.randn),
                TensorSpec("y", [ROWS, COLS], np.float32, is_output=True)]


    def golden_double_rows(v):
        v["y"][:] = v["x"] * FACTOR


    if __name__ == "__main__":
        import argparse

        from golden import run_jit

        parser = argparse.ArgumentParser()
        parser.add_argument("-p", "--platform", type=str, default="a2a3",
                            choices=["a2a3", "a2a3sim", "a5", "a5sim"])
        args = parser.parse_args()
        result = run_jit(fn=double_rows, specs=build_tensor_specs(),
                         golden_fn=golden_double_rows,
                         runtime_cfg=dict(platform=args.platform), rtol=1e-5, atol=1e-5)
        time.sleep(PAUSE)
        if not result.passed:
            if result.error:
                print(result.error)
            raise SystemExit(1)
''')


def kernel_source(*, factor: int = 2, pause: float = 0.0, rows: int = 256, tile: int = 32,
                  skip_rows: int = 0) -> str:
    """factor != 2: a wrong golden (fail); skip_rows > 0: the last rows of the pl.Out
    are never written (the unwritten-region diagnosis)."""
    return TEMPLATE.format(factor=factor, pause=pause, rows=rows, tile=tile,
                           skip_rows=skip_rows)


def write(directory: Path, name: str, **kw) -> Path:
    p = directory / name
    p.write_text(kernel_source(**kw))
    return p
