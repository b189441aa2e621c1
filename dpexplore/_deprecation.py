"""Old spellings that keep working for one release, each with a
:class:`~dpexplore.exceptions.DpexploreDeprecationWarning` that names the new spelling.

* :class:`RenamedParams` — an estimator's constructor parameter renamed (``split`` → ``shares``):
  the old name works in ``__init__``, ``set_params`` (so old ``GridSearchCV`` grids run),
  attribute reads and old pickles.
* :func:`renamed_keyword` — a function's (or a method's) keyword argument renamed.
* :func:`moved` — a module ``__getattr__`` that forwards names that moved to another module.

scikit-learn deprecates a parameter by keeping both names in the signature (a ``"deprecated"``
default); that shows both in ``get_params`` and in every grid search. Here the signature
holds only the new name: ``functools.wraps`` keeps it readable through ``__wrapped__``, which is
what ``inspect.signature`` and scikit-learn's ``get_params`` read.
"""
from __future__ import annotations

import functools
import importlib
import inspect
import warnings
from typing import Any, Callable, ClassVar, Mapping

from .exceptions import DpexploreDeprecationWarning

__all__ = ["REMOVED_IN", "RenamedParams", "renamed_keyword", "moved", "warn_deprecated"]

#: the release in which the old spellings stop working
REMOVED_IN = "0.4"


def warn_deprecated(message: str, *, stacklevel: int = 2) -> None:
    """Warn ``message`` + "; the old … stops working in dpexplore 0.4" as a
    DpexploreDeprecationWarning; ``stacklevel`` counts from the caller of this function."""
    warnings.warn(f"{message}; it stops working in dpexplore {REMOVED_IN}", DpexploreDeprecationWarning,
                  stacklevel=stacklevel + 1)


def _warn_renamed(owner: str, old: str, new: str, stacklevel: int) -> None:
    warnings.warn(f"{owner}: {old!r} was renamed {new!r}; the old name stops working in dpexplore {REMOVED_IN}",
                  DpexploreDeprecationWarning, stacklevel=stacklevel + 1)


def _map_renamed(owner: str, renamed: Mapping[str, str], kwargs: dict[str, Any], stacklevel: int) -> dict[str, Any]:
    """``kwargs`` with every old name replaced by its new one (a new dict; one warning per old
    name). Giving both names with different values is a TypeError."""
    if not renamed or not any(old in kwargs for old in renamed):
        return kwargs
    out = dict(kwargs)
    for old, new in renamed.items():
        if old in out:
            _warn_renamed(owner, old, new, stacklevel + 1)
            value = out.pop(old)
            if new in out and out[new] is not value:
                raise TypeError(f"{owner}: give {new}= only ({old}= is its old name), not both")
            out[new] = value
    return out


def renamed_keyword(**renamed: str) -> Callable[[Callable], Callable]:
    """Decorator: accept each keyword ``old=`` of ``renamed`` (``{"old": "new"}``) as ``new=``,
    with a DpexploreDeprecationWarning. The wrapped function keeps its signature (only the new
    names); on ``__init__`` the warning names the class, so scikit-learn's estimator checks pass.
    """
    if not renamed or not all(isinstance(k, str) and isinstance(v, str) for k, v in renamed.items()):
        raise TypeError("renamed_keyword takes old='new' pairs of names")

    def decorate(func: Callable) -> Callable:
        names = inspect.signature(func).parameters
        for old, new in renamed.items():
            if new not in names or old in names:
                raise TypeError(f"{func.__qualname__}: {new!r} must be a parameter and {old!r} must not be")

        @functools.wraps(func)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            if func.__name__ == "__init__" and args:
                owner = type(args[0]).__name__
            else:
                owner = func.__qualname__
            return func(*args, **_map_renamed(owner, renamed, kwargs, stacklevel=2))
        return wrapper
    return decorate


