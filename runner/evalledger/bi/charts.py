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
    # The 95% interval drawn as an error bar (the database's, from a suite's intervals view).
    lo: float | None = None
    hi: float | None = None


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


# The width of a text at the charts' 11 px, generously (an average sans-serif letter is ~6 px), so
# a legend laid out with it never runs past the chart's edge.
CHAR_W = 6.6


def text_width(text: str) -> float:
    return CHAR_W * len(text)


def _rows_of(items: Sequence[float], width: float, start: float = 4) -> list[list[int]]:
    """Items of these widths laid out left to right, wrapping before the edge: each row's indices."""
    rows: list[list[int]] = [[]]
    x = start
    for i, w in enumerate(items):
        if rows[-1] and x + w > width - 4:
            rows.append([])
            x = start
        rows[-1].append(i)
        x += w
    return rows


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
    """A chart with nothing to draw: the reason, written where the marks would be (in a box no wider
    than a phone's screen needs)."""
    width = min(width, max(320, int(text_width(message)) + 40, int(text_width(title) * 12 / 11) + 8))
    body = (f'<rect x="0.5" y="0.5" width="{width - 1}" height="59" fill="#fafbfc" stroke="#d9dde5"/>'
            f'<text x="{width / 2}" y="34" text-anchor="middle" fill="#5d6677">{escape(message)}</text>')
    return _frame(chart_id, title, message, width, 60, body)


