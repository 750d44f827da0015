"""Two small plots as hand-written SVG: estimates with error bars, and a scatter.

Written here rather than with matplotlib: the pages need two plain charts, and this keeps
the pipeline free of a plotting library (no import cost, no fonts, byte-identical output
for identical input).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from xml.sax.saxutils import escape

FONT = 'font-family="sans-serif" font-size="12"'
INK = "#333"
ACCENT = "#3f51b5"


def _ticks(lo: float, hi: float, count: int = 5) -> list[float]:
    if not (math.isfinite(lo) and math.isfinite(hi)) or hi <= lo:
        return [lo]
    raw = (hi - lo) / count
    mag = 10 ** math.floor(math.log10(raw))
    step = min((m * mag for m in (1, 2, 2.5, 5, 10) if m * mag >= raw), default=10 * mag)
    start = math.ceil(lo / step) * step
    out = []
    x = start
    while x <= hi + step * 1e-9:
        out.append(round(x, 10))
        x += step
    return out


def _fmt(x: float) -> str:
    return f"{x:.2f}".rstrip("0").rstrip(".") if x != 0 else "0"


def _range(values: Sequence[float], pad: float = 0.05) -> tuple[float, float]:
    finite = [v for v in values if math.isfinite(v)]
    if not finite:
        return (0.0, 1.0)
    lo, hi = min(finite), max(finite)
    if hi == lo:
        lo, hi = lo - 0.5, hi + 0.5
    span = hi - lo
    return (lo - pad * span, hi + pad * span)


def errorbar_plot(
    labels: Sequence[str], values: Sequence[float], errors: Sequence[float], title: str, xlabel: str
) -> str:
    """One row per label: a dot at the value and a bar of +- error, rows top to bottom."""
    rows = len(labels)
    left, right, top, row_h = 260, 30, 40, 22
    width, height = 760, top + max(rows, 1) * row_h + 50
    lo, hi = _range(
        [v - e for v, e in zip(values, errors, strict=True)] + [v + e for v, e in zip(values, errors, strict=True)]
    )
    plot_w = width - left - right

    def x(v: float) -> float:
        return left + (v - lo) / (hi - lo) * plot_w

    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" viewBox="0 0 {width} {height}" role="img">',
        f"<title>{escape(title)}</title>",
        f'<rect width="{width}" height="{height}" fill="white"/>',
        f'<text x="{width / 2:.1f}" y="20" text-anchor="middle" {FONT} font-weight="bold" fill="{INK}">{escape(title)}</text>',
    ]
    bottom = top + rows * row_h
    for t in _ticks(lo, hi):
        out.append(f'<line x1="{x(t):.1f}" y1="{top}" x2="{x(t):.1f}" y2="{bottom}" stroke="#ddd"/>')
        out.append(f'<text x="{x(t):.1f}" y="{bottom + 16}" text-anchor="middle" {FONT} fill="{INK}">{_fmt(t)}</text>')
    out.append(f'<line x1="{left}" y1="{bottom}" x2="{width - right}" y2="{bottom}" stroke="{INK}"/>')
    out.append(
        f'<text x="{left + plot_w / 2:.1f}" y="{bottom + 36}" text-anchor="middle" {FONT} fill="{INK}">{escape(xlabel)}</text>'
    )
    for k, (label, v, e) in enumerate(zip(labels, values, errors, strict=True)):
        y = top + k * row_h + row_h / 2
        short = label if len(label) <= 40 else label[:39] + "…"
        out.append(f'<text x="{left - 8}" y="{y + 4:.1f}" text-anchor="end" {FONT} fill="{INK}">{escape(short)}</text>')
        out.append(
            f'<line x1="{x(v - e):.1f}" y1="{y:.1f}" x2="{x(v + e):.1f}" y2="{y:.1f}" stroke="{ACCENT}" stroke-width="2"/>'
        )
        for end in (v - e, v + e):
            out.append(
                f'<line x1="{x(end):.1f}" y1="{y - 5:.1f}" x2="{x(end):.1f}" y2="{y + 5:.1f}" stroke="{ACCENT}"/>'
            )
        out.append(f'<circle cx="{x(v):.1f}" cy="{y:.1f}" r="4" fill="{ACCENT}"/>')
    out.append("</svg>")
    return "\n".join(out) + "\n"


def scatter_plot(xs: Sequence[float], ys: Sequence[float], title: str, xlabel: str, ylabel: str) -> str:
    """A scatter of (x, y) points with axes and ticks."""
    width, height = 640, 420
    left, right, top, bottom = 60, 20, 40, 360
    xlo, xhi = _range(xs)
    ylo, yhi = _range(ys)

    def px(v: float) -> float:
        return left + (v - xlo) / (xhi - xlo) * (width - left - right)

    def py(v: float) -> float:
        return bottom - (v - ylo) / (yhi - ylo) * (bottom - top)

    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" viewBox="0 0 {width} {height}" role="img">',
        f"<title>{escape(title)}</title>",
        f'<rect width="{width}" height="{height}" fill="white"/>',
        f'<text x="{width / 2:.1f}" y="20" text-anchor="middle" {FONT} font-weight="bold" fill="{INK}">{escape(title)}</text>',
    ]
    for t in _ticks(xlo, xhi):
        out.append(f'<line x1="{px(t):.1f}" y1="{top}" x2="{px(t):.1f}" y2="{bottom}" stroke="#eee"/>')
        out.append(f'<text x="{px(t):.1f}" y="{bottom + 16}" text-anchor="middle" {FONT} fill="{INK}">{_fmt(t)}</text>')
    for t in _ticks(ylo, yhi):
        out.append(f'<line x1="{left}" y1="{py(t):.1f}" x2="{width - right}" y2="{py(t):.1f}" stroke="#eee"/>')
        out.append(f'<text x="{left - 6}" y="{py(t) + 4:.1f}" text-anchor="end" {FONT} fill="{INK}">{_fmt(t)}</text>')
    out.append(f'<line x1="{left}" y1="{bottom}" x2="{width - right}" y2="{bottom}" stroke="{INK}"/>')
    out.append(f'<line x1="{left}" y1="{top}" x2="{left}" y2="{bottom}" stroke="{INK}"/>')
    out.append(
        f'<text x="{(left + width - right) / 2:.1f}" y="{bottom + 40}" text-anchor="middle" {FONT} fill="{INK}">{escape(xlabel)}</text>'
    )
    mid = (top + bottom) / 2
    out.append(
        f'<text x="16" y="{mid:.1f}" text-anchor="middle" transform="rotate(-90 16 {mid:.1f})" {FONT} fill="{INK}">{escape(ylabel)}</text>'
    )
    # points that fall on the same spot (2-pixel cells) are drawn once, their area growing
    # with how many they are; a tooltip gives the count
    cells: dict[tuple[int, int], list[float]] = {}
    for xv, yv in zip(xs, ys, strict=True):
        if math.isfinite(xv) and math.isfinite(yv):
            cell = cells.setdefault((round(px(xv) / 2), round(py(yv) / 2)), [0.0, 0.0, 0.0])
            cell[0] += 1
            cell[1] += xv
            cell[2] += yv
    for (cx, cy), (count, sx, sy) in sorted(cells.items()):
        r = min(12.0, 2.5 + 1.2 * math.sqrt(count - 1))
        tip = f"{_fmt(sx / count)}, {_fmt(sy / count)}: {int(count)} item{'s' if count > 1 else ''}"
        out.append(
            f'<circle cx="{cx * 2}" cy="{cy * 2}" r="{r:.1f}" fill="{ACCENT}" fill-opacity="0.55">'
            f"<title>{escape(tip)}</title></circle>"
        )
    if any(c[0] > 1 for c in cells.values()):
        out.append(
            f'<text x="{width - right}" y="{height - 6}" text-anchor="end" {FONT} fill="#777">'
            "larger dots: several items at one spot</text>"
        )
    out.append("</svg>")
    return "\n".join(out) + "\n"
