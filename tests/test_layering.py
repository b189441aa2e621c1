"""The module map (CONTRIBUTING.md), enforced on the source of ``dpexplore/``.

Imports point one way:

    core ← select ← models ← publish ← registry, conformance ← evaluate ← tables ← plots
         ← widgets ← lab, apps, app_server

(``select`` never imports ``models``; ``models`` may import ``select``; ``plots`` imports the
core only.) The core has an order of its own, ``CORE_RANK``: a core module imports only core
modules of a lower rank (``_validation`` at the bottom imports none). Every import counts,
function-level and ``TYPE_CHECKING`` ones included, so no import hides an upward edge or a
cycle. A private name (``_name``) is imported only inside its own package, from a private module
of it (``models/_base.py``, ``tables/_common.py``): a helper shared across modules gets a public
name in its home. Comments and docstrings cite papers (section, equation, algorithm line) or the
project's own documents.
"""
from __future__ import annotations

import ast
import io
import re
import tokenize
from pathlib import Path
from typing import Iterator, NamedTuple

import pytest

PKG = Path(__file__).resolve().parents[1] / "dpexplore"
ROOT = PKG.parent
#: the core, bottom first: a core module imports only core modules of a lower rank
CORE_RANK = {
    "exceptions": 0, "limits": 0, "_version": 0, "_lazy": 0, "config": 0,
    "_validation": 1,                                              # the parameter checks and messages
    "sensitivity": 2, "composition": 2, "audit": 2, "attacks": 2, "budget": 2,
    "mechanisms": 3, "svt_audit": 3,                               # mechanisms spend through budget
    "accuracy": 4, "svt": 4, "domain": 4,                          # the schema checks lattices
    "histogram": 5, "datasets": 5,                                 # grids over the schema
    "counts": 6,
    "encode": 7, "sources": 7,                                     # count tables, from data or engines
    "inputs": 8,                                                   # fit/predict inputs, records or sources
}
CORE = set(CORE_RANK)
#: teaching modules that hold algorithms which are NOT private: only the labs and explorers use them
TEACHING_ONLY = {"dpexplore.svt_audit"}
RANK = {"core": 0, "select": 1, "models": 2, "publish": 3, "registry": 4, "conformance": 4, "evaluate": 5,
        "tables": 6, "plots": 7, "widgets": 8, "lab": 9, "apps": 9, "app_server": 9,
        "__init__": 10}


class Edge(NamedTuple):
    source: str     # importing module, e.g. "dpexplore.models.histogram"
    target: str     # imported module
    name: str       # the imported name ("" for ``import x``)
    where: str      # "dpexplore/models/histogram.py:202"


def _module(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def _layer(module: str) -> str:
    parts = module.split(".")
    if len(parts) == 1:
        return "__init__"
    return "core" if parts[1] in CORE else parts[1]


def _edges() -> list[Edge]:
    modules = {_module(p) for p in PKG.rglob("*.py")}
    out = []
    for path in sorted(PKG.rglob("*.py")):
        mod, is_pkg = _module(path), path.name == "__init__.py"
        rel = path.relative_to(ROOT).as_posix()
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.ImportFrom):
                if node.level:
                    base = mod.split(".") if is_pkg else mod.split(".")[:-1]
                    base = base[: len(base) - node.level + 1]
                    target = ".".join(base + ([node.module] if node.module else []))
                else:
                    target = node.module or ""
                if target.split(".")[0] != "dpexplore":
                    continue
                for alias in node.names:
                    sub = f"{target}.{alias.name}"
                    out.append(Edge(mod, sub if sub in modules else target, alias.name, f"{rel}:{node.lineno}"))
            elif isinstance(node, ast.Import):
                out += [Edge(mod, a.name, "", f"{rel}:{node.lineno}") for a in node.names
                        if a.name.split(".")[0] == "dpexplore"]
    return out


EDGES = _edges()


def _describe(e: Edge) -> str:
    what = f"{e.target}.{e.name}" if e.name and not e.target.endswith("." + e.name) else e.target
    return f"{e.where}: {e.source} → {what}"


