"""Every public release stays the same seed for seed across refactorings.

``benchmarks/golden_releases.py`` fingerprints about 230 releases (noisy counts, grids, trees,
ledgers, predictions, synthetic tables, fits from a source, models and selectors) of every
registered publisher and compares them with ``tests/data/golden_releases.json``. It runs in its
own interpreter because it silences the warnings that small noisy releases raise by design.
"""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_releases_match_the_recorded_fingerprints():
    run = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "golden_releases.py"), "check",
                          str(ROOT / "tests" / "data" / "golden_releases.json")],
                         capture_output=True, text=True, cwd=ROOT, timeout=600)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    assert " 0 differ" in run.stdout