class RenamedParams:
    """Mixin for estimators whose constructor parameters were renamed.

    A subclass declares ``_renamed_params = {"old": "new"}`` (merged with its bases'). The old
    name then works, with a DpexploreDeprecationWarning, in ``__init__`` (wrapped in place,
    keeping the signature), ``set_params`` (old ``GridSearchCV`` grids), attribute reads
    (``est.old``) and old pickles, whose state is renamed and completed with the signature
    defaults of parameters they predate. Put it first among the bases.
    """

    _renamed_params: ClassVar[dict[str, str]] = {}

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        merged: dict[str, str] = {}
        for base in reversed(cls.__mro__[1:]):
            merged.update(base.__dict__.get("_renamed_params", {}))
        merged.update(cls.__dict__.get("_renamed_params", {}))
        cls._renamed_params = merged
        init = cls.__dict__.get("__init__")
        if init is None or not merged or getattr(init, "_maps_renamed_params", False):
            return
        names = inspect.signature(init).parameters
        for old, new in merged.items():
            if new not in names or old in names:
                raise TypeError(f"{cls.__name__}._renamed_params: {new!r} must be an __init__ parameter "
                                f"and {old!r} must not be")

        @functools.wraps(init)
        def __init__(self: Any, *args: Any, **kw: Any) -> None:
            init(self, *args, **_map_renamed(type(self).__name__, type(self)._renamed_params, kw, stacklevel=2))
        __init__._maps_renamed_params = True  # type: ignore[attr-defined]
        cls.__init__ = __init__  # type: ignore[method-assign]

    def set_params(self, **params: Any) -> Any:
        """scikit-learn's ``set_params``, also under the old names (with a warning)."""
        return super().set_params(**_map_renamed(type(self).__name__, type(self)._renamed_params, params,  # type: ignore[misc]
                                                 stacklevel=2))

    def __getattr__(self, name: str) -> Any:
        # called only when normal lookup fails: an old name reads the new attribute
        new = type(self)._renamed_params.get(name)
        if new is None:
            parent = getattr(super(), "__getattr__", None)
            if parent is not None:
                return parent(name)
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")
        _warn_renamed(type(self).__name__, name, new, stacklevel=2)
        return getattr(self, new)

    def __setstate__(self, state: dict[str, Any]) -> None:
        state = dict(state)
        renamed = type(self)._renamed_params
        for old, new in renamed.items():
            if old in state:
                value = state.pop(old)
                if new not in state:
                    _warn_renamed(type(self).__name__, old, new, stacklevel=2)
                    state[new] = value
        for name, param in inspect.signature(type(self).__init__).parameters.items():
            if (name != "self" and name not in state and param.default is not inspect.Parameter.empty
                    and param.kind not in (param.VAR_POSITIONAL, param.VAR_KEYWORD)):
                state[name] = param.default   # a parameter newer than the pickle: its default
        parent = getattr(super(), "__setstate__", None)
        if parent is not None:
            parent(state)
        else:
            self.__dict__.update(state)


def moved(module_name: str, names: Mapping[str, str],
          fallback: Callable[[str], Any] | None = None) -> Callable[[str], Any]:
    """A module ``__getattr__`` for names that moved: ``names`` maps each old name to its new
    home ``"package.module:NewName"`` (``":NewName"`` may be omitted when the name is the same).
    Each access warns with a DpexploreDeprecationWarning and imports the new home on demand;
    other names go to ``fallback`` (e.g. a package's lazy exports) or raise AttributeError.

    Use as ``__getattr__ = moved(__name__, {"GapScorer": "dpexplore.publish.privpfc_scoring"})``.
    """
    table = dict(names)

    def __getattr__(name: str) -> Any:
        target = table.get(name)
        if target is None:
            if fallback is not None:
                return fallback(name)
            raise AttributeError(f"module {module_name!r} has no attribute {name!r}")
        path, _, new_name = target.partition(":")
        new_name = new_name or name
        warnings.warn(f"{module_name}.{name} moved to {path}.{new_name}; the old path stops working in "
                      f"dpexplore {REMOVED_IN}", DpexploreDeprecationWarning, stacklevel=2)
        return getattr(importlib.import_module(path), new_name)

    return __getattr__