def test_every_module_has_a_layer():
    unknown = sorted({m for e in EDGES for m in (e.source, e.target) if _layer(m) not in RANK})
    assert not unknown, "modules outside the module map (add them to CORE or RANK): " + ", ".join(unknown)


def test_imports_point_down():
    bad = [_describe(e) for e in EDGES
           if e.source != e.target
           and RANK.get(_layer(e.target), 99) > RANK.get(_layer(e.source), 99)]
    assert not bad, f"{len(bad)} import(s) point up the module map:\n" + "\n".join(bad)


def test_flawed_algorithms_stay_out_of_the_release_paths():
    bad = [_describe(e) for e in EDGES if e.target in TEACHING_ONLY and e.source != e.target
           and _layer(e.source) not in ("widgets", "lab", "apps")]
    assert not bad, "only lab/, widgets/ and apps import the NOT-private teaching modules:\n" + "\n".join(bad)


def test_the_core_imports_point_down_its_order():
    bad = [_describe(e) for e in EDGES if _layer(e.source) == _layer(e.target) == "core"
           and e.source.split(".")[1] != e.target.split(".")[1]
           and CORE_RANK[e.target.split(".")[1]] >= CORE_RANK[e.source.split(".")[1]]]
    assert not bad, f"{len(bad)} core import(s) do not point down CORE_RANK:\n" + "\n".join(bad)


def test_plots_import_the_core_only():
    bad = [_describe(e) for e in EDGES if _layer(e.source) == "plots" and _layer(e.target) not in ("core", "plots")]
    assert not bad, "plots/ draws what it is given and imports the core only:\n" + "\n".join(bad)


def test_select_does_not_import_models():
    bad = [_describe(e) for e in EDGES if _layer(e.source) == "select" and _layer(e.target) == "models"]
    assert not bad, "select sits below models:\n" + "\n".join(bad)


def test_no_import_cycle():
    graph: dict[str, set[str]] = {}
    where: dict[tuple[str, str], str] = {}
    for e in EDGES:
        # a package importing its own submodule is not a cycle
        if e.source != e.target and not e.target.startswith(e.source + "."):
            graph.setdefault(e.source, set()).add(e.target)
            where.setdefault((e.source, e.target), e.where)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    cycles: list[list[str]] = []

    def visit(v: str) -> None:   # Tarjan's strongly connected components
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                cycles.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    lines = []
    for comp in cycles:
        lines.append("cycle between " + ", ".join(comp) + ":")
        lines += [f"  {where[(s, d)]}: {s} → {d}" for s in comp for d in sorted(graph.get(s, ())) if d in comp]
    assert not cycles, "\n".join(lines)


def test_private_names_stay_in_their_module():
    bad = []
    for e in EDGES:
        if not e.name.startswith("_") or e.name.startswith("__") or e.source == e.target:
            continue
        if e.target.endswith("." + e.name):   # a private module (``from . import _lazy``), not a name
            continue
        same_package = e.source.split(".")[:2] == e.target.split(".")[:2]
        private_home = e.target.rsplit(".", 1)[-1].startswith("_")
        if not (same_package and private_home):
            bad.append(_describe(e))
    assert not bad, (f"{len(bad)} private name(s) imported from another module (give each a public name "
                     "in its home):\n" + "\n".join(bad))


CITATION = re.compile(r"\bspec\b[^\n]{0,40}§|§[\d.]+ of the spec|\bspec \"|\bspecs?/[\w-]+\.md|\b[Dd]igest\b"
                      r"|DESIGN\.md|/work/shared|\btraps? \d|\bissue \d|\bitems? [1-9]")


def test_comments_cite_papers_not_digests_or_issues():
    bad = []
    for path in sorted(PKG.rglob("*.py")):
        for tok in tokenize.generate_tokens(io.StringIO(path.read_text()).readline):
            if tok.type in (tokenize.COMMENT, tokenize.STRING) and CITATION.search(tok.string):
                bad.append(f"{path.relative_to(ROOT).as_posix()}:{tok.start[0]}: "
                           f"{CITATION.search(tok.string).group(0)}")
    assert not bad, ("cite the paper (section, equation, algorithm line) or the project's docs:\n"
                     + "\n".join(bad))
