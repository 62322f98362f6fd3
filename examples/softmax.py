import pypto.language as pl

ROWS = 512
COLS = 256
ROW_TILE = 64

@pl.jit
def softmax(
    x: pl.Tensor[[ROWS, COLS], pl.FP32],
    y: pl.Out[pl.Tensor[[ROWS, COLS], pl.FP32]],
):
    for r in pl.parallel(0, ROWS, ROW_TILE):
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="softmax_rows"):
            tile_x = x[r : r + ROW_TILE, :]
            row_max = pl.row_max(tile_x)
            shifted = pl.row_expand_sub(tile_x, row_max)
            exp_shifted = pl.exp(shifted)
            denom = pl.row_sum(exp_shifted)
            y[r : r + ROW_TILE, :] = pl.row_expand_div(exp_shifted, denom)
    return y


if __name__ == "__main__":
    import numpy as np

    x = np.random.default_rng(0).standard_normal((ROWS, COLS)).astype(np.float32)
    y = np.zeros_like(x)
    softmax(x, y)
    e = np.exp(x - x.max(axis=1, keepdims=True))
    ref = e / e.sum(axis=1, keepdims=True)
    print("max |y - numpy| =", float(np.abs(y - ref).max()))
