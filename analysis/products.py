"""The product registry: every figure and table analysis/make_figures.py makes, in its order, each
declared by its module (PRODUCTS, beside the code that draws it). The page finds a figure's caption
and result file here by its PNG name (analysis/page/sections.py only places it). A new figure is
one more Product in its module's PRODUCTS, and a new module one more entry of MODULES.
"""
from __future__ import annotations

import fig_attention_maps
import fig_beta_polynomial
import fig_dispersion
import fig_entropy_temperature
import fig_head_entropy
import fig_max_accuracy
import fig_remedies
import fig_text_accuracy
import fig_text_curves
import fig_transformer_alpha
import fig_transformer_entropy
import fig_transformer_logit_spread
import fig_transformer_trained
import fig_weight_bound
import max_accuracy_table
import remedies_table
import text_paired_table
import text_study
import transformer_theorem

# The modules that make products, in make_figures' order (a module's products stay together).
MODULES = (fig_dispersion, fig_weight_bound, fig_entropy_temperature, fig_attention_maps, fig_max_accuracy,
           max_accuracy_table, fig_head_entropy, fig_remedies, remedies_table, fig_beta_polynomial,
           fig_transformer_alpha, fig_transformer_entropy, fig_transformer_logit_spread, transformer_theorem,
           fig_transformer_trained, fig_text_accuracy, text_paired_table, text_study, fig_text_curves)

PRODUCTS = tuple(p for module in MODULES for p in module.PRODUCTS)


def page_figure(png: str) -> tuple:
    """(Figure, Product) of the page figure named `png`; KeyError names a section's misspelt figure."""
    for p in PRODUCTS:
        for f in p.figures:
            if f.png == png:
                return f, p
    raise KeyError(f"no product draws a page figure named {png!r} (analysis/products.py)")
