"""HTML pieces of the paper page (analysis/page/report.py): the one number formatter, escaping, tables,
figures inlined as data URIs, notice boxes, and the page's stylesheet.

Everything the page shows is written here or inlined: no CDN, no script from elsewhere, no file the
browser would have to fetch (browsers refuse to read local files from a file:// page).
"""
from __future__ import annotations

import base64
import html
import math
import struct

import numpy as np

import common

MISSING = "—"


def number(x, digits: int = 3, decimals: int | None = None, percent: bool = False,
           signed: bool = False) -> str:
    """The one formatter of every number on the page: `digits` significant digits, or with
    `decimals` that many decimal places (accuracies as the paper prints them); integers exact;
    `percent` multiplies a fraction by 100; `signed` writes a leading '+'. None and NaN print as
    '—'; tiny and huge values in compact scientific form ('2e−4'); minus is U+2212."""
    if x is None:
        return MISSING
    if isinstance(x, (bool, np.bool_)):
        return "yes" if x else "no"
    if isinstance(x, (int, np.integer)) and not percent and decimals is None:
        text = f"{int(x):+d}" if signed else f"{int(x)}"
        return text.replace("-", "\u2212")
    x = float(x)
    if math.isnan(x):
        return MISSING
    if math.isinf(x):
        return ("+" if signed and x > 0 else "") + ("\u221e" if x > 0 else "\u2212\u221e")
    if percent:
        x *= 100.0
    if decimals is not None:
        text = f"{x:.{decimals}f}"
    else:
        text = f"{x:.{digits}g}"
        if "e" in text:  # 2e-04 -> 2e-4, 1.5e+06 -> 1.5e6
            mantissa, exponent = text.split("e")
            text = f"{mantissa}e{int(exponent)}"
    if signed and not text.startswith("-"):
        text = "+" + text
    return text.replace("-", "\u2212")


def esc(text) -> str:
    return html.escape(str(text), quote=True)


def code(text) -> str:
    return f"<code>{esc(text)}</code>"


def table(head: list, rows: list, caption: str = "", classes: str = "",
          row_classes: list | None = None) -> str:
    """An HTML table; cells are HTML already (escape text with esc()), or (html, class) pairs.
    `row_classes` gives each row a class (verdict colours)."""
    out = [f'<table class="{esc(classes)}">' if classes else "<table>"]
    if caption:
        out.append(f"<caption>{caption}</caption>")
    out.append("<thead><tr>" + "".join(f"<th>{h}</th>" for h in head) + "</tr></thead>")
    out.append("<tbody>")
    for i, row in enumerate(rows):
        cls = row_classes[i] if row_classes else ""
        attr = f' class="{esc(cls)}"' if cls else ""
        out.append(f"<tr{attr}>" + "".join(_cell(c) for c in row) + "</tr>")
    out.append("</tbody></table>")
    return "\n".join(out)


def _cell(cell) -> str:
    if isinstance(cell, tuple):
        content, cls = cell
        return f'<td class="{esc(cls)}">{content}</td>'
    return f"<td>{cell}</td>"


def box(kind: str, title: str, body: str) -> str:
    """A notice: kind 'missing' (not run), 'error' (a refused file), 'stale', 'note',
    'published' (a file shipped with the repository, read because results/ lacks it)."""
    return (f'<div class="box {esc(kind)}" role="note"><strong>{esc(title)}</strong> '
            f"{body}</div>")


def png_size(data: bytes) -> tuple:
    """(width, height) in pixels from a PNG's IHDR chunk; (0, 0) for anything else."""
    if len(data) < 24 or data[:8] != b"\x89PNG\r\n\x1a\n":
        return (0, 0)
    return struct.unpack(">II", data[16:24])


def figure(png: bytes, alt: str, caption_html: str) -> str:
    """A figure inlined as a data URI, one image pixel per CSS pixel (a 7-inch figure at 150 dpi
    is 1050 px: its 8-point labels read at laptop size), never wider than the column."""
    width, _ = png_size(png)
    css_width = width if width else 640
    data = base64.b64encode(png).decode("ascii")
    return (f'<figure><img src="data:image/png;base64,{data}" alt="{esc(alt)}" '
            f'style="width:{css_width}px"><figcaption>{caption_html}</figcaption></figure>')


def badge(kind: str, text: str) -> str:
    return f'<span class="badge {esc(kind)}">{esc(text)}</span>'


