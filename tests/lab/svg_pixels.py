"""Reading back what `figures.static_svg` drew: its PNG layers, as pixels."""
from __future__ import annotations

import base64
import re
import zlib

import numpy as np


def read_png(data: bytes) -> np.ndarray:
    """An RGBA PNG with filter 0 rows (what `png_bytes` writes) as an (h, w, 4) array."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat, size = 8, b"", None
    while pos < len(data):
        (n,) = np.frombuffer(data[pos:pos + 4], ">u4")
        kind, body = data[pos + 4:pos + 8], data[pos + 8:pos + 8 + int(n)]
        crc = int(np.frombuffer(data[pos + 8 + int(n):pos + 12 + int(n)], ">u4")[0])
        assert crc == zlib.crc32(kind + body) & 0xFFFFFFFF, kind
        if kind == b"IHDR":
            size = tuple(int(v) for v in np.frombuffer(body[:8], ">u4"))
            assert body[8:10] == b"\x08\x06"  # 8-bit RGBA
        elif kind == b"IDAT":
            idat += body
        pos += 12 + int(n)
    w, h = size
    raw = np.frombuffer(zlib.decompress(idat), np.uint8).reshape(h, w * 4 + 1)
    assert not raw[:, 0].any(), "filter 0 rows"
    return raw[:, 1:].reshape(h, w, 4)


def images(svg: str) -> list[tuple[tuple[float, float, float, float], np.ndarray]]:
    """The embedded PNG layers of an SVG: ((x, y, width, height), pixels), in order."""
    out = []
    for m in re.finditer(r"<image x='([-\d.]+)' y='([-\d.]+)' width='([\d.]+)' "
                         r"height='([\d.]+)'[^>]*href='data:image/png;base64,([^']+)'", svg):
        box = tuple(float(v) for v in m.groups()[:4])
        out.append((box, read_png(base64.b64decode(m.group(5)))))
    return out


def composite(svg: str) -> np.ndarray:
    """The heatmap layers of `svg` stacked bottom to top on one grid of cells (every
    layer's pixel is opaque or fully transparent; each layer sits where its box says)."""
    layers = images(svg)
    (bx, by, bw, bh), big = max(layers, key=lambda layer: layer[1].size)
    ch, cw = bh / big.shape[0], bw / big.shape[1]
    x0 = min(b[0] for b, _ in layers)
    y0 = min(b[1] for b, _ in layers)
    rows = round((max(b[1] + b[3] for b, _ in layers) - y0) / ch)
    cols = round((max(b[0] + b[2] for b, _ in layers) - x0) / cw)
    top = np.zeros((rows, cols, 3), np.uint8)
    for (x, y, w, h), p in layers:
        assert (round(h / ch), round(w / cw)) == p.shape[:2], "one pixel per cell"
        r, c = round((y - y0) / ch), round((x - x0) / cw)
        window = top[r:r + p.shape[0], c:c + p.shape[1]]
        window[:] = np.where(p[..., 3:] == 255, p[..., :3], window)
    return top


def hex_rgb(color: str) -> list[int]:
    return [int(color[i:i + 2], 16) for i in (1, 3, 5)]
