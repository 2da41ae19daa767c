"""``k1412 judge --html FILE``: the verdicts against the outcomes as one self-contained page (inline SVG)."""

from __future__ import annotations

from html import escape
from typing import Any

from k1412_ls.judge.verdicts import Judgement

_COLORS = {"resolved": "#2e7d32", "unresolved": "#c62828"}
_STYLE = """body{font-family:system-ui,sans-serif;margin:24px;color:#222;max-width:1100px}
table{border-collapse:collapse;font-size:13px} td,th{border:1px solid #ccc;padding:3px 8px;text-align:left}
svg text{font-size:12px;fill:#222} .note{color:#555;font-size:13px}
.key{margin-right:14px} .key i{display:inline-block;width:12px;height:12px;margin-right:5px;vertical-align:-1px}"""


def _bars(report: dict[str, Any]) -> str:
    """Two stacked bars (completed, unverified), each split into resolved and unresolved runs."""
    rows = [("completed", report["completed_resolved"], report["completed_unresolved"]),
            ("unverified", report["unverified_resolved"], report["unverified_unresolved"])]
    widest = max((r + u for _, r, u in rows), default=0) or 1
    scale = 520 / widest
    body: list[str] = []
    for index, (name, resolved, unresolved) in enumerate(rows):
        y = 14 + index * 34
        body.append(f'<text x="0" y="{y + 15}">{name}</text>')
        x = 90.0
        for count, key in ((resolved, "resolved"), (unresolved, "unresolved")):
            width = count * scale
            if width:
                body.append(f'<rect x="{x:.1f}" y="{y}" width="{width:.1f}" height="22" fill="{_COLORS[key]}">'
                            f"<title>{name}, {key}: {count}</title></rect>")
                body.append(f'<text x="{x + 4:.1f}" y="{y + 15}" style="fill:#fff">{count}</text>')
            x += width
    return (f'<svg xmlns="http://www.w3.org/2000/svg" width="640" height="90" role="img" '
            f'aria-label="verdicts by outcome" viewBox="0 0 640 90">{"".join(body)}</svg>')


def _rate(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.2f}"


def render_html(judgements: list[Judgement], report: dict[str, Any] | None,
                outcome: dict[str, bool | None]) -> str:
    """The page: the confusion (when labels were given) and one row per run."""
    parts = [f"<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>k1412 judge</title>"
             f"<style>{_STYLE}</style></head><body><h1>k1412 judge · {len(judgements)} runs</h1>"]
    if report is not None:
        keys = "".join(f'<span class="key"><i style="background:{c}"></i>{k}</span>' for k, c in _COLORS.items())
        parts.append(f"<h2>Verdicts against outcomes</h2><div>{keys}</div>{_bars(report)}")
        parts.append(
            f"<p>P(resolved | completed) = <b>{_rate(report['p_resolved_given_completed'])}</b> · "
            f"P(resolved | unverified) = {_rate(report['p_resolved_given_unverified'])} · resolved runs completed "
            f"= <b>{_rate(report['resolved_completed_share'])}</b> · base rate = {_rate(report['base_rate'])} · "
            f"{report['labelled']} labelled, {report['unlabelled']} unlabelled, {report['unreadable']} unreadable</p>"
            '<p class="note">P(resolved | completed) is how often a "completed" verdict was right; the share of '
            "resolved runs completed is how many of the good runs the gate let through. Compare both with the base "
            "rate: a gate that says completed to everything scores the base rate.</p>")
    parts.append("<h2>Runs</h2><table><tr><th>run</th><th>verdict</th><th>outcome</th><th>contract</th>"
                 "<th>steps (mapped)</th><th>first missing</th></tr>")
    for judgement in judgements:
        label = outcome.get(judgement.file)
        shown = "" if label is None else ("resolved" if label else "unresolved")
        marks = " ".join(f"{c['mark']} {c['item']}" for c in judgement.contract)
        first = judgement.missing[0] if judgement.missing else judgement.error
        parts.append(f"<tr><td>{escape(judgement.file)}</td><td>{judgement.status}</td><td>{shown}</td>"
                     f"<td>{escape(marks)}</td><td>{judgement.steps} ({judgement.mapped})</td>"
                     f"<td>{escape(first[:160])}</td></tr>")
    parts.append("</table></body></html>\n")
    return "".join(parts)
