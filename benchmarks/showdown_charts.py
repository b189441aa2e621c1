"""The accuracy-or-shape charts of notebook 07, drawn once from the stored results.

    python benchmarks/showdown_charts.py          # writes notebooks/results/07_fidelity_charts.json

Notebook 07 shows three charts (one per table) drawn by ``dpexplore.plots.fidelity.fidelity_chart``
from the stored shape benchmark (``07_fidelity.csv`` and ``07_fidelity_customers.csv``,
``benchmarks/fidelity.py``) and MST's rows of
the stored peers benchmark (``peers.csv``, ``peers_messy.csv``, ``peers_customers.csv``,
``benchmarks/peers.py``). They depend
on no slider, and drawing them costs about 0.8 CPU-s, which every visitor of the Voilà app would pay;
so they are drawn here and the notebook reads them back (``dpexplore.plots.load_charts``). Run it
after either benchmark rewrites its file; ``tests/test_notebook_caches.py`` checks that the stored
charts are what this script draws from the stored results.
"""
from __future__ import annotations

from pathlib import Path

from dpexplore.evaluate.showdown_results import load_fidelity
from dpexplore.plots import save_charts
from dpexplore.plots.fidelity import fidelity_chart

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "notebooks" / "results"
CHARTS = "07_fidelity_charts.json"
TITLES = {"adult": "Adult: accuracy or shape? (median of the runs, thin lines: smallest to largest)",
          "messy": "Hospital stays (the generated table of notebook 08)",
          "customers": "Customers (a generated table with a logic; its rules not declared)"}


def draw(directory: Path = RESULTS) -> dict:
    """One chart per table of the stored shape benchmark in ``directory``, with MST's points."""
    runs, mst = load_fidelity(directory)
    return {table: fidelity_chart(runs[runs["dataset"] == table], peers=mst[table], title=title)
            for table, title in TITLES.items()}


def main() -> None:
    path = save_charts(draw(RESULTS), RESULTS / CHARTS)
    print(f"wrote {path.relative_to(ROOT)} ({path.stat().st_size / 1024:.0f} KiB)")


if __name__ == "__main__":
    main()
