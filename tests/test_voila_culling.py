"""Idle kernels are culled, open pages' kernels are not (``voila.json`` + ``dpexplore.apps``).

A Voilà server with the repository's settings but a short cull timeout (4 s, checked every
second), on a tiny page with one pre-heated kernel:

* a pool kernel that waited in the pool longer than the timeout is handed to a visitor: it is not
  culled before the visitor's page connects (the hand-over counts as activity);
* while the page is connected, its kernel stays, idle or not (``cull_connected`` is false);
* once the page is closed without saying so (a laptop lid shut, a crashed browser: no
  ``beforeunload`` shutdown), its kernel goes away after the timeout;
* the pool's own kernels are never culled.
"""
from __future__ import annotations

import http.cookiejar
import re
import time
import urllib.parse
import urllib.request

import pytest

from _voila_classroom import VoilaServer, tiny_notebook, wait_until

TIMEOUT = 4


@pytest.fixture(scope="module")
def culling_server(tmp_path_factory):
    root = tmp_path_factory.mktemp("cull_root")
    tiny_notebook(root / "07_showdown.ipynb", ["x = 1 + 1\nprint(x)"])
    server = VoilaServer(root, tmp_path_factory.mktemp("cull_server"),
                         [f"--MappingKernelManager.cull_idle_timeout={TIMEOUT}", "--MappingKernelManager.cull_interval=1"])
    yield server
    server.stop()


def test_closed_page_kernel_is_culled_open_page_and_pool_kernels_stay(culling_server):
    culling_server.wait_log(r"Kernel pool of 07_showdown\.ipynb is filled with 1 kernel", timeout=120)
    time.sleep(TIMEOUT + 2)                     # the pool kernel is now idle for longer than the timeout
    assert len(culling_server.kernel_processes()) == 1, "a pool kernel was culled"

    html, kernel_id = culling_server.page("07_showdown.ipynb")
    assert f"Using pre-heated kernel: {kernel_id}" in culling_server.log_text()
    time.sleep(2)                               # more than one cull interval before the page connects
    assert culling_server.kernel_exists(kernel_id), "the visitor's kernel was culled as it was handed over"

    ws = culling_server.connect(kernel_id)
    try:
        time.sleep(TIMEOUT + 3)                 # connected and idle for longer than the timeout
        assert culling_server.kernel_exists(kernel_id), "an open page's kernel was culled"
    finally:
        ws.close()                              # the page goes away without a shutdown request

    assert wait_until(lambda: not culling_server.kernel_exists(kernel_id), TIMEOUT + 15), \
        "the closed page's kernel was not culled"
    assert "Culling 'idle' kernel" in culling_server.log_text()
    culling_server.wait_log(r"(?s)Using pre-heated kernel.*is filled with 1 kernel", timeout=60)
    assert len(culling_server.kernel_processes()) == 1, "the refilled pool kernel is there, and only it"


def test_a_closed_page_shuts_its_kernel_down(culling_server):
    """What the page's widget manager does when it is closed (a beacon posting the ``_xsrf``
    cookie's value): the launcher makes the page set that cookie, so the request is accepted."""
    jar = http.cookiejar.CookieJar()
    opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(jar))
    with opener.open(f"{culling_server.url}/voila/render/07_showdown.ipynb", timeout=120) as response:
        html = response.read().decode()
    kernel_id = re.search(r'"kernelId": "([0-9a-f-]+)"', html).group(1)
    xsrf = {c.name: c.value for c in jar}.get("_xsrf")
    assert xsrf, "the page did not set the _xsrf cookie its shutdown request needs"
    request = urllib.request.Request(f"{culling_server.url}/voila/api/shutdown/{kernel_id}", method="POST",
                                     data=urllib.parse.urlencode({"_xsrf": xsrf}).encode())
    with opener.open(request, timeout=30) as response:
        assert response.status == 204
    assert wait_until(lambda: not culling_server.kernel_exists(kernel_id), 15)