# Colours: the figures' palette (common.PALETTE); every status also has a word and a border
# style, so greyscale print keeps the meaning.
STYLE = """
:root { --ink:#1b1b1b; --muted:#5a5a5a; --rule:#d0d0d0; --bg:#ffffff; --panel:#f6f6f4;
        --blue:%(blue)s; --orange:%(orange)s; --green:%(green)s; --red:%(vermillion)s;
        --purple:%(purple)s; }
* { box-sizing: border-box; }
body { font: 15px/1.5 system-ui, -apple-system, "Segoe UI", "DejaVu Sans", sans-serif;
       color: var(--ink); background: var(--bg); margin: 0; }
main { max-width: 1100px; margin: 0 auto; padding: 1.5rem 2rem 4rem; }
h1 { font-size: 1.6rem; margin: 0 0 .3rem; }
h2 { font-size: 1.3rem; margin: 2.5rem 0 .6rem; padding-top: .6rem; border-top: 2px solid var(--ink); }
h3 { font-size: 1.05rem; margin: 1.6rem 0 .4rem; }
p { margin: .4rem 0 .8rem; max-width: 80ch; }
a { color: var(--blue); }
code { font: 0.86em/1.4 "DejaVu Sans Mono", monospace; background: var(--panel); padding: 0 .2em;
       overflow-wrap: anywhere; }
nav ol { columns: 2; padding-left: 1.2rem; margin: .4rem 0 1rem; }
nav li { break-inside: avoid; }
table { border-collapse: collapse; margin: .6rem 0 1.2rem; font-size: .88rem; }
caption { caption-side: top; text-align: left; color: var(--muted); padding: .2rem 0; }
th, td { border-bottom: 1px solid var(--rule); padding: .25rem .55rem; text-align: left;
         vertical-align: top; }
th { border-bottom: 2px solid var(--ink); font-weight: 600; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
figure { margin: 1rem 0 1.6rem; }
figure img { display: block; max-width: 100%%; height: auto; border: 1px solid var(--rule); }
figcaption { font-size: .9rem; max-width: 85ch; margin-top: .4rem; }
dl.prov { display: grid; grid-template-columns: max-content 1fr; gap: .05rem .8rem;
          font-size: .82rem; color: var(--muted); margin: .4rem 0 0; }
dl.prov dt { font-weight: 600; }
dl.prov dd { margin: 0; }
.box { border: 1px solid var(--rule); border-left-width: 6px; padding: .5rem .8rem; margin: .6rem 0 1rem;
       background: var(--panel); max-width: 95ch; }
.box.missing { border-left-style: dashed; border-left-color: var(--muted); }
.box.error { border-left-style: double; border-left-color: var(--red); border-left-width: 8px; }
.box.stale { border-left-style: dotted; border-left-color: var(--orange); }
.box.note { border-left-color: var(--blue); }
.box.published { border-left-color: var(--green); }
.badge { display: inline-block; font-size: .75rem; padding: 0 .45em; border-radius: .6em;
         border: 1px solid currentColor; white-space: nowrap; }
.badge.ok { color: var(--green); }
.badge.missing { color: var(--muted); border-style: dashed; }
.badge.error { color: var(--red); border-width: 2px; }
.badge.stale { color: #8a5a00; border-style: dotted; }
table.scorecard td:nth-child(n+4) { font-variant-numeric: tabular-nums; }
tr.v-agrees td.verdict { color: var(--green); font-weight: 600; }
tr.v-differs td.verdict { color: var(--red); font-weight: 700; text-decoration: underline; }
tr.v-identity td.verdict { color: var(--blue); }
tr.v-no-difference td.verdict { color: var(--purple); font-weight: 600; border-left: 3px double var(--purple); }
tr.v-analogue td.verdict, tr.v-not-measured td.verdict, tr.v-inconclusive td.verdict
  { color: var(--muted); font-style: italic; }
tr.v-not-measured td { color: var(--muted); }
.nowrap { white-space: nowrap; }
span.prov { display: block; font-size: .8rem; color: var(--muted); margin-top: .3rem; }
details { margin: .3rem 0 .8rem; font-size: .9rem; }
summary { cursor: pointer; color: var(--muted); }
small.source { color: var(--muted); }
table.rules td.verdict { white-space: nowrap; }
.counts span { margin-right: 1.2rem; white-space: nowrap; display: inline-block; }
dl.definitions { display: grid; grid-template-columns: max-content 1fr; gap: .2rem .8rem;
                 font-size: .88rem; max-width: 110ch; margin: 0 0 1rem; }
dl.definitions dt { font-weight: 600; }
dl.definitions dd { margin: 0; }
@media print { main { max-width: none; padding: 0; } h2 { break-before: page; } }
""" % common.PALETTE

