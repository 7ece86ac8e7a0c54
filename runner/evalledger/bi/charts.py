"""Charts as server-rendered SVG, inline in the page: no script, no network, no style attribute (the
web app's Content-Security-Policy allows none), and readable without colour: each series has its
own marker shape and dash, each bar or segment its own fill pattern as well as its own colour, and
every value is written out in text (labels, and a <title> on each mark). Each mark carries data-*
attributes naming what it shows (a run, a month), so a test can read a chart as a person does."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from markupsafe import Markup, escape

# Okabe and Ito's palette: told apart by the common colour-vision deficiencies.
COLOURS = ("#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000", "#8C6D1F")
MARKERS = ("circle", "square", "triangle", "diamond", "cross", "down")
DASHES = ("", "6 3", "2 3", "9 3 2 3", "1 4", "12 4")
PATTERNS = ("solid", "hatch", "dots", "cross", "vertical", "open")
FONT = 'font-family="system-ui, sans-serif"'


@dataclass
class Point:
    """One mark of a series: its position on the x axis, its value (None: nothing to plot), the
    text a reader sees on hover and the data-* attributes that say what it is."""

    x: int
    y: float | None
    text: str
    data: dict = field(default_factory=dict)


@dataclass
class Series:
    name: str
    points: list[Point]


@dataclass
class Line:
    """A horizontal reference line (a rubric's threshold), labelled."""

    value: float
    label: str


@dataclass
class Bar:
    """One bar: its label, value, the text written beside it, its style index, data-* attributes."""

    label: str
    value: float
    text: str
    style: int = 0
    data: dict = field(default_factory=dict)
    flag: str = ""


def _attrs(data: dict) -> str:
    return "".join(f' data-{escape(k)}="{escape(v)}"' for k, v in data.items() if v is not None)


def _num(value: float) -> str:
    return f"{value:.2f}".rstrip("0").rstrip(".")


def _defs(chart_id: str, count: int) -> str:
    """A fill pattern per style: solid, diagonal hatch, dots, cross-hatch, vertical lines, open."""
    parts = []
    for n in range(count):
        colour, kind, pid = COLOURS[n % len(COLOURS)], PATTERNS[n % len(PATTERNS)], f"{chart_id}-p{n}"
        body = {
            "solid": f'<rect width="8" height="8" fill="{colour}"/>',
            "hatch": f'<rect width="8" height="8" fill="#fff"/><path d="M-2,2 l4,-4 M0,8 l8,-8 M6,10 l4,-4" '
                     f'stroke="{colour}" stroke-width="2"/>',
            "dots": f'<rect width="8" height="8" fill="#fff"/><circle cx="4" cy="4" r="2" fill="{colour}"/>',
            "cross": f'<rect width="8" height="8" fill="#fff"/><path d="M0,0 l8,8 M8,0 l-8,8" stroke="{colour}" '
                     f'stroke-width="1.5"/>',
            "vertical": f'<rect width="8" height="8" fill="#fff"/><path d="M2,0 v8 M6,0 v8" stroke="{colour}" '
                        f'stroke-width="1.5"/>',
            "open": f'<rect width="8" height="8" fill="#fff"/><rect x="0.5" y="0.5" width="7" height="7" fill="none" '
                    f'stroke="{colour}"/>',
        }[kind]
        parts.append(f'<pattern id="{pid}" width="8" height="8" patternUnits="userSpaceOnUse">{body}</pattern>')
    return f"<defs>{''.join(parts)}</defs>"


def fill(chart_id: str, style: int) -> str:
    return f"url(#{chart_id}-p{style})"


def _marker(kind: str, x: float, y: float, colour: str) -> str:
    r = 4.5
    if kind == "circle":
        return f'<circle cx="{x:.1f}" cy="{y:.1f}" r="{r}" fill="{colour}"/>'
    if kind == "square":
        return f'<rect x="{x - r:.1f}" y="{y - r:.1f}" width="{2 * r}" height="{2 * r}" fill="{colour}"/>'
    if kind == "triangle":
        return f'<path d="M{x:.1f},{y - r - 1:.1f} L{x + r + 1:.1f},{y + r:.1f} L{x - r - 1:.1f},{y + r:.1f} Z" fill="{colour}"/>'
    if kind == "down":
        return f'<path d="M{x:.1f},{y + r + 1:.1f} L{x + r + 1:.1f},{y - r:.1f} L{x - r - 1:.1f},{y - r:.1f} Z" fill="{colour}"/>'
    if kind == "diamond":
        return f'<path d="M{x:.1f},{y - r - 1:.1f} L{x + r + 1:.1f},{y:.1f} L{x:.1f},{y + r + 1:.1f} L{x - r - 1:.1f},{y:.1f} Z" fill="{colour}"/>'
    return (f'<path d="M{x - r:.1f},{y - r:.1f} L{x + r:.1f},{y + r:.1f} M{x + r:.1f},{y - r:.1f} L{x - r:.1f},{y + r:.1f}" '
            f'stroke="{colour}" stroke-width="2.5"/>')


def _frame(chart_id: str, title: str, desc: str, width: int, height: int, body: str, styles: int = 0) -> Markup:
    """The svg element: its title shown at the top and given to assistive technology with its
    description, the fill patterns it uses, and the body below the title."""
    height += 18
    return Markup(
        f'<svg class="chart" id="{escape(chart_id)}" role="img" aria-labelledby="{escape(chart_id)}-t {escape(chart_id)}-d" '
        f'viewBox="0 0 {width} {height}" width="{width}" height="{height}" {FONT} font-size="11">'
        f'<title id="{escape(chart_id)}-t">{escape(title)}</title><desc id="{escape(chart_id)}-d">{escape(desc)}</desc>'
        f'{_defs(chart_id, styles) if styles else ""}'
        f'<text class="chart-title" x="2" y="12" font-weight="bold" font-size="12">{escape(title)}</text>'
        f'<g transform="translate(0 18)">{body}</g></svg>')


def empty(chart_id: str, title: str, message: str, width: int = 640) -> Markup:
    """A chart with nothing to draw: the reason, written where the marks would be."""
    body = (f'<rect x="0.5" y="0.5" width="{width - 1}" height="59" fill="#fafbfc" stroke="#d9dde5"/>'
            f'<text x="{width / 2}" y="34" text-anchor="middle" fill="#5d6677">{escape(message)}</text>')
    return _frame(chart_id, title, message, width, 60, body)


def line_chart(chart_id: str, title: str, desc: str, x_labels: Sequence[str], series: Sequence[Series], *,
               y_min: float, y_max: float, y_format: Callable[[float], str] = _num, lines: Sequence[Line] = (),
               width: int = 640, height: int = 230, legend: bool = True) -> Markup:
    """Series over a categorical x axis (runs, months, quarters), with labelled reference lines."""
    if not any(p.y is not None for s in series for p in s.points):
        return empty(chart_id, title, "nothing to plot for these filters", width)
    left, right, top = 48, 12, 14
    bottom = 42 if legend else 26
    plot_w, plot_h = width - left - right, height - top - bottom
    span = (y_max - y_min) or 1
    count = max(len(x_labels), 1)

    def px(i: int) -> float:
        return left + (plot_w * (i + 0.5) / count)

    def py(v: float) -> float:
        return top + plot_h * (1 - (min(max(v, y_min), y_max) - y_min) / span)

    out = [f'<rect x="{left}" y="{top}" width="{plot_w}" height="{plot_h}" fill="#fff" stroke="#d9dde5"/>']
    for tick in range(5):
        v = y_min + span * tick / 4
        out.append(f'<line x1="{left}" x2="{left + plot_w}" y1="{py(v):.1f}" y2="{py(v):.1f}" stroke="#eceff4"/>'
                   f'<text x="{left - 4}" y="{py(v) + 3.5:.1f}" text-anchor="end" fill="#5d6677">{escape(y_format(v))}</text>')
    step = max(1, count // 12)
    for i, label in enumerate(x_labels):
        if i % step == 0 or i == count - 1:
            out.append(f'<text x="{px(i):.1f}" y="{top + plot_h + 13}" text-anchor="middle" fill="#5d6677">'
                       f'{escape(label)}</text>')
    for line in lines:
        out.append(f'<g class="threshold" data-threshold="{escape(line.value)}"><line x1="{left}" x2="{left + plot_w}" '
                   f'y1="{py(line.value):.1f}" y2="{py(line.value):.1f}" stroke="#b3261e" stroke-dasharray="5 3"/>'
                   f'<text x="{left + plot_w - 3}" y="{py(line.value) - 3:.1f}" text-anchor="end" fill="#b3261e">'
                   f'{escape(line.label)}</text></g>')
    for n, s in enumerate(series):
        colour, marker, dash = COLOURS[n % len(COLOURS)], MARKERS[n % len(MARKERS)], DASHES[n % len(DASHES)]
        pts = [p for p in s.points if p.y is not None]
        if len(pts) > 1:
            path = " ".join(f"{'M' if k == 0 else 'L'}{px(p.x):.1f},{py(p.y):.1f}" for k, p in enumerate(pts))
            dashed = f' stroke-dasharray="{dash}"' if dash else ""
            out.append(f'<path d="{path}" fill="none" stroke="{colour}" stroke-width="1.8"{dashed}/>')
        for p in pts:
            out.append(f'<g class="point" data-series="{escape(s.name)}" data-value="{escape(p.y)}"{_attrs(p.data)}>'
                       f'<title>{escape(p.text)}</title>{_marker(marker, px(p.x), py(p.y), colour)}</g>')
    if legend:
        x = left
        for n, s in enumerate(series):
            colour, marker = COLOURS[n % len(COLOURS)], MARKERS[n % len(MARKERS)]
            out.append(f'<g class="legend">{_marker(marker, x + 5, height - 10, colour)}'
                       f'<text x="{x + 14}" y="{height - 6}">{escape(s.name)}</text></g>')
            x += 24 + 6.2 * len(s.name)
    return _frame(chart_id, title, desc, width, height, "".join(out))


def bar_chart(chart_id: str, title: str, desc: str, bars: Sequence[Bar], *, max_value: float,
              styles: Sequence[str] = (), width: int = 640, label_width: int = 210) -> Markup:
    """Horizontal bars, one a row: the label at the left, the bar in its pattern, the value written
    after it (and a flag such as "sev-2" in words where a bar needs one). styles names each style
    index in a key under the chart."""
    if not bars:
        return empty(chart_id, title, "nothing to plot for these filters", width)
    row, top = 18, 4
    key_h = 20 if styles else 0
    height = top + row * len(bars) + key_h + 4
    plot_w = width - label_width - 180
    out = []
    for i, bar in enumerate(bars):
        y = top + i * row
        w = 0 if max_value <= 0 else plot_w * max(bar.value, 0) / max_value
        flag = f' <tspan font-weight="bold" fill="#b3261e">{escape(bar.flag)}</tspan>' if bar.flag else ""
        out.append(f'<g class="bar" data-label="{escape(bar.label)}" data-value="{escape(bar.value)}"{_attrs(bar.data)}>'
                   f'<title>{escape(bar.label)}: {escape(bar.text)}{(" — " + escape(bar.flag)) if bar.flag else ""}</title>'
                   f'<text x="{label_width - 6}" y="{y + 12.5}" text-anchor="end">{escape(bar.label)}</text>'
                   f'<rect x="{label_width}" y="{y + 2}" width="{max(w, 0.5):.1f}" height="{row - 5}" '
                   f'fill="{fill(chart_id, bar.style)}" stroke="{COLOURS[bar.style % len(COLOURS)]}"/>'
                   f'<text x="{label_width + w + 5:.1f}" y="{y + 12.5}">{escape(bar.text)}{flag}</text></g>')
    out.append(_key(chart_id, styles, top + row * len(bars) + 4))
    return _frame(chart_id, title, desc, width, height, "".join(out), max(len(styles), 1 + max(b.style for b in bars)))


def _key(chart_id: str, styles: Sequence[str], y: float) -> str:
    out, x = [], 4
    for n, name in enumerate(styles):
        out.append(f'<g class="key"><rect x="{x}" y="{y + 3}" width="14" height="11" fill="{fill(chart_id, n)}" '
                   f'stroke="{COLOURS[n % len(COLOURS)]}"/><text x="{x + 18}" y="{y + 12.5}">{escape(name)}</text></g>')
        x += 30 + 6.2 * len(name)
    return "".join(out)


def stacked_chart(chart_id: str, title: str, desc: str, rows: Sequence[tuple[str, Sequence[int], dict]],
                  categories: Sequence[str], *, width: int = 640, label_width: int = 170) -> Markup:
    """One 100% bar per row, split into its categories' shares, each share in its own pattern with
    its count written inside when it fits; a key names the categories."""
    if not rows:
        return empty(chart_id, title, "nothing to plot for these filters", width)
    row, top = 22, 4
    height = top + row * len(rows) + 26
    plot_w = width - label_width - 60
    out = []
    for i, (label, counts, data) in enumerate(rows):
        y, total, x = top + i * row, sum(counts), float(label_width)
        out.append(f'<g class="stack" data-label="{escape(label)}"{_attrs(data)}>'
                   f'<text x="{label_width - 6}" y="{y + 14}" text-anchor="end">{escape(label)}</text>')
        for n, count in enumerate(counts):
            w = 0 if total == 0 else plot_w * count / total
            if w <= 0:
                continue
            out.append(f'<g class="segment" data-category="{escape(categories[n])}" data-value="{count}">'
                       f'<title>{escape(label)}: {escape(categories[n])}: {count} of {total}</title>'
                       f'<rect x="{x:.1f}" y="{y + 2}" width="{w:.1f}" height="{row - 6}" fill="{fill(chart_id, n)}" '
                       f'stroke="{COLOURS[n % len(COLOURS)]}"/>'
                       + (f'<text x="{x + w / 2:.1f}" y="{y + 14}" text-anchor="middle" font-weight="bold" '
                          f'stroke="#fff" stroke-width="3" paint-order="stroke">{count}</text>' if w > 18 else "")
                       + "</g>")
            x += w
        out.append(f'<text x="{label_width + plot_w + 6}" y="{y + 14}">{total}</text></g>')
    out.append(_key(chart_id, categories, top + row * len(rows) + 4))
    return _frame(chart_id, title, desc, width, height, "".join(out), len(categories))


def grid_chart(chart_id: str, title: str, desc: str, rows: Sequence[str], columns: Sequence[str],
               cells: dict[tuple[int, int], tuple[int, str, dict]], states: Sequence[str], *, width: int = 640) -> Markup:
    """A timeline grid: a row per thing (a brain), a column per period (a month), each cell in the
    pattern of its state with a short word in it; a key names the states."""
    if not rows or not columns:
        return empty(chart_id, title, "nothing to plot for these filters", width)
    label_width, top, row = 80, 4, 26
    cell_w = (width - label_width - 4) / len(columns)
    height = top + row * len(rows) + 16 + 26
    out = []
    for r, name in enumerate(rows):
        y = top + r * row
        out.append(f'<text x="{label_width - 6}" y="{y + 16}" text-anchor="end">{escape(name)}</text>')
        for c in range(len(columns)):
            if (r, c) not in cells:
                continue
            state, word, data = cells[(r, c)]
            x = label_width + c * cell_w
            out.append(f'<g class="cell" data-state="{escape(states[state])}"{_attrs(data)}>'
                       f'<title>{escape(name)} {escape(columns[c])}: {escape(word)}</title>'
                       f'<rect x="{x + 1:.1f}" y="{y + 2}" width="{cell_w - 2:.1f}" height="{row - 4}" '
                       f'fill="{fill(chart_id, state)}" stroke="{COLOURS[state % len(COLOURS)]}"/>'
                       + (f'<text x="{x + cell_w / 2:.1f}" y="{y + 16}" text-anchor="middle" font-size="9" '
                          f'stroke="#fff" stroke-width="3" paint-order="stroke">{escape(word)}</text>' if cell_w > 30 else "")
                       + "</g>")
    step = max(1, len(columns) // 10)
    for c, name in enumerate(columns):
        if c % step == 0 or c == len(columns) - 1:
            out.append(f'<text x="{label_width + (c + 0.5) * cell_w:.1f}" y="{top + row * len(rows) + 11}" '
                       f'text-anchor="middle" fill="#5d6677">{escape(name)}</text>')
    out.append(_key(chart_id, states, top + row * len(rows) + 16))
    return _frame(chart_id, title, desc, width, height, "".join(out), len(states))
