"""Explorer for notebook 03: DiffMulti's partition of a plane next to DiffGen's grid.

Pick two attributes; step ε, DiffMulti's specialization budget h and DiffGen's number of steps.
The two releases are fitted separately (moving h refits only DiffMulti, moving the steps only
DiffGen) and each fit is kept in a small cache keyed by its settings. After every redraw a
background thread fits the settings one slider step away, so the next key press usually only
redraws the rectangles (a plot call). The sliders act on release (``continuous_update=False``).
"""
from __future__ import annotations

import threading
from collections import OrderedDict
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, Sequence

import ipywidgets as widgets
import numpy as np
import pandas as pd

from ..domain import Schema
from ..plots.diffmulti import partition_comparison
from ..publish.diffgen import DiffGen
from ..publish.diffmulti import DiffMulti, category_order
from ._display import show_chart

__all__ = ["DiffMultiExplorer", "H_VALUES", "EPSILON_VALUES"]

H_VALUES = (0, 3, 10, 30, 100, 300, 1000, 3000, 10000)
EPSILON_VALUES = (0.05, 0.1, 0.2, 0.3, 0.5, 1.0, 2.0, 4.0)
STEP_VALUES = tuple(range(0, 21))
CACHE_SIZE = 96


def _neighbours(options: Sequence, value: Any) -> list:
    i = list(options).index(value)
    return [options[j] for j in (i + 1, i - 1) if 0 <= j < len(options)]


