"""Build hook: copy the shipped data files of ``datasets/`` into the wheel as ``dpexplore/_datasets``.

Everything else about the package is declared in ``pyproject.toml``. The data live once, in the
repository's top-level ``datasets/``; an editable install or a checkout reads them there (see
``dpexplore.datasets.data_path``), and a built wheel (``pip install .``, as Binder does) carries a
copy, so the loaders work from an installed package too.
"""
from __future__ import annotations

import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

DATA_SUFFIXES = (".gz", ".json", ".md")
DATA_FILES = ("LICENSE",)


class build_py_with_datasets(build_py):
    def run(self) -> None:
        super().run()
        source = Path(__file__).resolve().parent / "datasets"
        target = Path(self.build_lib) / "dpexplore" / "_datasets"
        target.mkdir(parents=True, exist_ok=True)
        for path in sorted(source.iterdir()):
            if path.is_file() and (path.suffix in DATA_SUFFIXES or path.name in DATA_FILES):
                shutil.copy2(path, target / path.name)


setup(cmdclass={"build_py": build_py_with_datasets})
