"""``k1412 eval --html``: one self-contained page (inline CSS and SVG, no scripts, nothing fetched)."""

from __future__ import annotations

from html import escape
from typing import Any

from k1412_ls.core.cost import Cost, describe_cost

STATUS_COLORS = {"completed": "#2e7d32", "unverified": "#f9a825", "failed": "#c62828", "cancelled": "#757575"}
METRIC_COLORS = {"check_pass_rate": "#1565c0", "gate_precision": "#6a1b9a", "gate_recall": "#00838f"}
LATENCY_COLORS = {"p50": "#5c6bc0", "p95": "#283593"}
_LABEL_W = 150
_BAR_W = 520
_ROW_H = 26


def _svg(width: int, height: int, body: list[str], title: str) -> str:
    return (f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" role="img" '
            f'aria-label="{escape(title)}" viewBox="0 0 {width} {height}">' + "".join(body) + "</svg>")


def _label(y: float, text: str) -> str:
    return f'<text x="{_LABEL_W - 8}" y="{y + _ROW_H * 0.62:.1f}" text-anchor="end">{escape(text)}</text>'


def verdict_chart(arms: list[dict[str, Any]]) -> str:
    """Stacked bars: each arm's runs by verdict."""
    most = max((arm["runs"] for arm in arms), default=0) or 1
    body: list[str] = []
    for row, arm in enumerate(arms):
        y = 10 + row * (_ROW_H + 8)
        body.append(_label(y, arm["name"]))
        x = float(_LABEL_W)
        for status, color in STATUS_COLORS.items():
            count = arm.get(status, 0)
            if not count:
                continue
            width = _BAR_W * count / most
            body.append(f'<rect x="{x:.1f}" y="{y}" width="{width:.1f}" height="{_ROW_H}" fill="{color}">'
                        f"<title>{escape(arm['name'])}: {count} {status}</title></rect>")
            if width > 18:
                body.append(f'<text x="{x + width / 2:.1f}" y="{y + _ROW_H * 0.65:.1f}" text-anchor="middle" '
                            f'style="fill:#fff">{count}</text>')
            x += width
    height = 20 + len(arms) * (_ROW_H + 8)
    return _svg(_LABEL_W + _BAR_W + 20, height, body, "runs by verdict per arm")


def grouped_chart(arms: list[dict[str, Any]], series: dict[str, str], value: Any, scale: float, unit: str,
                  title: str) -> str:
    """Horizontal grouped bars, one group per arm and one bar per series (missing values say so)."""
    body: list[str] = []
    bar_h = 16
    group_h = bar_h * len(series) + 14
    for row, arm in enumerate(arms):
        y0 = 10 + row * group_h
        body.append(_label(y0 + (group_h - 14 - _ROW_H) / 2, arm["name"]))
        for index, (name, color) in enumerate(series.items()):
            y = y0 + index * bar_h
            number = value(arm, name)
            if number is None:
                body.append(f'<text x="{_LABEL_W + 4}" y="{y + 12}">{escape(name.replace("_", " "))}: no data</text>')
                continue
            width = _BAR_W * (number / scale) if scale else 0.0
            body.append(f'<rect x="{_LABEL_W}" y="{y}" width="{max(width, 1.0):.1f}" height="{bar_h - 3}" '
                        f'fill="{color}"><title>{escape(arm["name"])} {escape(name)}: {number:g}{unit}</title></rect>')
            body.append(f'<text x="{_LABEL_W + max(width, 1.0) + 6:.1f}" y="{y + 11}">'
                        f'{escape(name.replace("_", " "))} {number:.3g}{escape(unit)}</text>')
    return _svg(_LABEL_W + _BAR_W + 200, 20 + len(arms) * group_h, body, title)


def _legend(colors: dict[str, str]) -> str:
    return "".join(f'<span class="key"><i style="background:{c}"></i>{escape(n.replace("_", " "))}</span>'
                   for n, c in colors.items())


def _pct(value: float | None) -> str:
    return "–" if value is None else f"{100 * value:.0f}%"


