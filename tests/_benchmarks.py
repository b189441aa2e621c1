"""Load a script of the repository as a module (``benchmarks/`` and ``notebooks/`` are not
packages): the tests that recompute a small version of a cached result, and the notebook build."""
from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"


def load_script(path: Path, name: str) -> ModuleType:
    """The script at ``path`` imported as module ``name`` (registered in ``sys.modules``, so that
    its dataclasses and pickles resolve; a second call returns the same module)."""
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def load_benchmark(filename: str, name: str | None = None) -> ModuleType:
    """``benchmarks/<filename>`` imported under ``name`` (default: the file's stem)."""
    return load_script(BENCHMARKS / filename, name or Path(filename).stem)
