"""Two small plots as hand-written SVG: estimates with error bars, and a scatter.

Written here rather than with matplotlib: the pages need two plain charts, and this keeps
the pipeline free of a plotting library (no import cost, no fonts, byte-identical output
for identical input).

No label is cut: the room for the row labels and the width of the plot follow the
labels' lengths (:func:`text_width`, measured with the widest of the common sans-serif
faces, so they fit whichever face the reader's browser picks); a label longer than
:data:`MAX_LABEL` pixels, or a title wider than its plot, is shortened in the middle (its
end stays) and carries the whole text as its tooltip. Labels are data (model ids, benchmark names):
written as XML text, control characters shown as U+FFFD.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from xml.sax.saxutils import escape

from eee.site.mdtext import plain

SIZE = 12  # px, every text of the plots
FONT = f'font-family="sans-serif" font-size="{SIZE}"'
INK = "#333"
ACCENT = "#3f51b5"
MAX_LABEL = 420  # px: a longer row label is shortened (its tooltip has it whole)

# Advance widths in em of DejaVu Sans (Debian's sans-serif), the widest of the common
# sans-serif faces (Arial, Helvetica and Liberation Sans are narrower); measured in Chromium.
# Characters beyond ASCII count as one em.
_EM = dict(
    zip(
        " !\"#$%&'()*+,-./0123456789:;<=>?@ABCDEFGHIJKLMNOPQRSTUVWXYZ[\\]^_`abcdefghijklmnopqrstuvwxyz{|}~",
        [0.318, 0.401, 0.46, 0.838, 0.637, 0.951, 0.78, 0.275, 0.391, 0.391, 0.5, 0.838, 0.318, 0.361, 0.318, 0.337]
        + [0.637] * 10
        + [0.337, 0.337, 0.838, 0.838, 0.838, 0.531, 1.0, 0.71, 0.687, 0.699, 0.771, 0.632, 0.576, 0.775, 0.752]
        + [0.295, 0.295, 0.656, 0.558, 0.863, 0.749, 0.788, 0.604, 0.788, 0.695, 0.635, 0.596, 0.732, 0.685, 0.989]
        + [0.686, 0.611, 0.686, 0.391, 0.337, 0.391, 0.838, 0.5, 0.5, 0.613, 0.635, 0.55, 0.635, 0.616, 0.345]
        + [0.635, 0.634, 0.278, 0.278, 0.58, 0.278, 0.975, 0.634, 0.612, 0.635, 0.635, 0.396, 0.521, 0.393, 0.634]
        + [0.592, 0.818, 0.592, 0.592, 0.525, 0.637, 0.337, 0.637, 0.838],
        strict=True,
    )
)
BOLD = 1.12  # a bold face is at most this much wider


def text_width(text: str, size: float = SIZE, bold: bool = False) -> float:
    """An upper bound of the width in px of ``text`` in a sans-serif face at ``size`` px."""
    return sum(_EM.get(c, 1.0) for c in text) * size * (BOLD if bold else 1.0)


def shorten(text: str, room: float, bold: bool = False) -> str:
    """``text`` (one line) cut to fit ``room`` px with an ellipsis in the middle, so that its
    end stays (a label ends with what tells two runs of a model apart), or whole when it fits."""
    if text_width(text, bold=bold) <= room:
        return text
    tail_room = min(room * 0.4, text_width(text[-24:], bold=bold))
    tail = ""
    for c in reversed(text):
        if text_width(c + tail, bold=bold) > tail_room:
            break
        tail = c + tail
    head = ""
    for c in text:
        if text_width(head + c + "…" + tail, bold=bold) > room:
            break
        head += c
    return head.rstrip() + "…" + tail.lstrip()


def _label(x: float, y: float, text: str, room: float, attrs: str) -> str:
    """A ``<text>`` at (x, y) that fits ``room`` px; shortened, it sits in a group whose
    ``<title>`` (the tooltip) holds the whole text."""
    bold = "font-weight" in attrs
    short = shorten(text, room, bold)
    element = f'<text x="{x:.1f}" y="{y:.1f}" {attrs}>{escape(short)}</text>'
    return element if short == text else f"<g><title>{escape(text)}</title>{element}</g>"


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
    """One row per label: a dot at the value and a bar of +- error, rows top to bottom. The
    labels' column is as wide as the longest label (up to :data:`MAX_LABEL` px)."""
    labels = [plain(label) for label in labels]
    title = plain(title)
    rows = len(labels)
    widest = max((text_width(shorten(label, MAX_LABEL)) for label in labels), default=0.0)
    right, top, row_h, plot_w = 30, 40, 22, 470
    left = max(60, math.ceil(widest) + 16)
    width, height = left + plot_w + right, top + max(rows, 1) * row_h + 50
    lo, hi = _range(
        [v - e for v, e in zip(values, errors, strict=True)] + [v + e for v, e in zip(values, errors, strict=True)]
    )

    def x(v: float) -> float:
        return left + (v - lo) / (hi - lo) * plot_w

    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" viewBox="0 0 {width} {height}" role="img">',
        f"<title>{escape(title)}</title>",
        f'<rect width="{width}" height="{height}" fill="white"/>',
        _label(width / 2, 20, title, width - 20, f'text-anchor="middle" {FONT} font-weight="bold" fill="{INK}"'),
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
        out.append(_label(left - 8, y + 4, label, MAX_LABEL, f'text-anchor="end" {FONT} fill="{INK}"'))
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
    title = plain(title)
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
        _label(width / 2, 20, title, width - 20, f'text-anchor="middle" {FONT} font-weight="bold" fill="{INK}"'),
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
