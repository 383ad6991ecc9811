"""Charts as inline SVG, drawn on the server: no library, no script, no style attributes.

Every chart is `role="img"` named by its <title>, scales to its container through its
viewBox (CSS gives it width 100%), and writes its numbers as text beside the marks, so
colour is never the only signal. Pages put a data table next to each chart.
"""

from dataclasses import dataclass
from datetime import date
from decimal import Decimal

from django.utils.dateformat import format as format_date
from django.utils.html import escape, format_html
from django.utils.safestring import SafeString, mark_safe
from django.utils.translation import pgettext

from kit.numbers import number_text


@dataclass(frozen=True)
class Figure:
    """A count as a chart shows it: `value` is None whenever the exact count is withheld."""

    label: str
    value: int | None
    text: str
    url: str = ""

    @property
    def withheld(self) -> bool:
        return self.value is None


BAR_WIDTH = 320  # viewBox units: a 360 px phone draws it about 328 px wide, text at 16 px
BAR_ROW = 46
BAR_LABEL_MAX = 34  # characters of a label drawn in the chart; the table holds the rest
BAR_TEXT_ROOM = 112  # room right of the longest bar for "fewer than 5"
WITHHELD_STUB = 10  # a withheld count is a short outlined stub, the same whatever its size


def bar_chart(*, chart_id: str, title: str, figures: list[Figure]) -> SafeString:
    """Return a horizontal bar chart: label above each bar, the count at its end."""
    height = max(1, len(figures)) * BAR_ROW + 8
    biggest = max((f.value for f in figures if f.value is not None), default=0)
    room = BAR_WIDTH - BAR_TEXT_ROOM
    marks = []
    for row, figure in enumerate(figures):
        top = row * BAR_ROW + 4
        label = _shorten(figure.label, BAR_LABEL_MAX)
        if figure.withheld:
            length, css = WITHHELD_STUB, "bar bar-withheld"
        else:
            length = round(room * figure.value / biggest) if biggest else 0
            css = "bar"
        marks.append(
            format_html(
                '<g class="bar-row"><text class="bar-label" x="0" y="{}">{}</text>'
                '<rect class="{}" x="0" y="{}" width="{}" height="18"></rect>'
                '<text class="bar-value" x="{}" y="{}">{}</text></g>',
                top + 14,
                label,
                css,
                top + 20,
                length,
                length + 6,
                top + 34,
                figure.text,
            )
        )
    return format_html(
        '<svg class="chart" role="img" aria-labelledby="{id}-title" viewBox="0 0 {w} {h}" '
        'width="100%" preserveAspectRatio="xMinYMin meet" focusable="false">'
        '<title id="{id}-title">{title}</title>{marks}</svg>',
        id=chart_id,
        w=BAR_WIDTH,
        h=height,
        title=title,
        marks=mark_safe("".join(marks)),  # noqa: S308 - each mark was built by format_html
    )


@dataclass(frozen=True)
class TrendPoint:
    on: date
    score: Decimal


TREND_WIDTH = 320  # viewBox units: a 360 px phone draws it about 328 px wide, text at 16 px
TREND_HEIGHT = 210
TREND_LEFT = 38  # room for the y axis labels
TREND_TOP = 28  # room for the score above the highest point
TREND_BOTTOM = 48  # room for the dates, on two lines
TREND_INSET = 36  # first and last points sit this far inside, so their scores fit
TREND_END = TREND_WIDTH - 2  # the last point's dates end here: however wide, never clipped


def line_chart(*, chart_id: str, title: str, points: list[TrendPoint]) -> SafeString:
    """Return a score-over-time chart: points in date order, evenly spaced, each labelled."""
    low = min([Decimal(0), *(p.score for p in points)])
    high = max([Decimal(100), *(p.score for p in points)])
    span = high - low or Decimal(1)
    plot_h = TREND_HEIGHT - TREND_TOP - TREND_BOTTOM
    bottom = TREND_TOP + plot_h
    first_x, last_x = TREND_LEFT + TREND_INSET, TREND_WIDTH - TREND_INSET

    def x_of(index: int) -> int:
        if len(points) == 1:
            return (first_x + last_x) // 2
        return first_x + round(index * (last_x - first_x) / (len(points) - 1))

    def y_of(score: Decimal) -> int:
        return TREND_TOP + round(float((high - score) / span) * plot_h)

    marks = [
        format_html(
            '<line class="axis" x1="{x}" y1="{top}" x2="{x}" y2="{bottom}"></line>'
            '<line class="axis" x1="{x}" y1="{bottom}" x2="{right}" y2="{bottom}"></line>',
            x=TREND_LEFT,
            top=TREND_TOP,
            bottom=bottom,
            right=TREND_WIDTH - 4,
        )
    ]
    for tick in (high, (high + low) / 2, low):
        marks.append(
            format_html(
                '<line class="grid" x1="{x1}" y1="{y}" x2="{x2}" y2="{y}"></line>'
                '<text class="tick" x="{tx}" y="{ty}" text-anchor="end">{label}</text>',
                x1=TREND_LEFT,
                x2=TREND_WIDTH - 4,
                y=y_of(tick),
                tx=TREND_LEFT - 5,
                ty=y_of(tick) + 4,
                label=_number(tick),
            )
        )
    coords = [(x_of(i), y_of(p.score)) for i, p in enumerate(points)]
    if len(coords) > 1:
        marks.append(
            format_html(
                '<polyline class="trend-line" fill="none" points="{}"></polyline>',
                " ".join(f"{x},{y}" for x, y in coords),
            )
        )
    # Translators: how a point's day and month are written under a chart, in Django's date
    # format letters (https://docs.djangoproject.com/en/stable/ref/templates/builtins/#date);
    # the year goes on a line of its own below.
    day_format = pgettext("chart day label", "j M")
    last = len(points) - 1
    for index, ((x, y), point) in enumerate(zip(coords, points, strict=True)):
        # A date centred under the last point would run past the chart's right edge (how far
        # depends on the month's name and the font): it ends at the edge instead.
        date_x, anchor = (TREND_END, "end") if index == last and last else (x, "middle")
        marks.append(
            format_html(
                '<circle class="trend-point" cx="{x}" cy="{y}" r="5"></circle>'
                '<text class="point-label" x="{x}" y="{ly}" text-anchor="middle">{score}</text>'
                '<text class="tick" x="{dx}" y="{dy}" text-anchor="{anchor}">{day}</text>'
                '<text class="tick" x="{dx}" y="{yy}" text-anchor="{anchor}">{year}</text>',
                x=x,
                y=y,
                ly=y - 10,
                score=_number(point.score),
                dx=date_x,
                anchor=anchor,
                dy=bottom + 17,
                day=format_date(point.on, day_format),
                yy=bottom + 33,
                year=point.on.year,
            )
        )
    return format_html(
        '<svg class="chart trend-chart" role="img" aria-labelledby="{id}-title" '
        'viewBox="0 0 {w} {h}" width="100%" preserveAspectRatio="xMinYMin meet" '
        'focusable="false"><title id="{id}-title">{title}</title>{marks}</svg>',
        id=chart_id,
        w=TREND_WIDTH,
        h=TREND_HEIGHT,
        title=title,
        marks=mark_safe("".join(marks)),  # noqa: S308 - each mark was built by format_html
    )


def _shorten(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _number(value: Decimal) -> str:
    """Return a score or a tick the way every page writes a number (kit.numbers)."""
    return escape(number_text(value))
