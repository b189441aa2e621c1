"""The shared input checks and the environment switch."""
import numpy as np
import pandas as pd
import pytest

from dpexplore import _config
from dpexplore._validation import check_frame, check_random_state, check_target


def test_random_state_forms():
    g = np.random.default_rng(0)
    assert check_random_state(g) is g
    assert check_random_state(5).random() == np.random.default_rng(5).random()
    with pytest.raises(TypeError):
        check_random_state(1.5)


def test_frame_and_target_checks():
    with pytest.raises(TypeError, match="DataFrame"):
        check_frame([[1]])
    with pytest.raises(ValueError, match=r"\['b'\]"):
        check_frame(pd.DataFrame({"a": [1, 2], "b": [1, None]}))
    with pytest.raises(ValueError, match="1 class"):
        check_target(["x", "x"])
    with pytest.raises(ValueError, match="missing"):
        check_target(pd.Series(["x", None]))


def test_quick_switch(monkeypatch):
    monkeypatch.setenv("DPEXPLORE_QUICK", "1")
    assert _config.quick() and _config.repetitions(10) == 2
    monkeypatch.setenv("DPEXPLORE_QUICK", "0")
    assert not _config.quick() and _config.repetitions(10) == 10
