"""Render a located error as text or HTML.

Layout (text)::

    error[E106]: dynamic dims cannot be multiplied inside a kernel body
      --> kernel.py:14:28
       |
    13 |     t = pl.tensor.dim(x, 0)
    14 |     y = pl.reshape(x, [B_DYN * S_DYN, D])
       |                        ^^^^^^^^^^^^^
    15 |     ...
       |
       = help: read the dims with pl.tensor.dim and multiply the locals

Source lines come from `linecache`, which also holds IPython cell sources, so a
kernel defined in a notebook cell renders with its cell's lines.
"""
from __future__ import annotations

import linecache
from collections.abc import Callable
from typing import Any

_CONTEXT = 1  # lines shown before and after the offending one

# Who can name a source file better than its path: the notebook front end knows that
# /tmp/ipykernel_4242/2816485.py is the cell In[5]. The core knows no front end; one
# registers a namer (`name_sources`), which returns None for files it does not know.
_source_namers: list[Callable[[str], str | None]] = []


def name_sources(namer: Callable[[str], str | None]) -> None:
    """Register `namer(path) -> label | None` to name source files in error locations
    (once; the latest registered is asked first)."""
    if namer not in _source_namers:
        _source_namers.insert(0, namer)


def forget_source_namer(namer: Callable[[str], str | None]) -> None:
    if namer in _source_namers:
        _source_namers.remove(namer)


def _label(path: str) -> str | None:
    for namer in _source_namers:
        try:
            label = namer(path)
        except Exception:  # noqa: BLE001 - a namer's bug must not hide the error itself
            label = None
        if label:
            return label
    return None


def site_label(site: str) -> str:
    """A `file:line` site (a scope's, as the runtime's records name it) the way a
    location is named: `Cell In[3], line 6` for a notebook cell's file."""
    path, sep, line = site.rpartition(":")
    label = _label(path) if sep and line.isdigit() else None
    return f"{label}, line {line}" if label else site


def location(span: Any) -> str:
    """`file:line:col`, or `<label>, line L, column C` where a namer knows the file."""
    label = _label(span.file)
    if label:
        return f"{label}, line {span.line}, column {span.col}"
    return f"{span.file}:{span.line}:{span.col}"


def _source_window(span: Any) -> list[tuple[int, str]]:
    lines = linecache.getlines(span.file)
    if not lines:
        return []
    lo = max(1, span.line - _CONTEXT)
    hi = min(len(lines), span.line + _CONTEXT)
    return [(n, lines[n - 1].rstrip("\n").expandtabs(4)) for n in range(lo, hi + 1)]


def _caret_width(span: Any, text: str) -> int:
    if span.end_line == span.line and span.end_col > span.col:
        return span.end_col - span.col
    # No end column: underline the token that starts at the column.
    i = span.col - 1
    j = i
    while j < len(text) and (text[j].isalnum() or text[j] in "_."):
        j += 1
    return max(1, j - i)


def _header(err: Any) -> str:
    kind = "warning" if isinstance(err, Warning) else "error"
    code = getattr(err, "code", None)
    return f"{kind}[{code}]" if code else kind


def render_text(err: Any) -> str:
    """The error as plain text: header, location, snippet with caret, hint and note."""
    message = err.message if hasattr(err, "message") else Exception.__str__(err)
    out = [f"{_header(err)}: {message}"]
    span = getattr(err, "span", None)
    pad = "  "  # the gutter: as wide as the largest line number shown
    if span is not None and span.known:
        window = _source_window(span)
        width = len(str(window[-1][0])) if window else 2
        pad = " " * width
        out.append(f"{pad}--> {location(span)}")
        if window:
            out.append(f"{pad} |")
            for n, text in window:
                out.append(f"{str(n).rjust(width)} | {text}")
                if n == span.line:
                    caret = "^" * _caret_width(span, text)
                    out.append(f"{pad} | {' ' * (span.col - 1)}{caret}")
            out.append(f"{pad} |")
    extra = _extra_context(err)
    if extra:
        out.append(f"{pad} = context: {extra}")
    if getattr(err, "hint", None):
        out.append(f"{pad} = help: {err.hint}")
    if getattr(err, "note", None):
        out.append(f"{pad} = note: {err.note}")
    return "\n".join(out)


def _extra_context(err: Any) -> str:
    parts = []
    for attr in ("rank", "tensor", "region", "block", "indices"):
        value = getattr(err, attr, None)
        if value is not None:
            parts.append(f"{attr}={value}")
    return ", ".join(parts)


_HTML_SPECIAL = str.maketrans({"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;",
                               "'": "&#x27;"})


def _escape(text: str) -> str:
    """What html.escape does; the html package costs ~1.7 ms at `import pypto.language`."""
    return text.translate(_HTML_SPECIAL)


def render_html(err: Any) -> str:
    """The same content as `render_text`, as a self-contained HTML block."""
    message = _escape(err.message if hasattr(err, "message") else Exception.__str__(err))
    span = getattr(err, "span", None)
    rows = []
    if span is not None and span.known:
        for n, text in _source_window(span):
            cls = "pp-bad" if n == span.line else ""
            line = _escape(text)
            if n == span.line:
                i = span.col - 1
                w = _caret_width(span, text)
                line = (_escape(text[:i]) + "<mark>" + _escape(text[i:i + w]) + "</mark>"
                        + _escape(text[i + w:]))
            rows.append(f'<div class="{cls}"><span class="pp-ln">{n:>4} |</span> {line}</div>')
    loc = (f'<div class="pp-loc">--&gt; {_escape(location(span))}</div>'
           if span is not None and span.known else "")
    extra = _extra_context(err)
    parts = [
        '<div class="pypto-diagnostic" style="font-family:monospace;border-left:4px solid '
        '#d9534f;padding:4px 8px;background:#fff6f6">',
        f'<div><b style="color:#c9302c">{_header(err)}</b>: {message}</div>',
        loc,
        '<pre style="margin:4px 0">' + "".join(rows) + "</pre>" if rows else "",
        f"<div>= context: {_escape(extra)}</div>" if extra else "",
        f'<div style="color:#2e7d32">= help: {_escape(err.hint)}</div>'
        if getattr(err, "hint", None) else "",
        f'<div style="color:#31708f">= note: {_escape(err.note)}</div>'
        if getattr(err, "note", None) else "",
        "</div>",
    ]
    return "".join(parts)
