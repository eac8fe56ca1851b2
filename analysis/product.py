"""What one figure or table module declares about what it makes (its PRODUCTS, beside the code that
draws them): analysis/products.py collects them, analysis/make_figures.py makes every one and the
page (analysis/page/report.py) shows each Figure where a section of analysis/page/sections.py places it.
"""
from __future__ import annotations

import dataclasses
from typing import Callable


@dataclasses.dataclass(frozen=True)
class Figure:
    """One PNG of a product as the page shows it."""
    png: str       # file name in the figures directory, without ".png"
    title: str
    caption: str   # what to see in it (plain text)


@dataclasses.dataclass(frozen=True)
class Product:
    """One call of make_figures: a make(path, outdir) -> [paths written] reading one result file."""
    name: str          # make_figures' name for it (its lines say "wrote NAME: ...")
    input_file: str    # the result file in RESULTS_DIR it reads
    make: Callable
    figures: tuple = ()  # the PNGs it writes that the page shows (Figure), in the page's order
