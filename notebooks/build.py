"""Build the stored notebooks from their jupytext sources (run from anywhere).

Each notebook ``notebooks/NN_name.ipynb`` is paired with ``notebooks/NN_name.py`` (jupytext's
percent format; see ``jupytext.toml``). The ``.py`` file is the source of truth: edit it (or the
notebook in JupyterLab with jupytext installed), then build::

    .venv/bin/python notebooks/build.py 02 05     # sync, execute in full mode, store outputs
    .venv/bin/python notebooks/build.py           # every notebook
    .venv/bin/python notebooks/build.py --no-execute 02   # only sync the .ipynb cells

Executing stores every output and the widgets' state, and prints each notebook's Run All time.
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import jupytext
from jupytext.combine import combine_inputs_with_outputs
import nbformat
from nbclient import NotebookClient

HERE = Path(__file__).resolve().parent


def sources(selected: list[str]) -> list[Path]:
    """The ``NN_name.py`` sources whose names start with one of ``selected`` (all when empty)."""
    found = sorted(p for p in HERE.glob("[0-9][0-9]_*.py"))
    if not selected:
        return found
    chosen = [p for p in found if any(p.name.startswith(s) for s in selected)]
    missing = [s for s in selected if not any(p.name.startswith(s) for p in found)]
    if missing:
        raise SystemExit(f"no notebook source starts with {missing}; have {[p.stem for p in found]}")
    return chosen


def build(source: Path, execute: bool = True, timeout: int = 1200) -> float:
    """Write ``source``'s notebook; execute it first unless ``execute`` is False. Returns seconds."""
    nb = jupytext.read(source)
    nb.metadata.pop("jupytext", None)
    nb.metadata["kernelspec"] = {"display_name": "Python 3", "language": "python", "name": "python3"}
    seconds = 0.0
    if execute:
        env_quick = os.environ.pop("DPEXPLORE_QUICK", None)   # stored outputs come from full runs
        try:
            start = time.perf_counter()
            NotebookClient(nb, timeout=timeout, kernel_name="python3", store_widget_state=True,
                           resources={"metadata": {"path": str(HERE)}}).execute()
            seconds = time.perf_counter() - start
        finally:
            if env_quick is not None:
                os.environ["DPEXPLORE_QUICK"] = env_quick
    else:   # keep the stored outputs of cells whose source did not change
        target = source.with_suffix(".ipynb")
        if target.exists():
            nb = combine_inputs_with_outputs(nb, nbformat.read(target, as_version=4), fmt="py:percent")
    nbformat.write(nb, source.with_suffix(".ipynb"))
    return seconds


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("notebooks", nargs="*", help="name prefixes, e.g. 02 05 (default: all)")
    parser.add_argument("--no-execute", action="store_true", help="only sync cells, no outputs")
    args = parser.parse_args(argv)
    for source in sources(args.notebooks):
        seconds = build(source, execute=not args.no_execute)
        took = f"Run All {seconds:6.1f} s" if not args.no_execute else "synced (not executed)"
        print(f"{source.with_suffix('.ipynb').name:34s} {took}", flush=True)


if __name__ == "__main__":
    sys.exit(main())
