"""Load a script of ``benchmarks/`` as a module (the scripts are not a package), for the tests
that recompute a small version of a cached result."""
from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"


def load_benchmark(filename: str, name: str | None = None) -> ModuleType:
    """``benchmarks/<filename>`` imported under ``name`` (default: the file's stem)."""
    spec = importlib.util.spec_from_file_location(name or Path(filename).stem, BENCHMARKS / filename)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
