"""Lazy re-exports for the package ``__init__`` modules (as scikit-learn and SciPy do).

A package lists the public names it re-exports and the submodule that defines each; the
submodule is imported on first access of one of its names. So ``import dpexplore`` or
``from dpexplore.evaluate.sweeps import summarise`` loads only what it uses, while
``from dpexplore import Schema`` and ``dpexplore.publish.PrivPfC`` work as before.
"""
from __future__ import annotations

import importlib
from typing import Any, Callable, Mapping


def lazy_exports(package: str, exports: Mapping[str, str], namespace: dict) -> tuple[Callable[[str], Any],
                                                                                    Callable[[], list[str]]]:
    """Module ``__getattr__`` and ``__dir__`` for ``package``.

    ``exports`` maps a public name to the submodule (relative, e.g. ``".budget"``) that defines
    it; a name equal to its submodule (``{"scores": ".scores"}``) is the submodule itself. The
    attribute is cached in the package's ``namespace`` (its ``globals()``) on first access.
    """
    def __getattr__(name: str) -> Any:
        try:
            module_name = exports[name]
        except KeyError:
            raise AttributeError(f"module {package!r} has no attribute {name!r}") from None
        module = importlib.import_module(module_name, package)
        value = module if module_name.lstrip(".") == name else getattr(module, name)
        namespace[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted(set(namespace) | set(exports))

    return __getattr__, __dir__
