"""Explorer for notebook 03: DiffMulti's partition of a plane next to DiffGen's grid.

Pick two attributes; slide ε, DiffMulti's specialization budget h and DiffGen's number of
steps; each move refits both releases on the two columns (a library call) and redraws the
rectangles (a plot call). The two-column tables are cut once per attribute pair and cached.
"""
from __future__ import annotations

from typing import Any

import ipywidgets as widgets
import pandas as pd
from IPython.display import display

from ..domain import Schema
from ..plots.diffmulti import partition_comparison
from ..publish.diffgen import DiffGen
from ..publish.diffmulti import DiffMulti, category_order

__all__ = ["DiffMultiExplorer", "H_VALUES"]

H_VALUES = (0, 3, 10, 30, 100, 300, 1000, 3000, 10000)


class DiffMultiExplorer:
    """Sliders for ε, h (DiffMulti) and steps (DiffGen), pickers for the two attributes.

    ``update()`` redraws; ``widget`` is the container to display. ``last`` holds the two fitted
    releases of the latest redraw (for inspection in the notebook).
    """

    def __init__(self, X: pd.DataFrame, y: Any, schema: Schema, *, x: str = "age",
                 y_attribute: str = "education-num", epsilon: float = 1.0, h: int = 300,
                 steps: int = 6, random_state: int = 0):
        schema.check_columns([x, y_attribute], "x/y_attribute")
        self.X, self.y, self.schema = X, y, schema
        self._y_codes = schema.encode_target(y)     # for the accuracy read-out, computed once
        self.random_state = random_state
        self._pairs: dict[tuple[str, str], pd.DataFrame] = {}
        names = schema.predictors
        style = {"description_width": "70px"}
        self.x_picker = widgets.Dropdown(options=names, value=x, description="x axis", style=style)
        self.y_picker = widgets.Dropdown(options=names, value=y_attribute, description="y axis", style=style)
        self.eps_slider = widgets.FloatLogSlider(value=epsilon, base=10, min=-1.3, max=0.6, step=0.05,
                                                 description="ε", readout_format=".2f", style=style)
        self.h_slider = widgets.SelectionSlider(options=list(H_VALUES), value=h if h in H_VALUES else 300,
                                                description="h (Multi)", style=style)
        self.steps_slider = widgets.IntSlider(value=steps, min=0, max=20, description="steps (Gen)", style=style)
        self.info = widgets.HTML()
        self.out = widgets.Output()
        for w in (self.x_picker, self.y_picker, self.eps_slider, self.h_slider, self.steps_slider):
            w.observe(self.update, names="value")
        self.widget = widgets.VBox([
            widgets.HBox([self.x_picker, self.y_picker]),
            widgets.HBox([self.eps_slider, self.h_slider, self.steps_slider]),
            self.info, self.out])
        self.last: tuple[DiffMulti, DiffGen] | None = None
        self.update()

    def _pair(self, x: str, y: str) -> pd.DataFrame:
        key = (x, y)
        if key not in self._pairs:
            self._pairs[key] = self.X[[x, y]]
        return self._pairs[key]

    def _ticks(self, attribute: str):
        attr = self.schema[attribute]
        return category_order(attr.taxonomy) if attr.kind == "categorical" else None

    def chart(self):
        """Fit both releases at the current settings and return the side-by-side chart."""
        x, y = self.x_picker.value, self.y_picker.value
        if x == y:
            raise ValueError("pick two different attributes")
        data = self._pair(x, y)
        eps = float(self.eps_slider.value)
        multi = DiffMulti(eps, h=int(self.h_slider.value), random_state=self.random_state).fit(data, self.y, self.schema)
        grid = DiffGen(eps, steps=int(self.steps_slider.value), random_state=self.random_state).fit(data, self.y, self.schema)
        self.last = (multi, grid)
        self.info.value = (f"DiffMulti: {multi.n_regions_} regions, ε' = {multi.epsilon_prime_:.4f} "
                           f"(|g| = {multi.max_depth_}) &nbsp;|&nbsp; DiffGen: {grid.n_regions_} cells, "
                           f"ε' = {grid.epsilon_prime_:.4f} &nbsp;|&nbsp; accuracy on these two columns: "
                           f"DiffMulti {self._accuracy(multi, data):.3f}, DiffGen {self._accuracy(grid, data):.3f}")
        return partition_comparison(multi.rectangles(x, y), grid.rectangles(x, y), x, y,
                                    x_ticks=self._ticks(x), y_ticks=self._ticks(y))

    def _accuracy(self, release, data: pd.DataFrame) -> float:
        return float((release.predict_proba(data).argmax(axis=1) == self._y_codes).mean())

    def update(self, *_: Any) -> None:
        """Redraw (the slider callback)."""
        with self.out:
            self.out.clear_output(wait=True)
            if self.x_picker.value == self.y_picker.value:
                self.info.value = "Pick two different attributes."
                return
            display(self.chart())
