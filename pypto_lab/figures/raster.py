"""Arrays as pictures, with numpy only: a 2-D array through a plotly colour scale into
RGBA pixels (NaN transparent), and RGBA pixels as a PNG file - what the static SVG of a
figure (`static_svg`) embeds for each heatmap trace."""
from __future__ import annotations

import base64
import re
import struct
import zlib

import numpy as np

NAMED_SCALES = {"Blues": [[0, "#f7fbff"], [1, "#08306b"]],
                 "Reds": [[0, "#fff5f0"], [1, "#67000d"]],
                 "Viridis": [[0, "#440154"], [0.5, "#21918c"], [1, "#fde725"]]}

def png_uri(z: np.ndarray, lo: float, hi: float, scale: list) -> str:
    """A 2-D array drawn through a colour scale, as a PNG data URI (NaN transparent)."""
    rgba = colorize(z, lo, hi, scale)
    return "data:image/png;base64," + base64.b64encode(png_bytes(rgba)).decode("ascii")


def png_bytes(rgba: np.ndarray) -> bytes:
    """An (h, w, 4) uint8 array as a PNG file (RGBA, no filter, zlib level 6)."""
    h, w, _ = rgba.shape
    raw = np.zeros((h, w * 4 + 1), dtype=np.uint8)
    raw[:, 1:] = rgba.reshape(h, w * 4)

    def chunk(kind: bytes, payload: bytes) -> bytes:
        return (struct.pack(">I", len(payload)) + kind + payload
                + struct.pack(">I", zlib.crc32(kind + payload) & 0xFFFFFFFF))

    head = struct.pack(">IIBBBBB", w, h, 8, 6, 0, 0, 0)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", head)
            + chunk(b"IDAT", zlib.compress(raw.tobytes(), 6)) + chunk(b"IEND", b""))


def colorize(z: np.ndarray, lo: float, hi: float, scale: list) -> np.ndarray:
    stops = np.array([float(s[0]) for s in scale])
    rgb = np.array([to_rgb(s[1]) for s in scale], dtype=float)
    frac = np.clip((z - lo) / ((hi - lo) or 1.0), 0.0, 1.0)
    frac = np.where(np.isfinite(frac), frac, 0.0)
    out = np.zeros(z.shape + (4,), dtype=np.uint8)
    for c in range(3):
        out[..., c] = np.round(np.interp(frac, stops, rgb[:, c])).astype(np.uint8)
    out[..., 3] = np.where(np.isfinite(z), 255, 0)
    return out


def to_rgb(color: str) -> tuple[float, float, float]:
    color = color.strip()
    if color.startswith("#"):
        h = color[1:]
        if len(h) == 3:
            h = "".join(c * 2 for c in h)
        return (int(h[0:2], 16), int(h[2:4], 16), int(h[4:6], 16))
    m = re.match(r"rgba?\(([^)]*)\)", color)
    if m:
        parts = [float(p) for p in m.group(1).split(",")[:3]]
        return (parts[0], parts[1], parts[2])
    return (128.0, 128.0, 128.0)
