"""A stored showdown, read back, and its verdict ("which one when"): pandas and NumPy only.

Split from :mod:`dpexplore.evaluate.showdown` (which fits the methods and so loads scikit-learn)
so that a page opening from the stored sweep, notebook 07 as a Voilà app, imports only this:
:func:`load_showdown` and :func:`load_peers` read the files that
:func:`~dpexplore.evaluate.showdown.save_showdown` and ``benchmarks/peers.py`` write, and
:func:`which_one_when` turns a :func:`~dpexplore.evaluate.sweeps.summarise` table into the per-ε
verdict. Every name here is also importable from :mod:`dpexplore.evaluate.showdown`.
"""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd

__all__ = ["HIGHER_IS_BETTER", "which_one_when", "SHOWDOWN_FILES", "RESULT_COLUMNS", "PEER_COLUMNS",
           "AVAILABILITY_COLUMNS", "FIDELITY_FILES", "RULE_BREAKS", "load_showdown", "load_peers",
           "load_fidelity", "rule_breaks"]


# --------------------------------------------------------------------------- verdict
#: Metrics where a larger value is better (the others, like "error", are minimised).
HIGHER_IS_BETTER = frozenset({"accuracy", "auc"})


def which_one_when(summary: pd.DataFrame, *, metric: str = "error", tolerance: float = 0.01,
                   higher_is_better: bool | None = None) -> pd.DataFrame:
    """Per dataset (if a ``dataset`` column is present) and ε: the verdict, from the results.

    ``summary`` is :func:`~dpexplore.evaluate.sweeps.summarise` output (majority and non-private
    rows carry ε = inf). ``higher_is_better`` defaults to True for "accuracy" and "auc", False
    otherwise (errors). Columns: best (best median ``metric``; ties go to the faster method), its
    median and quartiles, runner-up, ``beats_majority`` (the best's worse quartile is still better
    than the majority's median; None without a majority row), ``gap_to_nonprivate`` (best minus
    non-private median) and ``fastest_good`` (the fastest method whose median is within
    ``tolerance`` of the best).
    """
    need = {"method", "epsilon", "metric", "median", "q25", "q75", "seconds"}
    if not isinstance(summary, pd.DataFrame) or not need <= set(summary.columns):
        raise ValueError(f"summary needs the columns {sorted(need)} (use summarise())")
    if isinstance(tolerance, bool) or not isinstance(tolerance, (int, float)) or not tolerance >= 0:
        raise ValueError(f"tolerance must be a number >= 0, got {tolerance!r}")
    higher = (metric in HIGHER_IS_BETTER) if higher_is_better is None else bool(higher_is_better)
    sign = -1.0 if higher else 1.0  # rank on sign * median: smaller is better
    s = summary[summary["metric"] == metric]
    if s.empty:
        raise ValueError(f"no rows for metric {metric!r}")
    keys = ["dataset"] if "dataset" in s.columns else []
    rows = []
    for key, group in (s.groupby(keys, sort=False) if keys else [((), s)]):
        ref = group[np.isinf(group["epsilon"])].groupby("method")["median"].median()
        private = group[np.isfinite(group["epsilon"])]
        for eps, g in private.groupby("epsilon"):
            g = g.assign(_rank=sign * g["median"]).sort_values(["_rank", "seconds"], kind="mergesort")
            best, second = g.iloc[0], (g.iloc[1] if len(g) > 1 else None)
            good = g[g["_rank"] <= best["_rank"] + tolerance]
            fastest = good.sort_values("seconds", kind="mergesort").iloc[0]
            worse_quartile = best["q25"] if higher else best["q75"]
            majority = ref.get("majority", np.nan)
            row = dict(zip(keys, key if isinstance(key, tuple) else (key,)))
            row.update({"epsilon": eps, "best": best["method"], "median": best["median"],
                        "q25": best["q25"], "q75": best["q75"],
                        "runner_up": None if second is None else second["method"],
                        "runner_up_median": np.nan if second is None else second["median"],
                        "majority": majority,
                        "beats_majority": None if np.isnan(majority) else bool(sign * worse_quartile < sign * majority),
                        "gap_to_nonprivate": best["median"] - ref.get("non-private", np.nan),
                        "fastest_good": fastest["method"], "fastest_seconds": fastest["seconds"]})
            rows.append(row)
    return pd.DataFrame(rows)


# --------------------------------------------------------------------------- the cached sweep
#: Files of a stored showdown in its directory (``notebooks/results/``).
SHOWDOWN_FILES = {"results": "07_showdown_results.csv", "availability": "07_showdown_availability.csv",
                  "meta": "07_showdown_sweep.json"}
#: Columns of the stored results: one row per (dataset, method, ε, run, metric); the majority
#: class and the non-private reference carry ε = inf.
RESULT_COLUMNS = ["dataset", "method", "epsilon", "run", "metric", "value", "seconds"]
#: Columns of the stored availability check: one row per (dataset, method).
AVAILABILITY_COLUMNS = ["dataset", "method", "status", "reason"]


