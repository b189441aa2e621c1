"""The check that an argument is a declared :class:`~dpexplore.domain.Schema` (one wording)."""
from __future__ import annotations

from typing import Any

from ..domain import Schema

__all__ = ["check_schema"]


def check_schema(schema: Any, *, taxonomies: bool = True, name: str = "schema") -> Schema:
    """Return ``schema`` after checking that it is a dpexplore :class:`~dpexplore.domain.Schema`
    and, with ``taxonomies=True``, that every attribute declares a taxonomy (the methods that
    count on a grid generalise each attribute through its taxonomy)."""
    if not isinstance(schema, Schema):
        raise TypeError(f"{name} must be a dpexplore Schema, got {type(schema).__name__}")
    if taxonomies:
        for attribute in schema.attributes:
            schema.taxonomy_of(attribute)
    return schema
