"""Bring your own table: the ipywidgets app over :mod:`dpexplore.tables`.

Every step is a call into the library (:func:`~dpexplore.tables.read_table`,
:func:`~dpexplore.tables.draft_schema`, :func:`~dpexplore.tables.declare` for derived columns,
:func:`~dpexplore.tables.build_schema`, :func:`~dpexplore.tables.release`,
:func:`~dpexplore.tables.export_release`); this module only
lays out widgets and turns their values into the arguments of those calls. The library names are
re-exported here for older scripts.
"""
from __future__ import annotations

import html
import os
import warnings
from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np
import pandas as pd

from ..budget import BudgetAccountant, BudgetExceededError
from ..tables import (DRAFT_COLUMNS, EPSILON_RANGE, METHODS, FewRecordsWarning, HighCardinalityWarning,
                      InputError, ReleaseResult, build_schema, check_table, declare, DEFAULT_MARGINAL_SHARE,
                      draft_schema, export_release, ledger_table, method_name, read_table, release,
                      select_columns, summary_markdown, synthetic_csv, utility_markdown)

__all__ = ["InputError", "read_table", "check_table", "draft_schema", "build_schema", "METHODS",
           "release", "ReleaseResult", "ledger_table", "summary_markdown", "utility_markdown", "synthetic_csv",
           "DRAFT_COLUMNS", "BudgetExceededError", "YourDataApp"]

_ROW = "column · kind · lower · upper · integer · cut points · categories (or groups 'A: a, b; other: *') · public?"


def _placeholder(text: Any, limit: int = 60) -> str:
    text = "" if text is None or (isinstance(text, float) and np.isnan(text)) else str(text)
    if isinstance(text, str) and len(text) > limit:
        return text[:limit] + f"… ({text.count(',') + 1} values)"
    return text


def _num(text: Any) -> str:
    if text is None or (isinstance(text, float) and np.isnan(text)):
        return ""
    return f"{float(text):g}"


