"""Grading a student's mechanism with the package's privacy audit (:mod:`dpexplore.audit`).

An "implement" exercise passes when the student's release stays within its claimed ε on every
neighbouring pair (the audit's lower confidence bound is at or below ε: evidence, not a proof) and
the same audit, on the same pairs, flags a planted leak (so that passing means something). Both
audits are seeded: the same answer always gets the same verdict.
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from ..audit import privacy_loss

__all__ = ["event", "within_claim", "flags_leak"]


def event(mask: Any) -> str:
    """A selected-or-kept mask as one hashable audit event, e.g. ``"10"`` (first kept, second not)."""
    flags = np.asarray(mask)
    if flags.ndim != 1 or flags.size == 0:
        raise ValueError("the release must be a 1-D array with one entry per feature or cell")
    return "".join("1" if bool(f) else "0" for f in flags)


def within_claim(release: Callable[[Any, np.random.Generator], str], data: Any,
                 neighbours: Sequence[Any], epsilon: float, *, n_samples: int, seed: int) -> bool:
    """True when the audit's lower bound stays at or below ``epsilon`` between ``data`` and every
    one of ``neighbours``."""
    return all(privacy_loss(release, data, other, n_samples=n_samples,
                            random_state=seed + i).epsilon_lower <= epsilon
               for i, other in enumerate(neighbours))


def flags_leak(release: Callable[[Any, np.random.Generator], str], data: Any,
               neighbours: Sequence[Any], epsilon: float, *, n_samples: int, seed: int) -> bool:
    """True when the audit refutes ``epsilon`` for ``release`` on at least one of the pairs."""
    return any(privacy_loss(release, data, other, n_samples=n_samples,
                            random_state=seed + i).violates(epsilon)
               for i, other in enumerate(neighbours))
