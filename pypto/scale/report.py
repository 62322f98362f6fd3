"""What a corpus run leaves behind: progress lines, a JSON result and an HTML report.

The JSON document is rewritten after every finished file, so an interrupted run
still leaves every result it had. Its shape:

    {"tool": "pypto-sim", "version": this pypto-lab's, "started": ISO time,
     "state": "running" | "finished" | "interrupted" | "cluster lost",
     "seconds": wall time,
     "cluster": {"kind": "local" | "scheduler" | "serial", "scheduler", "workers",
                 "dashboard", "workers_lost": [addresses], "ran_again": [files], ...},
     "options": {...}, "counts": {status: n}, "peak_mb": max over files,
     "files": [{"file", "path", "status", "reason", "seconds", "cpu_seconds", "peak_mb",
                "exit_code", "runs": [harness records], "worker", "version" (the
                pypto-lab its process ran), "attempts" (workers, when it started more
                than once), "output"}, ...]}

Every file given is listed; one without a result is "not-run", with why.
"""
from __future__ import annotations

import html
import json
import time
from collections import Counter
from pathlib import Path

from pypto.scale.runfile import STATUSES

_COLOURS = {"pass": "#1a7f37", "diagnosed": "#9a6700", "fail": "#cf222e",
            "timeout": "#cf222e", "killed": "#8250df", "skip": "#6e7781",
            "not-run": "#6e7781"}


def counts(results: list[dict]) -> dict:
    c = {s: 0 for s in STATUSES}
    for r in results:
        c[r["status"]] = c.get(r["status"], 0) + 1
    return {s: n for s, n in c.items() if n}


def all_good(results: list[dict]) -> bool:
    return all(r["status"] in ("pass", "skip") for r in results)


def progress_line(r: dict, done: int, total: int) -> str:
    width = len(str(total))
    peak = f"{r['peak_mb']:7.0f} MB" if r.get("peak_mb") is not None else " " * 10
    reason = r["reason"] if len(r["reason"]) <= 140 else r["reason"][:137] + "..."
    return (f"[{done:>{width}}/{total}] {r['status']:<9} {r['seconds']:7.1f} s {peak}  "
            f"{r['file']}" + (f"  {reason}" if reason else ""))


def summary_line(results: list[dict], seconds: float, cluster: dict | None = None) -> str:
    c = counts(results)
    peak = max((r["peak_mb"] for r in results if r.get("peak_mb") is not None), default=None)
    summed = sum(r["seconds"] for r in results)
    cpu = sum(r.get("cpu_seconds") or 0 for r in results)
    line = (f"{len(results)} files: " + ", ".join(f"{n} {s}" for s, n in c.items())
            + f"; {seconds:.1f} s wall, {summed:.1f} s summed over files, {cpu:.1f} s CPU"
            + (f", peak {peak:.0f} MB (largest file)" if peak is not None else ""))
    return line + "".join(f"; {note}" for note in notes(results, cluster or {}))


def notes(results: list[dict], cluster: dict) -> list[str]:
    """What the summary adds: workers lost, files run more than once, pypto-lab
    versions when the files did not all run with one."""
    out = []
    lost = cluster.get("workers_lost") or []
    if lost:
        out.append(f"{len(lost)} worker(s) died or left: {', '.join(lost)}")
    again = cluster.get("ran_again") or []
    if again:
        out.append(f"ran more than once: {', '.join(again)}")
    versions = Counter(r["version"] for r in results if r.get("version"))
    if len(versions) > 1:
        out.append("pypto-lab versions: " + ", ".join(
            f"{v} ({n} files)" for v, n in sorted(versions.items())))
    return out


def document(results: list[dict], started: float, seconds: float, cluster: dict,
             options: dict) -> dict:
    peak = max((r["peak_mb"] for r in results if r.get("peak_mb") is not None), default=None)
    return {"tool": "pypto-sim",
            "started": time.strftime("%Y-%m-%dT%H:%M:%S", time.localtime(started)),
            "seconds": round(seconds, 2), "cluster": cluster, "options": options,
            "counts": counts(results), "peak_mb": peak, "files": results}


def write_json(path: Path, doc: dict) -> None:
    tmp = path.with_name(path.name + ".part")
    tmp.write_text(json.dumps(doc, indent=1, default=str), encoding="utf-8")
    tmp.replace(path)  # a reader never sees half a document


def _row(r: dict) -> str:
    colour = _COLOURS.get(r["status"], "#000")
    peak = "" if r.get("peak_mb") is None else f"{r['peak_mb']:.0f}"
    detail = ""
    if r.get("output"):
        detail = ("<details><summary>output (last lines)</summary><pre>"
                  + html.escape(r["output"]) + "</pre></details>")
    return (f"<tr><td><code>{html.escape(r['file'])}</code></td>"
            f"<td style='color:{colour};font-weight:600'>{r['status']}</td>"
            f"<td class=n>{r['seconds']:.1f}</td><td class=n>{peak}</td>"
            f"<td>{html.escape(r.get('worker') or r.get('host') or '')}</td>"
            f"<td>{html.escape(r['reason'])}{detail}</td></tr>")


def write_html(path: Path, doc: dict) -> None:
    files = doc["files"]
    badges = " ".join(
        f"<span style='color:{_COLOURS.get(s, '#000')};font-weight:600'>{n} {s}</span>"
        for s, n in doc["counts"].items())
    cluster = doc["cluster"]
    where = html.escape(", ".join(f"{k}: {v}" for k, v in cluster.items()))
    order = {s: i for i, s in enumerate(("fail", "timeout", "killed", "not-run", "diagnosed",
                                         "pass", "skip"))}
    rows = "".join(_row(r) for r in sorted(files, key=lambda r: order.get(r["status"], 9)))
    peak = "" if doc["peak_mb"] is None else f", largest file peak {doc['peak_mb']:.0f} MB"
    extra = "".join(f"; {n}" for n in notes(files, cluster))
    path.write_text(f"""<!doctype html><html><head><meta charset="utf-8">
<title>pypto-sim: {len(files)} files</title><style>
body{{font:14px system-ui,sans-serif;margin:24px;color:#1f2328}}
table{{border-collapse:collapse;width:100%}}
td,th{{border-bottom:1px solid #d0d7de;padding:4px 8px;text-align:left;vertical-align:top}}
td.n{{text-align:right;font-variant-numeric:tabular-nums}}
pre{{font-size:12px;white-space:pre-wrap}}
</style></head><body>
<h2>pypto-sim conformance: {len(files)} files</h2>
<p>{badges}</p>
<p>started {doc['started']}, {doc['seconds']:.1f} s wall{peak}; {where}; pypto-lab
{html.escape(str(doc.get('version', '')))}{html.escape(extra)}; {doc.get('state', '')}</p>
<table><tr><th>file</th><th>status</th><th>s</th><th>peak MB</th><th>worker</th>
<th>reason</th></tr>{rows}</table></body></html>
""", encoding="utf-8")
