"""The Voilà launcher's classroom settings (``dpexplore.apps``): ``--pool N``, the pre-render gate
(pool kernels run their notebook one at a time), one BLAS thread per kernel, and ``voila.json``.

One real server on a tiny page named like an app; no timing is asserted.
"""
from __future__ import annotations

import json
import os
from pathlib import Path
from types import SimpleNamespace

import pytest
from traitlets.config import Config

from _voila_classroom import ROOT, VoilaServer, tiny_notebook
from dpexplore.apps import APPS, _pop_pool, main, size_pools


def _app(root: Path, notebook: str | None = None) -> SimpleNamespace:
    """What size_pools reads of an initialised ``voila.app.Voila``: root, notebook, config."""
    config = Config(json.loads((ROOT / "voila.json").read_text()))
    return SimpleNamespace(root_dir=str(root), notebook_path=notebook, config=config)


def test_pop_pool_takes_its_option_and_leaves_voilas():
    assert _pop_pool(["nb.ipynb", "--pool", "30", "--port=1"]) == (30, ["nb.ipynb", "--port=1"])
    assert _pop_pool(["--pool=12", "nb.ipynb"]) == (12, ["nb.ipynb"])
    assert _pop_pool(["nb.ipynb", "--pool_size=3"]) == (None, ["nb.ipynb", "--pool_size=3"])   # Voilà's own
    with pytest.raises(SystemExit, match="--pool needs a whole number"):
        _pop_pool(["--pool", "many"])
    assert _pop_pool(["--pool-max=60", "nb.ipynb"]) == (None, ["--pool-max=60", "nb.ipynb"])   # not --pool
    assert _pop_pool(["--pool", "30", "--pool-max", "60"], "--pool-max") == (60, ["--pool", "30"])


def test_a_pool_max_below_the_pool_is_refused_before_the_server_starts():
    with pytest.raises(SystemExit, match=r"--pool-max must be at least --pool \(30\), got 20"):
        main(["nb.ipynb", "--pool", "30", "--pool-max", "20"])


def test_size_pools_one_served_notebook(tmp_path):
    (tmp_path / "notebooks").mkdir()
    app = _app(tmp_path, str(tmp_path / "notebooks" / "07_showdown.ipynb"))
    pools = size_pools(app, 30)
    assert pools["notebooks/07_showdown.ipynb"]["pool_size"] == 30
    assert pools["default"]["pool_size"] == 0                         # nothing else pre-heats
    assert pools["notebooks/01_mechanisms.ipynb"]["pool_size"] == 1   # voila.json's, unchanged
    assert app.config.VoilaKernelManager.kernel_pools_config == pools


def test_size_pools_a_folder_sizes_only_the_apps(tmp_path):
    for name in (*APPS, "02_privpfc.ipynb"):
        (tmp_path / name).write_text("{}")
    pools = size_pools(_app(tmp_path), 8)
    assert {k: v["pool_size"] for k, v in pools.items() if not k.startswith("notebooks/")} == {
        "default": 0, "01_mechanisms.ipynb": 8, "07_showdown.ipynb": 8}
    with pytest.raises(ValueError, match="--pool must be a whole number"):
        size_pools(_app(tmp_path), -1)


def test_voila_json_declares_template_pools_and_culling():
    config = json.loads((ROOT / "voila.json").read_text())
    assert config["VoilaConfiguration"] == {"template": "dpexplore", "preheat_kernel": True}
    pools = config["VoilaKernelManager"]["kernel_pools_config"]
    assert pools["default"]["pool_size"] == 0
    assert all(pools[name]["pool_size"] >= 1 for name in APPS)
    cull = config["MappingKernelManager"]
    assert cull["cull_idle_timeout"] > 0 and cull["cull_interval"] > 0
    assert cull["cull_connected"] is False     # an open page keeps its kernel, however idle


STAMP = """import os, time
from pathlib import Path
log = Path(os.environ["DPEXPLORE_TEST_LOG"])
with log.open("a") as f:
    f.write(f"start {time.time()} {os.getpid()} {os.environ.get('OMP_NUM_THREADS')}\\n")
time.sleep(0.6)
with log.open("a") as f:
    f.write(f"end {time.time()} {os.getpid()}\\n")
"""


@pytest.fixture(scope="module")
def pooled_server(tmp_path_factory):
    root = tmp_path_factory.mktemp("pool_root")
    tiny_notebook(root / "07_showdown.ipynb", [STAMP, "print('done')"])    # named like an app
    tmp = tmp_path_factory.mktemp("pool_server")
    log = tmp / "executions.log"
    os.environ["DPEXPLORE_TEST_LOG"] = str(log)      # inherited by the server and its kernels
    try:
        server = VoilaServer(root, tmp, ["--pool", "3", "--ClassroomKernelManager.prerender_concurrency=1"])
    finally:
        del os.environ["DPEXPLORE_TEST_LOG"]
    server.executions = log
    yield server
    server.stop()


def _intervals(log: Path) -> list[tuple[float, float]]:
    starts, ends = {}, {}
    for line in log.read_text().splitlines():
        kind, t, pid, *_ = line.split()
        (starts if kind == "start" else ends)[pid] = float(t)
    return sorted((starts[p], ends[p]) for p in starts if p in ends)


def test_pool_of_three_prerenders_one_at_a_time(pooled_server):
    pooled_server.wait_log(r"Kernel pool of 07_showdown\.ipynb is filled with 3 kernel", timeout=180)
    assert len(pooled_server.kernel_processes()) == 3
    runs = _intervals(pooled_server.executions)
    assert len(runs) == 3, pooled_server.executions.read_text()
    for (_, end), (next_start, _) in zip(runs, runs[1:]):
        assert next_start >= end, f"two pool kernels ran their notebook at the same time: {runs}"
    threads = {line.split()[3] for line in pooled_server.executions.read_text().splitlines() if line.startswith("start")}
    assert threads == {"1"}, "the launcher gives every kernel one OpenMP thread"


def test_visitor_gets_a_prerendered_page_and_the_pool_refills(pooled_server):
    pooled_server.wait_log(r"is filled with 3 kernel", timeout=180)
    before = {p.pid for p in pooled_server.kernel_processes()}
    html, kernel_id = pooled_server.page("07_showdown.ipynb")
    assert "done" in html and "window.voila_finish()" in html
    assert f"Using pre-heated kernel: {kernel_id}" in pooled_server.log_text()
    assert "dpexplore-kernel-lost" in html            # the template's lost-kernel notice is on the page
    pooled_server.wait_log(r"(?s)Using pre-heated kernel.*is filled with 3 kernel", timeout=120)
    assert len(pooled_server.kernel_processes()) == 4   # the visitor's kernel + a full pool
    assert before < {p.pid for p in pooled_server.kernel_processes()}