class DiffMultiExplorer:
    """Sliders for ε, h (DiffMulti) and steps (DiffGen), pickers for the two attributes.

    ``update()`` redraws; ``widget`` is the container to display. ``last`` holds the two fitted
    releases of the latest redraw (for inspection in the notebook). ``prefetch=False`` turns the
    background fits off (every setting is then fitted when it is first shown).
    """

    def __init__(self, X: pd.DataFrame, y: Any, schema: Schema, *, x: str = "age",
                 y_attribute: str = "education-num", epsilon: float = 1.0, h: int = 300,
                 steps: int = 6, random_state: int = 0, prefetch: bool = True):
        schema.check_columns([x, y_attribute], "x/y_attribute")
        if epsilon not in EPSILON_VALUES:
            raise ValueError(f"epsilon must be one of the slider's values {EPSILON_VALUES}, got {epsilon!r}")
        self.X, self.y, self.schema = X, y, schema
        self._y_codes = schema.encode_target(y)     # for the accuracy read-out, computed once
        self._majority = float(np.bincount(self._y_codes).max() / len(self._y_codes))
        self.random_state = random_state
        self._fits: OrderedDict[tuple, Future] = OrderedDict()
        self._lock = threading.Lock()
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="diffmulti-prefetch") if prefetch else None
        names = schema.predictors
        style = {"description_width": "90px"}
        narrow = widgets.Layout(width="300px")
        self.x_picker = widgets.Dropdown(options=names, value=x, description="x axis", style=style, layout=narrow)
        self.y_picker = widgets.Dropdown(options=names, value=y_attribute, description="y axis", style=style,
                                         layout=narrow)
        self.eps_slider = widgets.SelectionSlider(options=[(f"{e:g}", e) for e in EPSILON_VALUES], value=epsilon,
                                                  description="ε", continuous_update=False, style=style,
                                                  layout=narrow)
        self.h_slider = widgets.SelectionSlider(options=list(H_VALUES), value=h if h in H_VALUES else 300,
                                                description="h (Multi)", continuous_update=False, style=style,
                                                layout=narrow)
        self.steps_slider = widgets.SelectionSlider(options=list(STEP_VALUES), value=int(steps),
                                                    description="steps (Gen)", continuous_update=False,
                                                    style=style, layout=narrow)
        self.info = widgets.HTML()
        self.out = widgets.Output()
        for w in (self.x_picker, self.y_picker, self.eps_slider, self.h_slider, self.steps_slider):
            w.observe(self.update, names="value")
        row = widgets.Layout(flex_flow="row wrap")
        self.widget = widgets.VBox([
            widgets.HBox([self.x_picker, self.y_picker], layout=row),
            widgets.HBox([self.eps_slider, self.h_slider, self.steps_slider], layout=row),
            self.info, self.out])
        self.last: tuple[DiffMulti, DiffGen] | None = None
        self.update()

    # ------------------------------------------------------------------ fits (cached, prefetched)
    def _fit(self, key: tuple) -> tuple[Any, float, pd.DataFrame]:
        """One release for ``key`` = (method, x, y, ε, h or steps): (release, accuracy, rectangles)."""
        method, x, y, eps, size = key
        data = self.X[[x, y]]
        if method == "multi":
            release = DiffMulti(eps, h=size, random_state=self.random_state, schema=self.schema).fit(data, self.y)
        else:
            release = DiffGen(eps, steps=size, random_state=self.random_state, schema=self.schema).fit(data, self.y)
        accuracy = float((release.predict_proba(data).argmax(axis=1) == self._y_codes).mean())
        return release, accuracy, release.rectangles(x, y)

    def _future(self, key: tuple, background: bool) -> Future | None:
        with self._lock:
            fut = self._fits.get(key)
            if fut is not None and not fut.cancelled():
                self._fits.move_to_end(key)
                return fut
            if background:
                if self._pool is None:
                    return None
                fut = self._pool.submit(self._fit, key)
            else:
                fut = Future()
                fut.set_running_or_notify_cancel()
            self._fits[key] = fut
            while len(self._fits) > CACHE_SIZE:
                self._fits.popitem(last=False)
        if not background:
            try:
                fut.set_result(self._fit(key))
            except BaseException as err:   # the caller sees the error; the key is not cached
                fut.set_exception(err)
                with self._lock:
                    self._fits.pop(key, None)
        return fut

    def _get(self, key: tuple) -> tuple[Any, float, pd.DataFrame]:
        with self._lock:   # a queued prefetch of a setting nobody asked for yet gives way
            for k, f in self._fits.items():
                if k != key and not f.running() and not f.done():
                    f.cancel()
        return self._future(key, background=False).result()

    def _prefetch(self, x: str, y: str, eps: float, h: int, steps: int) -> None:
        if self._pool is None:
            return
        keys = [("multi", x, y, e, h) for e in _neighbours(EPSILON_VALUES, eps)]
        keys += [("gen", x, y, e, steps) for e in _neighbours(EPSILON_VALUES, eps)]
        keys += [("multi", x, y, eps, v) for v in _neighbours(H_VALUES, h)]
        keys += [("gen", x, y, eps, v) for v in _neighbours(STEP_VALUES, steps)]
        for key in keys:
            self._future(key, background=True)

    def wait(self) -> None:
        """Block until the background fits are done (tests, benchmarks)."""
        for fut in list(self._fits.values()):
            if not fut.cancelled():
                fut.exception()

    # ------------------------------------------------------------------ drawing
    def _ticks(self, attribute: str):
        attr = self.schema[attribute]
        return category_order(attr.taxonomy) if attr.kind == "categorical" else None

    def chart(self):
        """Both releases at the current settings (cached fits) and the side-by-side chart."""
        x, y = self.x_picker.value, self.y_picker.value
        if x == y:
            raise ValueError("pick two different attributes")
        eps, h, steps = float(self.eps_slider.value), int(self.h_slider.value), int(self.steps_slider.value)
        multi, multi_acc, multi_rects = self._get(("multi", x, y, eps, h))
        grid, grid_acc, grid_rects = self._get(("gen", x, y, eps, steps))
        self.last = (multi, grid)
        self.info.value = (f"DiffMulti: {multi.n_regions_} regions, ε' = {multi.epsilon_prime_:.3g} "
                           f"(|g| = {multi.max_depth_}) &nbsp;|&nbsp; DiffGen: {grid.n_regions_} cells, "
                           f"ε' = {grid.epsilon_prime_:.3g} &nbsp;|&nbsp; training accuracy of the noisy "
                           f"majority per region: DiffMulti <b>{multi_acc:.3f}</b>, DiffGen <b>{grid_acc:.3f}</b> "
                           f"(majority class {self._majority:.3f})")
        return partition_comparison(multi_rects, grid_rects, x, y, x_ticks=self._ticks(x), y_ticks=self._ticks(y),
                                    titles=(f"DiffMulti, ε = {eps:g}, h = {h:,}",
                                            f"DiffGen, ε = {eps:g}, {steps} steps"))

    def update(self, *_: Any) -> None:
        """Redraw (the slider callback), then prefetch the neighbouring settings."""
        if self.x_picker.value == self.y_picker.value:
            self.info.value = "Pick two different attributes."
            self.out.outputs = ()
            return
        show_chart(self.out, self.chart())
        self._prefetch(self.x_picker.value, self.y_picker.value, float(self.eps_slider.value),
                       int(self.h_slider.value), int(self.steps_slider.value))
