"""A cheap visitor: what the Voilà app pages import, in a fresh process.

Each check runs a new interpreter (what a page's kernel is) and reads ``sys.modules``; no timing
is asserted (``benchmarks/voila_visitor_cost.py`` measures the CPU seconds).
"""
from __future__ import annotations

import importlib
import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _loaded(code: str, modules: tuple[str, ...]) -> list[str]:
    """Which of ``modules`` are imported after running ``code`` in a fresh interpreter."""
    probe = f"{code}\nimport sys, json\nprint(json.dumps([m for m in {modules!r} if m in sys.modules]))"
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, cwd=ROOT / "notebooks",
                         timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


def _import_cell(prefix: str) -> str:
    """The first code cell of the notebook's jupytext source (its imports)."""
    import jupytext

    source = sorted((ROOT / "notebooks").glob(f"{prefix}_*.py"))[0]
    return next(c.source for c in jupytext.read(source).cells if c.cell_type == "code")


HEAVY = ("sklearn", "scipy.stats", "rfc3987_syntax", "matplotlib", "duckdb")


def test_showdown_page_reads_its_stored_sweep_without_scikit_learn_or_scipy_stats():
    assert _loaded(_import_cell("07"), HEAVY) == []


def test_mechanisms_page_imports_nothing_heavy():
    assert _loaded(_import_cell("01"), HEAVY) == []


def test_the_launcher_and_the_package_root_load_no_numerics():
    assert _loaded("import dpexplore, dpexplore.apps", ("numpy", "pandas", "scipy", "altair", "voila")) == []


@pytest.mark.parametrize("package", ["dpexplore", "dpexplore.evaluate", "dpexplore.publish", "dpexplore.models",
                                     "dpexplore.select"])
def test_every_public_name_of_a_lazy_package_is_importable(package):
    module = importlib.import_module(package)
    for name in module.__all__:
        value = getattr(module, name)
        assert value is getattr(module, name)           # cached, the same object each time
    assert set(module.__all__) <= set(dir(module))
    with pytest.raises(AttributeError, match="has no attribute 'no_such_name'"):
        getattr(module, "no_such_name")


@pytest.mark.skipif(importlib.util.find_spec("rfc3987_syntax") is None, reason="rfc3987_syntax is not installed")
def test_altair_without_the_iri_grammar_keeps_jsonschema_iri_checks():
    """dpexplore.plots imports altair with jsonschema's IRI check deferred: the grammar module is
    not loaded at import, and the check still accepts an IRI and rejects a broken one."""
    code = ("import sys\nimport dpexplore.plots\nat_import = 'rfc3987_syntax' in sys.modules\n"
            "import jsonschema\nv = jsonschema.Draft7Validator({'format': 'iri'}, "
            "format_checker=jsonschema.Draft7Validator.FORMAT_CHECKER)\n"
            "assert not at_import\nassert v.is_valid('https://example.org/d%C3%A9j%C3%A0/ü')\n"
            "assert not v.is_valid('https://exa mple.org/<>')")
    assert _loaded(code, ("rfc3987_syntax",)) == ["rfc3987_syntax"]   # loaded by the check, on first use