def line_chart(chart_id: str, title: str, desc: str, x_labels: Sequence[str], series: Sequence[Series], *,
               y_min: float, y_max: float, y_format: Callable[[float], str] = _num, lines: Sequence[Line] = (),
               width: int = 640, height: int = 230, legend: bool = True) -> Markup:
    """Series over a categorical x axis (runs, months, quarters), with labelled reference lines.

    A point with an interval (lo, hi) gets an error bar. Series sharing an x are set apart
    sideways, each a few pixels off the slot's centre, so no series' marks hide another's. The
    legend and the reference lines' labels sit under the plot, wrapped to the chart's width, never
    on the data."""
    if not any(p.y is not None for s in series for p in s.points):
        return empty(chart_id, title, "nothing to plot for these filters", width)
    left, right, top = 48, 12, 14
    keys = ([(f"legend-{n}", 24 + text_width(s.name)) for n, s in enumerate(series)] if legend else []) + \
        [(f"line-{n}", 30 + text_width(line.label)) for n, line in enumerate(lines)]
    key_rows = _rows_of([w for _, w in keys], width, left) if keys else []
    key_h = 16 * len(key_rows)
    bottom = 26 + key_h
    height += key_h - (16 if legend else 0)
    plot_w, plot_h = width - left - right, height - top - bottom
    span = (y_max - y_min) or 1
    count = max(len(x_labels), 1)
    slot = plot_w / count
    drawn = [n for n, s in enumerate(series) if any(p.y is not None for p in s.points)]
    step_off = min(7.0, slot * 0.6 / max(len(drawn), 1))

    def offset(n: int) -> float:
        return 0.0 if len(drawn) < 2 else (drawn.index(n) - (len(drawn) - 1) / 2) * step_off

    def px(i: int, n: int | None = None) -> float:
        return left + (plot_w * (i + 0.5) / count) + (offset(n) if n is not None else 0)

    def py(v: float) -> float:
        return top + plot_h * (1 - (min(max(v, y_min), y_max) - y_min) / span)

    out = [f'<rect x="{left}" y="{top}" width="{plot_w}" height="{plot_h}" fill="#fff" stroke="#d9dde5"/>']
    for tick in range(5):
        v = y_min + span * tick / 4
        out.append(f'<line x1="{left}" x2="{left + plot_w}" y1="{py(v):.1f}" y2="{py(v):.1f}" stroke="#eceff4"/>'
                   f'<text x="{left - 4}" y="{py(v) + 3.5:.1f}" text-anchor="end" fill="#5d6677">{escape(y_format(v))}</text>')
    # Labels of the x axis, as many as fit side by side.
    widest = max((text_width(label) for label in x_labels), default=1) + 6
    step = max(1, count // 12, int(widest // max(slot, 1)) + (1 if widest > slot else 0))
    for i, label in enumerate(x_labels):
        if i % step == 0 or (i == count - 1 and (count - 1) % step >= step / 2):
            out.append(f'<text x="{px(i):.1f}" y="{top + plot_h + 13}" text-anchor="middle" fill="#5d6677">'
                       f'{escape(label)}</text>')
    for line in lines:
        out.append(f'<g class="threshold" data-threshold="{escape(line.value)}"><title>{escape(line.label)}</title>'
                   f'<line x1="{left}" x2="{left + plot_w}" y1="{py(line.value):.1f}" y2="{py(line.value):.1f}" '
                   f'stroke="#b3261e" stroke-dasharray="5 3"/></g>')
    for n, s in enumerate(series):
        colour, marker, dash = COLOURS[n % len(COLOURS)], MARKERS[n % len(MARKERS)], DASHES[n % len(DASHES)]
        pts = [p for p in s.points if p.y is not None]
        if len(pts) > 1:
            path = " ".join(f"{'M' if k == 0 else 'L'}{px(p.x, n):.1f},{py(p.y):.1f}" for k, p in enumerate(pts))
            dashed = f' stroke-dasharray="{dash}"' if dash else ""
            out.append(f'<path d="{path}" fill="none" stroke="{colour}" stroke-width="1.8"{dashed}/>')
        for p in pts:
            x = px(p.x, n)
            bar, bounds = "", ""
            if p.lo is not None and p.hi is not None:
                bounds = f' data-lo="{escape(p.lo)}" data-hi="{escape(p.hi)}"'
                y_lo, y_hi = py(p.lo), py(p.hi)
                bar = (f'<path class="error-bar" d="M{x:.1f},{y_lo:.1f} V{y_hi:.1f} M{x - 3:.1f},{y_lo:.1f} H{x + 3:.1f} '
                       f'M{x - 3:.1f},{y_hi:.1f} H{x + 3:.1f}" stroke="{colour}" stroke-width="1.2" fill="none"/>')
            out.append(f'<g class="point" data-series="{escape(s.name)}" data-value="{escape(p.y)}"{bounds}{_attrs(p.data)}>'
                       f'<title>{escape(p.text)}</title>{bar}{_marker(marker, x, py(p.y), colour)}</g>')
    y = top + plot_h + 26
    placed = dict(keys)
    for row in key_rows:
        x = float(left)
        for index in row:
            key, w = keys[index]
            kind, n = key.split("-")
            n = int(n)
            if kind == "legend":
                colour, marker = COLOURS[n % len(COLOURS)], MARKERS[n % len(MARKERS)]
                out.append(f'<g class="legend">{_marker(marker, x + 5, y - 4, colour)}'
                           f'<text x="{x + 14:.1f}" y="{y}">{escape(series[n].name)}</text></g>')
            else:
                out.append(f'<g class="threshold-label" data-threshold="{escape(lines[n].value)}">'
                           f'<line x1="{x:.1f}" x2="{x + 22:.1f}" y1="{y - 4}" y2="{y - 4}" stroke="#b3261e" '
                           f'stroke-dasharray="5 3"/><text x="{x + 26:.1f}" y="{y}" fill="#b3261e">'
                           f'{escape(lines[n].label)}</text></g>')
            x += placed[key]
        y += 16
    return _frame(chart_id, title, desc, width, height, "".join(out))


def bar_chart(chart_id: str, title: str, desc: str, bars: Sequence[Bar], *, max_value: float,
              styles: Sequence[str] = (), width: int = 640, label_width: int = 210) -> Markup:
    """Horizontal bars, one a row: the label at the left, the bar in its pattern, the value written
    after it (and a flag such as "sev-2" in words where a bar needs one). styles names each style
    index in a key under the chart."""
    if not bars:
        return empty(chart_id, title, "nothing to plot for these filters", width)
    row, top = 18, 4
    key_h = _key_height(styles, width)
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
    out.append(_key(chart_id, styles, top + row * len(bars) + 4, width))
    return _frame(chart_id, title, desc, width, height, "".join(out), max(len(styles), 1 + max(b.style for b in bars)))


def _key_height(styles: Sequence[str], width: int) -> int:
    """The height the key of these styles takes, wrapped to the chart's width."""
    return 20 * len(_rows_of([30 + text_width(name) for name in styles], width)) if styles else 0


def _key(chart_id: str, styles: Sequence[str], y: float, width: int = 640) -> str:
    """A key naming each style, wrapped to the chart's width."""
    out = []
    widths = [30 + text_width(name) for name in styles]
    for row in _rows_of(widths, width):
        x = 4.0
        for n in row:
            name = styles[n]
            out.append(f'<g class="key"><rect x="{x:.1f}" y="{y + 3}" width="14" height="11" fill="{fill(chart_id, n)}" '
                       f'stroke="{COLOURS[n % len(COLOURS)]}"/><text x="{x + 18:.1f}" y="{y + 12.5}">{escape(name)}</text></g>')
            x += widths[n]
        y += 20
    return "".join(out)


def stacked_chart(chart_id: str, title: str, desc: str, rows: Sequence[tuple[str, Sequence[int], dict]],
                  categories: Sequence[str], *, width: int = 640, label_width: int = 170) -> Markup:
    """One 100% bar per row, split into its categories' shares, each share in its own pattern with
    its count written inside when it fits; a key names the categories."""
    if not rows:
        return empty(chart_id, title, "nothing to plot for these filters", width)
    row, top = 22, 4
    height = top + row * len(rows) + 6 + _key_height(categories, width)
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
    out.append(_key(chart_id, categories, top + row * len(rows) + 4, width))
    return _frame(chart_id, title, desc, width, height, "".join(out), len(categories))


def grid_chart(chart_id: str, title: str, desc: str, rows: Sequence[str], columns: Sequence[str],
               cells: dict[tuple[int, int], tuple[int, str, dict]], states: Sequence[str], *, width: int = 640) -> Markup:
    """A timeline grid: a row per thing (a brain), a column per period (a month), each cell in the
    pattern of its state with a short word in it; a key names the states."""
    if not rows or not columns:
        return empty(chart_id, title, "nothing to plot for these filters", width)
    label_width, top, row = 80, 4, 26
    cell_w = (width - label_width - 4) / len(columns)
    height = top + row * len(rows) + 16 + 6 + _key_height(states, width)
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
                       + (f'<text x="{x + cell_w / 2:.1f}" y="{y + 16}" text-anchor="middle" '
                          f'stroke="#fff" stroke-width="3" paint-order="stroke">{escape(word)}</text>' if cell_w > 44 else "")
                       + "</g>")
    step = max(1, len(columns) // 10)
    for c, name in enumerate(columns):
        if c % step == 0 or c == len(columns) - 1:
            out.append(f'<text x="{label_width + (c + 0.5) * cell_w:.1f}" y="{top + row * len(rows) + 11}" '
                       f'text-anchor="middle" fill="#5d6677">{escape(name)}</text>')
    out.append(_key(chart_id, states, top + row * len(rows) + 16, width))
    return _frame(chart_id, title, desc, width, height, "".join(out), len(states))