def _arm_table(arms: list[dict[str, Any]]) -> str:
    head = ("arm", "runs", "completed", "unverified", "failed", "cancelled", "check passed", "gate precision",
            "gate recall", "tokens", "cost", "latency p50", "latency p95")
    rows = ["<tr>" + "".join(f"<th>{h}</th>" for h in head) + "</tr>"]
    for arm in arms:
        latency = arm["latency_s"]
        cells = (arm["name"], arm["runs"], arm["completed"], arm["unverified"], arm["failed"], arm["cancelled"],
                 f"{arm['check_passed']}/{arm['checked']}", _pct(arm["gate_precision"]), _pct(arm["gate_recall"]),
                 f"{arm['tokens']:,}", describe_cost(Cost.from_dict(arm["cost"])),
                 "–" if latency["p50"] is None else f"{latency['p50']:.2f} s",
                 "–" if latency["p95"] is None else f"{latency['p95']:.2f} s")
        rows.append("<tr>" + "".join(f"<td>{escape(str(c))}</td>" for c in cells) + "</tr>")
    return "<table>" + "".join(rows) + "</table>"


def _task_table(report: dict[str, Any]) -> str:
    arms = [arm["name"] for arm in report["arms"]]
    head = "<tr><th>task</th>" + "".join(f"<th>{escape(a)}</th>" for a in arms) + "</tr>"
    rows = [head]
    for task in report["tasks"]:
        cells = []
        for arm in arms:
            runs = [r for r in report["runs"] if r["task_id"] == task and r["arm"] == arm]
            done = sum(1 for r in runs if r["status"] == "completed")
            checked = [r for r in runs if r["check_passed"] is not None]
            passed = sum(1 for r in checked if r["check_passed"])
            check = f" · check {passed}/{len(checked)}" if checked else ""
            cells.append(f"<td>completed {done}/{len(runs)}{check}</td>")
        rows.append(f"<tr><td>{escape(task)}</td>{''.join(cells)}</tr>")
    return "<table>" + "".join(rows) + "</table>"


_STYLE = """
body{font:14px/1.45 system-ui,-apple-system,'Segoe UI',sans-serif;margin:24px;color:#222;max-width:1100px}
h1{font-size:22px;margin:0 0 4px} h2{font-size:17px;margin:28px 0 8px}
.sub{color:#555;margin-bottom:16px} svg text{font-size:12px;fill:#222}
table{border-collapse:collapse;margin:8px 0} th,td{border:1px solid #ccc;padding:4px 8px;text-align:right}
th:first-child,td:first-child{text-align:left} th{background:#f3f3f3}
.key{margin-right:14px} .key i{display:inline-block;width:12px;height:12px;margin-right:5px;vertical-align:-1px}
.note{color:#555;font-size:13px}
"""


def render_html(report: dict[str, Any]) -> str:
    """The whole report page."""
    arms = report["arms"]
    executor = report.get("executor") or {}
    where = f"Ray cluster {executor.get('address')}" if executor.get("kind") == "ray" else \
        f"{executor.get('workers', '?')} local processes"
    max_cost = max((arm["cost"]["amount"] for arm in arms), default=0.0) or 1.0
    max_latency = max((arm["latency_s"]["p95"] or 0.0 for arm in arms), default=0.0) or 1.0
    rates = grouped_chart(arms, METRIC_COLORS, lambda arm, name: arm[name], 1.0, "", "check and gate rates per arm")
    costs = grouped_chart(arms, {"cost": "#ef6c00"},
                          lambda arm, _: arm["cost"]["amount"] if arm["cost"]["priced"] else None,
                          max_cost, " USD", "cost per arm")
    latency = grouped_chart(arms, LATENCY_COLORS, lambda arm, name: arm["latency_s"][name], max_latency, " s",
                            "latency per arm")
    total = sum(arm["runs"] for arm in arms)
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>K1412 eval: {escape(report['experiment'])}</title>
<style>{_STYLE}</style></head><body>
<h1>K1412 evaluation · {escape(report['experiment'])}</h1>
<div class="sub">{total} runs · {len(report['tasks'])} tasks × {len(arms)} arms × {report['repeat']} · {escape(where)}
 · suite {escape(report['suite'])}</div>
<h2>Verdicts</h2><div>{_legend(STATUS_COLORS)}</div>{verdict_chart(arms)}
<h2>Check pass rate, gate precision and recall</h2><div>{_legend(METRIC_COLORS)}</div>{rates}
<p class="note">Gate precision: completed runs whose check passed / completed runs with a check.
Gate recall: completed runs whose check passed / runs whose check passed.</p>
<h2>Cost</h2>{costs}
<h2>Latency</h2><div>{_legend(LATENCY_COLORS)}</div>{latency}
<h2>Arms</h2>{_arm_table(arms)}
<h2>Tasks</h2>{_task_table(report)}
</body></html>
"""


__all__ = ["render_html"]
