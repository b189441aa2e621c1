"""Shared harness for the end-to-end privacy audits (tests/test_audit_*.py).

Each release path is audited the same way: a mechanism ``run(data, rng) -> hashable output`` that
goes through the package's *public* API, two neighbouring inputs (add/remove one record), many
seeded runs, and :func:`dpexplore.audit.privacy_loss` (Clopper–Pearson bounds, events chosen on a
separate pilot sample). The lower bound must stay at or below the claimed ε; the same audit run
on a deliberately broken variant must exceed it (proof that the audit has power).

``weakened_noise(factor)`` is the generic broken variant: every noise sampler and exponential
mechanism of :mod:`dpexplore.mechanisms` is replaced, wherever the package imported it, by one
that uses ``factor``·ε (noise scale divided by ``factor``) while the accountant still records ε.
``replaced(module, {name: function})`` makes other broken variants the same way.

Long audits (more samples, tighter bounds) carry ``@pytest.mark.audit_long`` and run only with
``DPEXPLORE_LONG_AUDITS=1``; a short version of every audit always runs.
"""
from __future__ import annotations

import functools
import os
import sys
from contextlib import contextmanager
from typing import Any, Callable, Iterator

import pytest

from dpexplore import mechanisms
from dpexplore.audit import AuditResult, privacy_loss

LONG = os.environ.get("DPEXPLORE_LONG_AUDITS") == "1"
long_audit = pytest.mark.skipif(not LONG, reason="long audit: set DPEXPLORE_LONG_AUDITS=1")

# every sampler that takes epsilon= and draws noise or a choice
SAMPLERS = ("laplace", "geometric", "exponential", "permute_and_flip", "exponential_interval",
            "exponential_subset", "gaussian", "randomized_response")


@contextmanager
def replaced(source: Any, replacements: dict[str, Callable]) -> Iterator[None]:
    """Within the block, each function ``source.<name>`` of ``replacements`` is the replacement
    wherever the package bound it (``source`` itself and every module that imported the name)."""
    originals = {name: getattr(source, name) for name in replacements}
    patched: list[tuple[Any, str, Any]] = []
    for mod_name, module in list(sys.modules.items()):
        if not (mod_name == "dpexplore" or mod_name.startswith("dpexplore.")) or module is None:
            continue
        for name, fn in originals.items():
            if getattr(module, name, None) is fn:
                patched.append((module, name, fn))
                setattr(module, name, replacements[name])
    try:
        yield
    finally:
        for module, name, fn in patched:
            setattr(module, name, fn)


@contextmanager
def weakened_noise(factor: float = 3.0) -> Iterator[None]:
    """Within the block every DP sampler of the package uses ``factor``·ε: a broken release
    that still reports ε (its true loss is ``factor`` times the claim)."""
    broken = {}
    for name in SAMPLERS:
        @functools.wraps(getattr(mechanisms, name))
        def weak(*args, __fn=getattr(mechanisms, name), **kwargs):
            kwargs["epsilon"] = kwargs["epsilon"] * factor
            return __fn(*args, **kwargs)
        broken[name] = weak
    with replaced(mechanisms, broken):
        yield


def audit(run: Callable, data: Any, neighbour: Any, *, n_samples: int, seed: int = 0,
          bins: Any = None, batched: bool = False) -> AuditResult:
    """Audit ``run`` between the neighbours (both directions of the ratio are bounded per event)."""
    return privacy_loss(run, data, neighbour, n_samples=n_samples, bins=bins, batched=batched,
                        random_state=seed)


def assert_private(run: Callable, data: Any, neighbour: Any, epsilon: float, *, n_samples: int,
                   seed: int = 0, bins: Any = None, batched: bool = False) -> AuditResult:
    """The empirical lower bound on ε between the neighbours is at or below the claim."""
    res = audit(run, data, neighbour, n_samples=n_samples, seed=seed, bins=bins, batched=batched)
    assert res.epsilon_lower <= epsilon, (
        f"audit shows a privacy loss ≥ {res.epsilon_lower:.3f} at a claimed ε = {epsilon}\n"
        f"{res.table.sort_values('lower_bound', ascending=False).head(5)}")
    return res


def assert_flagged(run: Callable, data: Any, neighbour: Any, epsilon: float, *, n_samples: int,
                   seed: int = 1, bins: Any = None, batched: bool = False) -> AuditResult:
    """The audit has power: on a broken variant its lower bound exceeds the claimed ε."""
    res = audit(run, data, neighbour, n_samples=n_samples, seed=seed, bins=bins, batched=batched)
    assert res.epsilon_lower > epsilon, (
        f"the audit did not flag the broken variant: lower bound {res.epsilon_lower:.3f} ≤ ε = {epsilon} "
        f"(point estimate {res.epsilon_hat:.3f})")
    return res