def load_showdown(directory: str | Path) -> tuple[pd.DataFrame, pd.DataFrame, dict]:
    """Read a stored showdown: ``(results, availability, meta)``; checks the files agree."""
    directory = Path(directory)
    paths = {k: directory / v for k, v in SHOWDOWN_FILES.items()}
    missing = [str(p) for p in paths.values() if not p.exists()]
    if missing:
        raise FileNotFoundError(f"no stored showdown: {missing} missing; run `python benchmarks/showdown_sweep.py` "
                                "(or set RECOMPUTE = True in notebook 07)")
    results = pd.read_csv(paths["results"])
    availability = pd.read_csv(paths["availability"], keep_default_na=False)
    meta = json.loads(paths["meta"].read_text())
    if list(results.columns) != RESULT_COLUMNS:
        raise ValueError(f"{paths['results']} has columns {list(results.columns)}, expected {RESULT_COLUMNS}")
    results["epsilon"] = results["epsilon"].astype(float)
    grid = sorted(float(e) for e in results.loc[np.isfinite(results["epsilon"]), "epsilon"].unique())
    if len(grid) != len(meta["epsilons"]) or not np.allclose(grid, meta["epsilons"]):
        raise ValueError(f"{paths['results']} has the ε grid {grid} but its sidecar says {meta['epsilons']}: "
                         "recompute the cache")
    from .sweeps import EVALUATION_NOTE

    results.attrs["evaluation"] = EVALUATION_NOTE
    return results, availability, meta


#: Columns of the stored peers benchmark (``notebooks/results/peers.csv``, ``benchmarks/peers.py``).
PEER_COLUMNS = ["library", "library_version", "method", "epsilon", "delta", "metric", "value", "n_runs", "notes"]


def load_peers(path: str | Path) -> pd.DataFrame | None:
    """The peers benchmark (other libraries' methods at the showdown's ε), or None if the file is
    absent; rows without a finite value (a peer that could not run) are dropped. Adds ``label``:
    "library method", with its δ when δ > 0 (approximate DP)."""
    path = Path(path)
    if not path.exists():
        return None
    peers = pd.read_csv(path, keep_default_na=False, na_values=[""])
    missing = [c for c in PEER_COLUMNS if c not in peers.columns]
    if missing:
        raise ValueError(f"{path} lacks the column(s) {missing}; expected {PEER_COLUMNS}")
    for col in ("epsilon", "delta", "value"):
        peers[col] = pd.to_numeric(peers[col], errors="coerce")
    peers = peers[np.isfinite(peers["value"]) & np.isfinite(peers["epsilon"])].reset_index(drop=True)
    delta = peers["delta"].fillna(0.0)
    peers["label"] = [f"{lib} {m}" + (f" (δ = {d:.0e})" if d > 0 else "")
                      for lib, m, d in zip(peers["library"], peers["method"], delta)]
    return peers


#: Files of the stored shape benchmark (``benchmarks/fidelity.py``: ``results``, one file per run of
#: it, and ``rules``, the customer table's runs with its rules declared) and, per table, of its peers
#: (``benchmarks/peers.py``), in the showdown's directory.
FIDELITY_FILES = {"results": ("07_fidelity.csv", "07_fidelity_customers.csv"),
                  "rules": "07_fidelity_customers_rules.csv",
                  "peers": {"adult": "peers.csv", "messy": "peers_messy.csv", "customers": "peers_customers.csv"}}
#: the rule-break shares ``benchmarks/fidelity.py`` measures on the customer table, with their names
RULE_BREAKS = {"rules_addon_max": "add-on rule broken (worst of six)", "rules_phone": "phone rule broken"}


def load_fidelity(directory: str | Path) -> tuple[pd.DataFrame, dict[str, pd.DataFrame | None]]:
    """The stored shape benchmark: ``(runs, mst)``. ``runs`` has one row per (table, method, ε,
    run), each method under its display name (:mod:`dpexplore.registry`), the rule-break columns
    empty on the tables that do not measure them; ``mst`` holds, per table, OpenDP MST's rows of
    that table's peers file (:func:`load_peers`; None when the file is absent)."""
    directory = Path(directory)
    runs = _display_names(pd.concat([pd.read_csv(directory / name) for name in FIDELITY_FILES["results"]],
                                    ignore_index=True))
    mst = {}
    for table, name in FIDELITY_FILES["peers"].items():
        peers = load_peers(directory / name)
        mst[table] = None if peers is None else peers[peers["method"].str.startswith("MST")]
    return runs, mst


def rule_breaks(directory: str | Path) -> pd.DataFrame:
    """The share of synthetic rows breaking the customer table's rules (:data:`RULE_BREAKS`), and
    the 2-way TVD beside them, mean over the runs: one row per (method, ε), one column per (rules
    "not declared" / "declared", measure); MST (its peers file) keeps the plain schema, so it has
    no "declared" values. Rows: ε, then the methods in the order of the stored runs, MST last.
    """
    runs, mst = load_fidelity(directory)
    undeclared = runs[runs["dataset"] == "customers"]
    declared = _display_names(pd.read_csv(Path(directory) / FIDELITY_FILES["rules"]))
    measures = ["tvd_2way", *RULE_BREAKS]
    peers = mst["customers"][mst["customers"]["metric"].isin(measures)]
    peers = peers.pivot_table(index=["label", "epsilon"], columns="metric", values="value").reset_index()
    means = {"not declared": pd.concat([undeclared, peers.rename(columns={"label": "method"})]),
             "declared": declared}
    table = pd.concat({k: v.groupby(["method", "epsilon"], sort=False)[measures].mean()
                       for k, v in means.items()}, axis=1)
    order = {m: i for i, m in enumerate(means["not declared"]["method"].unique())}   # ours, then MST
    return table.sort_index(key=lambda level: level.map(order) if level.name == "method" else level,
                            level=["epsilon", "method"])


def _display_names(runs: pd.DataFrame) -> pd.DataFrame:
    """``runs`` with each method under its display name (:mod:`dpexplore.registry`)."""
    from ..registry import all_methods

    display_name = {spec.name: spec.display for spec in all_methods()}
    return runs.assign(method=runs["method"].map(lambda m: display_name.get(m, m)))
