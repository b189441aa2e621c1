"""What a stand-in publisher needs to be used as a method of your own in ``tables.release``."""
from __future__ import annotations


class SchemaParameter:
    """The public schema as a parameter, as a registered publisher takes it: ``tables.release``
    sets it (``set_params(schema=...)``) when ``get_params()["schema"]`` is ``None``."""

    schema = None

    def get_params(self, deep: bool = True) -> dict:
        return {"schema": self.schema}

    def set_params(self, **params) -> "SchemaParameter":
        vars(self).update(params)
        return self