class YourDataApp:
    """ipywidgets front end of :mod:`dpexplore.tables`; ``.widget`` is the box to display.

    1. Upload (CSV, CSV.gz or Parquet) or type a path and press Load. 2. Tick the columns to keep
    (those with missing values start unticked) and choose the target. 3. One row per kept column:
    the drafted values are shown greyed (placeholders) and flagged ⚠ *from data*; typing a value —
    even the one shown — declares it (as does ticking *public*). Numeric columns take cut points
    ("long-tail", "equal", "equal:8" or numbers), categorical ones a list or typed groups. Below
    them, a derived column (a public function of a kept column, :func:`~dpexplore.tables.declare`
    with ``derived_from``): pick its source, type its name and either edges and labels (a numeric
    source) or a mapping (a categorical one), press Add; it is listed as *derived*, and the
    release computes it from its source, with no ε. 4. The method, ε (typed; outside 0.01–10 is
    an error, never a clamp), the share of ε for the marginals that shape the synthetic table (the
    default :data:`~dpexplore.tables.DEFAULT_MARGINAL_SHARE` until you type another),
    Release: a progress bar, then the summary and links to the files written in ``export_dir``
    (next to the notebook by default). Below the shareable summary, the held-out utility and the
    synthetic table's shape against the training part are shown apart,
    labelled NOT PRIVATE (for the data owner only).

    ``random_state`` (default None: fresh OS entropy) seeds one Generator for the whole session;
    never fix a seed for data you publish (two releases with shared noise give back the true
    counts). ``accountant`` (optional) is a session budget every release spends from.
    """

    def __init__(self, path: str | None = None, epsilon: float = 1.0, method: str = "PrivPfC",
                 random_state: Any = None, accountant: BudgetAccountant | None = None,
                 export_dir: str | os.PathLike | None = "dp_release",
                 marginal_share: float | None = None):
        import ipywidgets as W

        from .._validation import check_random_state

        if accountant is not None and not isinstance(accountant, BudgetAccountant):
            raise TypeError(f"accountant must be a BudgetAccountant, got {type(accountant).__name__}")
        self._W = W
        self.random_state = random_state
        self.accountant = accountant
        self.export_dir = None if export_dir is None else Path(export_dir)
        self._rng = check_random_state(random_state)
        self.raw: pd.DataFrame | None = None
        self.frame: pd.DataFrame | None = None
        self.draft_table: pd.DataFrame | None = None
        self.result: ReleaseResult | None = None
        self.files: dict[str, Path] = {}
        self.last_error: str | None = None
        self.leak_messages: list[str] = []
        self.notes: list[str] = []
        self._rows: dict[str, dict[str, Any]] = {}
        self._row_boxes: dict[str, Any] = {}
        #: derived column -> the keywords of tables.declare, as typed (applied in this order)
        self._derived: dict[str, dict[str, str]] = {}
        style = {"description_width": "initial"}
        self.upload = W.FileUpload(accept=".csv,.txt,.tsv,.gz,.parquet", multiple=False, description="Upload")
        self.path = W.Text(value=path or "", placeholder="or a path: my_table.csv, .csv.gz or .parquet",
                           description="Path", layout=W.Layout(width="30em"))
        self.load_button = W.Button(description="Load", button_style="primary")
        self.columns = W.SelectMultiple(options=[], rows=8, description="Keep", style=style,
                                        layout=W.Layout(width="22em"))
        self.apply_columns = W.Button(description="Use these columns", layout=W.Layout(width="14em"))
        self.target = W.Dropdown(options=[], description="Target", style=style)
        self.drop_missing = W.Checkbox(value=False, indent=False, layout=W.Layout(width="auto"),
                                       description="drop rows with a missing value (a per-record rule, no ε)")
        self.schema_box = W.VBox()
        self.derived_source = W.Dropdown(options=[], description="computed from", style=style,
                                         layout=W.Layout(width="17em"))
        self.derived_name = W.Text(placeholder="e.g. age_band", description="new column", style=style,
                                   layout=W.Layout(width="17em"))
        self.derived_edges = W.Text(placeholder="0, 40, 65, 100", description="edges", style=style,
                                    layout=W.Layout(width="13em"))
        self.derived_labels = W.Text(placeholder="young, middle, old", description="labels", style=style,
                                     layout=W.Layout(width="14em"))
        self.derived_mapping = W.Text(placeholder="N: north; S: south*; other: *", description="or mapping",
                                      style=style, layout=W.Layout(width="20em"))
        self.derived_add = W.Button(description="Add", tooltip="add the derived column", layout=W.Layout(width="6em"))
        # the registry's display names as labels, its names as values (tables.METHODS)
        self.method = W.Dropdown(options=[(getattr(spec, "display", name), name) for name, spec in METHODS.items()],
                                 value=method_name(method), description="Method", style=style)
        self.epsilon = W.FloatText(value=epsilon, description=f"ε ({EPSILON_RANGE[0]:g}–{EPSILON_RANGE[1]:g})",
                                   style=style, layout=W.Layout(width="13em"))
        share = DEFAULT_MARGINAL_SHARE if marginal_share is None else marginal_share
        self.marginal_share = W.FloatText(value=share, description="share for marginals", style=style,
                                          layout=W.Layout(width="14em"))
        self.release_button = W.Button(description="Release", button_style="success", disabled=True)
        self.messages = W.HTML()
        self.progress = W.Output()
        self.results = W.Output()
        self.downloads = W.HTML()
        self.upload.observe(self._on_upload, names="value")
        self.load_button.on_click(self._on_load_click)
        self.apply_columns.on_click(lambda b: self._new_target())
        self.target.observe(self._on_target, names="value")
        self.release_button.on_click(lambda b: self.release())
        self.derived_source.observe(lambda change: self._refresh_derived_inputs(), names="value")
        self.derived_add.on_click(lambda b: self.add_derived())
        self.widget = W.VBox([
            W.HTML("<b>1. Your table</b> (CSV, CSV.gz or Parquet)"),
            W.HBox([self.upload, self.path, self.load_button]),
            W.HTML("<b>2. Columns and target</b> (columns you leave out may hold anything)"),
            W.HBox([self.columns, W.VBox([self.target, self.apply_columns, self.drop_missing])]),
            W.HTML("<b>3. Public schema</b>: type the values you know without the data (from a public "
                   "source, not copied from the grey draft), or tick <i>public</i> if a public source gives "
                   "the drafted value"),
            self.schema_box,
            W.HTML("<b>Derived column</b> (optional): bands of a number or a mapping of categories, computed by "
                   "a public rule (no ε)"),
            W.HBox([self.derived_source, self.derived_name]),
            W.HBox([self.derived_edges, self.derived_labels, self.derived_mapping, self.derived_add]),
            W.HTML("<b>4. Method and budget</b>"),
            W.HBox([self.method, self.epsilon, self.marginal_share, self.release_button]),
            self.messages, self.progress, self.results, self.downloads])

    # ------------------------------------------------------------------ messages
    def _error(self, text: str) -> None:
        self.last_error = text
        self.messages.value = f'<div style="color:#b00020">✖ {html.escape(text)}</div>'

    def _info(self, text: str, warn: Sequence[str] = ()) -> None:
        self.last_error = None
        body = f"<div>✔ {html.escape(text)}</div>"
        body += "".join(f'<div style="color:#a15c00">⚠ {html.escape(w)}</div>' for w in warn)
        self.messages.value = body

    def _clear_release(self) -> None:
        self.result = None
        self.files = {}
        self.downloads.value = ""
        self.results.clear_output()
        self.progress.clear_output()

    # ------------------------------------------------------------------ events
    def _on_upload(self, change: Mapping) -> None:
        if change["new"]:  # clearing the upload is not a new file
            self.load(change["new"])

    def _on_load_click(self, _button: Any = None) -> None:
        path = self.path.value.strip()  # the path box, when filled, is what "Load" means
        self.load(path if path else None)

    def _on_target(self, change: Mapping) -> None:
        if self.raw is not None and change["new"] is not None:
            if change["new"] not in self.columns.value:
                self.columns.value = tuple(self.columns.value) + (change["new"],)
            self._new_target()

    # ------------------------------------------------------------------ steps
    def load(self, source: Any = None, name: str | None = None) -> bool:
        """Read ``source`` (or the upload, or the path box); fill the column list and the target."""
        self._clear_release()
        self.release_button.disabled = True
        self._derived = {}
        try:
            if source is None:
                source = self.upload.value if self.upload.value else self.path.value.strip()
                if not source:
                    raise InputError("upload a file or type a path first")
            raw = read_table(source, name)
        except Exception as exc:  # noqa: BLE001 - any failure is a message, never a traceback
            self.raw = self.frame = None
            self._rows = {}
            self._show_schema()
            self._set_columns([], None)
            self._error(str(exc) if isinstance(exc, InputError) else
                        f"the file could not be read: {type(exc).__name__}: {exc}")
            return False
        self.raw = raw
        cols = list(raw.columns)
        target = cols[-1]
        complete = [c for c in cols if not raw[c].isna().any() or c == target]
        self._set_columns(cols, target, keep=complete)
        return self._new_target()

    def _set_columns(self, cols: list[str], target: str | None, keep: Sequence[str] = ()) -> None:
        """Fill the column list and the target without firing the target handler (only ours is
        removed: ipywidgets' own handlers, which keep the displayed index in step, stay)."""
        self.target.unobserve(self._on_target, names="value")
        try:
            self.columns.options = cols
            self.columns.value = tuple(keep)
            self.target.options = cols
            self.target.value = target
        finally:
            self.target.observe(self._on_target, names="value")

    def _new_target(self) -> bool:
        self._clear_release()
        self.release_button.disabled = True
        if self.raw is None or self.target.value is None:
            return False
        try:
            keep = [c for c in self.raw.columns if c in set(self.columns.value) | {self.target.value}]
            self.frame = select_columns(self.raw, keep)
            with warnings.catch_warnings(record=True) as caught:  # shown in the app, not on stderr
                warnings.simplefilter("always")
                self.draft_table, notes = draft_schema(self.frame, self.target.value)
        except Exception as exc:  # noqa: BLE001 - a message, never a traceback
            self._rows = {}
            self._show_schema()
            self._error(str(exc) if isinstance(exc, ValueError) else f"{type(exc).__name__}: {exc}")
            return False
        self.notes = notes[1:]  # the first note is the leak warning, shown as the ⚠ flags
        # a derived column stays while its source is still a kept predictor and its name is not the target
        gone = [name for name, rule in self._derived.items()
                if rule["derived_from"] not in self.frame.columns or self.target.value in (name, rule["derived_from"])]
        for name in gone:
            del self._derived[name]
        self._build_rows(self.draft_table)
        self.release_button.disabled = False
        self._info(f"{self.frame.shape[1]} of {self.raw.shape[1]} columns kept; review the schema below "
                   f"({len(self.leak_rows())} row(s) still ⚠ from data).",
                   warn=self._leak_warning() + self.notes
                   + ([f"derived column(s) {', '.join(map(repr, gone))} removed: the column they were computed from "
                       "is no longer a kept predictor"] if gone else []))
        return True

    def _leak_warning(self) -> list[str]:
        rows = self.leak_rows()
        return ([f"PrivacyLeakWarning: the drafted domains of {', '.join(rows)} were read from the data: type "
                 "the values you know without it"] if rows else [])

    def _build_rows(self, draft: pd.DataFrame) -> None:
        W = self._W
        self._rows, self._row_boxes = {}, {}
        for r in draft.to_dict("records"):
            kinds = ["target"] if r["kind"] == "target" else ["numeric", "categorical", "drop"]
            # no descriptions in this table (its header names the columns): the tooltips are the
            # controls' accessible names (ipywidgets sets them as the inputs' title)
            name = str(r["column"])
            kind = W.Dropdown(options=kinds, value=r["kind"], layout=W.Layout(width="8.5em"), tooltip=f"{name}: kind")
            lower = W.Text(placeholder=_num(r["lower"]), layout=W.Layout(width="5.5em"), tooltip=f"{name}: lower bound")
            upper = W.Text(placeholder=_num(r["upper"]), layout=W.Layout(width="5.5em"), tooltip=f"{name}: upper bound")
            integer = W.Checkbox(value=bool(r["integer"]), indent=False, layout=W.Layout(width="2.5em"),
                                 tooltip=f"{name}: integer values")
            cuts = W.Text(placeholder=_placeholder(r["cuts"]), layout=W.Layout(width="8em"), tooltip=f"{name}: cut points")
            cats = W.Text(placeholder=_placeholder(r["categories"]), layout=W.Layout(width="20em"),
                          tooltip=f"{name}: categories")
            public = W.Checkbox(value=not r["from_data"], indent=False, layout=W.Layout(width="2.5em"),
                                tooltip=f"{name}: bounds and categories are public (declared)")
            flag = W.HTML(layout=W.Layout(width="8em"))
            row = {"kind": kind, "lower": lower, "upper": upper, "integer": integer, "cuts": cuts,
                   "categories": cats, "public": public, "flag": flag, "draft": r}
            self._rows[str(r["column"])] = row

            def refresh(_=None, row=row):
                k = row["kind"].value
                for key in ("lower", "upper", "integer", "cuts"):
                    row[key].disabled = k != "numeric"
                row["categories"].disabled = k in ("numeric", "drop")
                row["flag"].value = ("" if not self._row_from_data(row) else
                                     '<span style="color:#a15c00">⚠ from data</span>')

            refresh()
            for key in ("kind", "public", "lower", "upper", "categories"):
                row[key].observe(refresh, names="value")
            kind.observe(lambda change: self._refresh_derived_inputs(), names="value")
            self._row_boxes[name] = W.HBox([W.Label(name, layout=W.Layout(width="9em")), kind, lower, upper,
                                            integer, cuts, cats, public, flag])
        self._show_schema()

    def _show_schema(self) -> None:
        """The schema rows, each derived column after its source (a kept column declared derived
        shows as its derived row instead); the derived panel's sources follow the kept rows."""
        W = self._W
        rows = []
        for column in self._rows:   # as tables.declare orders the draft: a new column after its source
            rows.append(self._derived_box(column) if column in self._derived else self._row_boxes[column])
            rows += [self._derived_box(name) for name, rule in self._derived.items()
                     if rule["derived_from"] == column and name not in self._rows]
        self.schema_box.children = (W.HTML(f"<small>{_ROW}</small>"), *rows) if self._rows else ()
        sources = [c for c, r in self._rows.items() if r["draft"]["kind"] != "target" and c not in self._derived]
        chosen = self.derived_source.value
        self.derived_source.options = sources
        self.derived_source.value = chosen if chosen in sources else (sources[0] if sources else None)
        self._refresh_derived_inputs()

    def _derived_box(self, name: str) -> Any:
        """A derived column's row: its source and rule as typed, and a button that removes it."""
        W = self._W
        rule = self._derived[name]
        bands = "mapping" not in rule
        remove = W.Button(description="remove", tooltip=f"{name}: remove the derived column",
                          layout=W.Layout(width="7em"))
        remove.on_click(lambda b: self.remove_derived(name))
        return W.HBox([
            W.Label(name, layout=W.Layout(width="9em")),
            W.Label("derived", layout=W.Layout(width="8.5em")),
            W.Label(f"from {rule['derived_from']}", layout=W.Layout(width="14em")),
            W.Label(rule["edges"] if bands else "", tooltip=f"{name}: band edges", layout=W.Layout(width="8em")),
            W.Label(rule["labels"] if bands else rule["mapping"],
                    tooltip=f"{name}: " + ("band labels" if bands else "mapping"), layout=W.Layout(width="20em")),
            remove])

    def _refresh_derived_inputs(self) -> None:
        """Edges and labels for a numeric source, a mapping for a categorical one."""
        row = self._rows.get(self.derived_source.value)
        kind = row["kind"].value if row is not None else None
        self.derived_edges.disabled = self.derived_labels.disabled = kind == "categorical"
        self.derived_mapping.disabled = kind == "numeric"

    @property
    def derived(self) -> dict[str, dict[str, str]]:
        """The derived columns declared in the panel: name -> the keywords of
        :func:`~dpexplore.tables.declare` (``derived_from`` with ``edges`` and ``labels``, or ``mapping``)."""
        return {name: dict(rule) for name, rule in self._derived.items()}

    def add_derived(self) -> bool:
        """Declare the derived column typed in the panel (:func:`~dpexplore.tables.declare` with
        ``derived_from``: edges and labels for a numeric source, a mapping for a categorical one).
        A bad rule is the message (naming the column and the rule) and leaves the draft as it was."""
        if not self._rows:
            self._error("load a table first")
            return False
        name, source = self.derived_name.value.strip(), self.derived_source.value
        if not name or source is None:
            self._error("derived column: choose the column it is computed from and type the new column's name")
            return False
        if name == self.target.value:
            self._error(f"derived column {name!r}: that is the target's name: choose another name")
            return False
        if self._rows[source]["kind"].value == "numeric":
            rule = {"derived_from": source, "edges": self.derived_edges.value.strip(),
                    "labels": self.derived_labels.value.strip()}
        else:
            rule = {"derived_from": source, "mapping": self.derived_mapping.value.strip()}
        others = {n: r for n, r in self._derived.items() if n != name}
        try:   # the new rule first: the others are checked again against it
            self._declared(self._typed_draft(), {name: rule, **others})
        except Exception as exc:  # noqa: BLE001 - a message, never a traceback
            self._error(str(exc) if isinstance(exc, ValueError) else f"{type(exc).__name__}: {exc}")
            return False
        self._derived[name] = rule
        for box in (self.derived_name, self.derived_edges, self.derived_labels, self.derived_mapping):
            box.value = ""
        self._show_schema()
        self._info(f"derived column {name!r} added: computed from {source!r} in your table and in every synthetic "
                   "table (a public rule, no ε)", warn=self._leak_warning())
        return True

    def remove_derived(self, name: str) -> None:
        """Forget the derived column ``name`` (a kept column of that name is read from the table again)."""
        if self._derived.pop(name, None) is not None:
            self._show_schema()
            self._info(f"derived column {name!r} removed", warn=self._leak_warning())

    @staticmethod
    def _row_from_data(row: dict) -> bool:
        """Still read from the data: not ticked public, and the values that make its domain not
        typed (any typed value declares it, even the one the draft shows)."""
        k = row["kind"].value
        if k == "drop" or row["public"].value:
            return False
        if k == "numeric":
            return not (row["lower"].value.strip() and row["upper"].value.strip())
        return not row["categories"].value.strip()

    @property
    def rows(self) -> dict[str, dict[str, Any]]:
        """The declaration widgets of each kept column, by name (``"lower"``, ``"upper"``,
        ``"categories"``, ``"public"``, …): setting their values is what typing in the form does."""
        return self._rows

    def leak_rows(self) -> list[str]:
        """Columns whose domain is still the one read from the data."""
        return [c for c, r in self._rows.items() if c not in self._derived and self._row_from_data(r)]

    def draft(self) -> pd.DataFrame:
        """The schema table as currently declared in the widgets (typed values, else the draft's),
        with the derived columns of the panel; :class:`InputError` if one no longer fits its
        source's row (its kind or bounds were changed since)."""
        return self._declared(self._typed_draft(), self._derived)

    @staticmethod
    def _declared(draft: pd.DataFrame, derived: Mapping[str, Mapping[str, str]]) -> pd.DataFrame:
        for name, rule in derived.items():
            draft = declare(draft, name, **rule)
        return draft

    def _typed_draft(self) -> pd.DataFrame:
        rows = []
        for c, r in self._rows.items():
            d = r["draft"]
            typed = r["categories"].value.strip()
            groups = typed if ":" in typed else ""
            cats = d["categories"] if not typed or groups else typed
            rows.append({"column": c, "kind": r["kind"].value,
                         "lower": r["lower"].value.strip() or d["lower"], "upper": r["upper"].value.strip() or d["upper"],
                         "integer": r["integer"].value, "categories": cats,
                         "cuts": r["cuts"].value.strip() or d["cuts"], "groups": groups,
                         "from_data": self._row_from_data(r)})
        return pd.DataFrame(rows)

    def release(self) -> ReleaseResult | None:
        """Build the schema from the widgets and release; show the progress, results or the error."""
        self._clear_release()
        if self.frame is None or not self._rows:
            if self.last_error is None:  # keep the message that explains why nothing is loaded
                self._error("load a table first")
            return None
        try:
            with warnings.catch_warnings(record=True) as caught:  # shown below, not on stderr
                warnings.simplefilter("always")
                schema, encoded, leaks = build_schema(
                    self.frame, self.draft(), missing="drop-rows" if self.drop_missing.value else "error")
            hints = [str(w.message) for w in caught if issubclass(w.category, HighCardinalityWarning)]
            with self.progress, warnings.catch_warnings(record=True) as small:  # shown below
                warnings.simplefilter("always")
                result = release(encoded, schema, self.method.value, self.epsilon.value, leaks=leaks,
                                 random_state=self._rng, accountant=self.accountant,
                                 marginal_share=self.marginal_share.value, progress=True)
            hints += [str(w.message) for w in small if issubclass(w.category, FewRecordsWarning)]
        except (InputError, BudgetExceededError) as exc:
            self._error(str(exc))
            return None
        except Exception as exc:  # noqa: BLE001 - a method refused the data: a message, not a traceback
            self._error(f"{self.method.value} could not run on this table: {type(exc).__name__}: {exc}")
            return None
        self.result = result
        self.leak_messages = leaks
        warn = [f"PrivacyLeakWarning: {'; '.join(leaks)}: type those values to declare them"] if leaks else []
        what = (f"{len(result.synthetic)} synthetic rows" if result.released == "synthetic table"
                else "a model (no synthetic table)")
        self._info(f"released {what} with {result.method} at ε = {result.epsilon:.3g}", warn=warn + hints)
        with self.results:
            from IPython.display import Markdown, display

            display(Markdown(summary_markdown(result)))
            if len(result.utility):
                display(Markdown(utility_markdown(result)))
        if self.export_dir is not None:
            self.files = export_release(result, self.export_dir)
            self.downloads.value = " ".join(
                f'<a href="{html.escape(self._href(p))}" download="{html.escape(p.name)}" target="_blank" '
                f'style="margin-right:1.5em">⬇ {html.escape(p.name)}</a>' for p in self.files.values())
        return result

    @staticmethod
    def _href(path: Path) -> str:
        """A link relative to the notebook's folder (the kernel's working directory)."""
        try:
            return Path(os.path.relpath(path.resolve(), Path.cwd())).as_posix()
        except ValueError:  # another drive
            return path.resolve().as_uri()
