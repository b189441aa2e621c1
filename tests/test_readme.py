"""The README's promises stay true: its example runs and CI runs its test command."""
import re
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text()


def test_readme_example_runs_and_spends_what_it_says():
    block = re.search(r"## A first private release\s+```python\n(.*?)```", README, re.S).group(1)
    namespace: dict = {}
    exec(compile(block, "README.md", "exec"), namespace)
    acc, noisy, counts = namespace["acc"], namespace["noisy"], namespace["counts"]
    assert acc.spent == 1.0 and list(acc.ledger["label"]) == ["histogram"]
    assert noisy.shape == counts.shape and counts.sum() == 45_222
    assert not np.array_equal(noisy, counts)


def test_ci_runs_the_readme_test_command():
    ci = (ROOT / ".ci" / "run").read_text()
    assert "test-command" in ci  # .ci/run extracts the block marked in the README
    block = README.split("<!-- test-command -->", 1)[1]
    command = re.search(r"```bash\n(.*?)\n```", block, re.S).group(1)
    assert "pytest" in command and "--nbval-lax" in command and "notebooks" in command
    assert command.count("\n") == 0  # one command


def test_readme_estimator_example_runs_and_ledger_sums_to_epsilon():
    block = re.search(r"same contract.*?```python\n(.*?)```", README, re.S).group(1)
    namespace: dict = {}
    exec(compile(block, "README.md", "exec"), namespace)
    model, schema = namespace["model"], namespace["schema"]
    assert abs(model.ledger_["charged"].sum() - 1.0) < 1e-12
    assert list(model.ledger_["label"]) == ["record count", "grid selection", "histogram counts"]
    assert set(model.grid_) == set(schema.predictors)
    # better than the majority class (75.2%) on the held-out fifth
    assert model.score(namespace["X_test"], namespace["y_test"]) > 0.78


def test_readme_sources_example_runs_and_engines_agree(tmp_path, monkeypatch):
    block = re.search(r"### Tables past memory.*?```python\n(.*?)```", README, re.S).group(1)
    monkeypatch.chdir(tmp_path)                      # the example writes adult.parquet here
    namespace: dict = {}
    exec(compile(block, "README.md", "exec"), namespace)
    model, same = namespace["model"], namespace["same"]
    assert model.grid_ == same.grid_
    np.testing.assert_array_equal(model.counts_, same.counts_)
    assert abs(model.epsilon_spent_ - 1.0) < 1e-12


def test_readme_tables_example_runs_declares_everything_and_exports(tmp_path, monkeypatch):
    block = re.search(r"### Your own table, scripted.*?```python\n(.*?)```", README, re.S).group(1)
    monkeypatch.chdir(tmp_path)
    namespace: dict = {}
    exec(compile(block, "README.md", "exec"), namespace)
    result = namespace["result"]
    assert result.ledger["charged"].sum() <= 1.0 + 1e-9          # never more than the ε asked for
    assert list(result.synthetic.columns) == ["n_visits", "n_meds", "admission_type", "gender", "readmitted"]
    assert set(result.synthetic["readmitted"].unique()) <= {0, 1}  # the target comes back as integers
    assert {p.name for p in (tmp_path / "dp_release").iterdir()} >= {
        "privpfc_eps_1_synthetic.csv", "privpfc_eps_1_ledger.csv", "privpfc_eps_1_schema.json"}


def test_readme_methods_table_is_the_registrys():
    from dpexplore.registry import markdown_table

    found = re.search(r"<!-- methods-table -->\n(.*?)<!-- /methods-table -->", README, re.S)
    assert found, "README.md lacks the <!-- methods-table --> block"
    assert found.group(1) == markdown_table(), "README.md's methods table is out of date: run " \
        "`python -m dpexplore.registry --write`"
