"""The class server's rules (``dpexplore.app_server``): only the app pages, no answers in a page,
each kernel for its own visitor, query options that cannot skip the pool, bounded kernels per
client, a page that never connects frees its kernel, and a pool that grows ahead of demand.

Real servers (``python -m dpexplore.apps`` on a folder of tiny notebooks named like the apps, as
the docs' folder mode serves ``notebooks/``), real HTTP and websocket requests; each test is a
request that a plain Voilà server answers (the hole), with the class server's answer asserted.
No timing is asserted: waits are bounded polls.
"""
from __future__ import annotations


import re

import pytest

from _voila_classroom import VoilaServer, tiny_notebook, wait_until
from dpexplore.app_server import PoolSize

ANSWER = "THE-ANSWER-42"
APP = [("import ipywidgets as w\nslider = w.IntSlider(description='ε')\nslider", ()),
       (f"answer = '{ANSWER}'", ("exercise",)),
       ("print('checked:', answer)", ("self-check",)),
       ("print('shown to every visitor')", ())]


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    """notebooks/ as the docs serve it: the apps, another notebook, the instructor versions."""
    root = tmp_path_factory.mktemp("class_root")
    tiny_notebook(root / "07_showdown.ipynb", [c for c in APP])
    tiny_notebook(root / "02_privpfc.ipynb", ["print('not an app')"])
    tiny_notebook(root / "instructor" / "07_showdown.ipynb", ["print('INSTRUCTOR-ONLY')"])
    tiny_notebook(root / "instructor" / "01_mechanisms.ipynb", ["print('INSTRUCTOR-ONLY')"])
    return root


@pytest.fixture(scope="module")
def server(folder, tmp_path_factory):
    server = VoilaServer(folder, tmp_path_factory.mktemp("class_server"),
                         ["--pool", "1", "--ClassroomVoila.max_kernels_per_client=20"])
    server.wait_log(r"Kernel pool of 07_showdown\.ipynb is filled with 1 kernel", timeout=120)
    yield server
    server.stop()


# ----------------------------------------------------------------------------- only the app pages
@pytest.mark.parametrize("path", ["/voila/tree", "/voila/tree/instructor", "/voila/api/contents",
                                  "/voila/api/contents/instructor", "/voila/render/02_privpfc.ipynb",
                                  "/voila/render/instructor/07_showdown.ipynb",
                                  "/voila/render/instructor/01_mechanisms.ipynb", "/voila/files/02_privpfc.ipynb",
                                  "/voila/render/../07_showdown.ipynb", "/voila/query/x"])
def test_a_folder_serves_nothing_but_its_apps(server, path):
    """Voilà lists every notebook (/voila/tree, the contents API) and runs any of them."""
    status, body = server.stranger().get(path)
    assert status == 404, (path, status)
    assert "INSTRUCTOR-ONLY" not in body and "not an app" not in body


def test_the_front_page_lists_the_apps_only(server):
    status, body = server.stranger().get("/")
    assert status == 200
    assert 'href="/voila/render/07_showdown.ipynb"' in body
    assert "02_privpfc" not in body and "instructor" not in body


def test_the_front_page_needs_no_template_of_ours(folder, tmp_path):
    """Served with Voilà's own template (no voila.json selecting ours), ``/`` still lists the apps."""
    plain = VoilaServer(folder, tmp_path / "plain", ["--template=lab"])
    try:
        status, body = plain.stranger().get("/")
        assert status == 200 and 'href="/voila/render/07_showdown.ipynb"' in body
    finally:
        plain.stop()


def test_no_answer_goes_into_a_page(server):
    """The exercises run, but neither they nor their self-checks (which in an instructor version
    say why the answer is right) are in the page's HTML, hidden or not."""
    html, _ = server.stranger().page("07_showdown.ipynb")
    assert "shown to every visitor" in html
    assert ANSWER not in html and "checked:" not in html
    assert "celltag_exercise" not in html and "celltag_self-check" not in html


# ----------------------------------------------------------------------------- a kernel for its visitor
def test_a_kernel_answers_only_its_visitor(server):
    owner, stranger = server.stranger(), server.stranger()
    _, kernel = owner.page("07_showdown.ipynb")
    stranger.page("07_showdown.ipynb")             # the stranger has cookies of its own, _xsrf included
    anonymous = server.stranger()                  # and this one none at all
    for visitor in (anonymous, stranger):
        assert visitor.get(f"/api/kernels/{kernel}")[0] == 404
        with pytest.raises(Exception, match="404"):
            visitor.connect(kernel)                # its widgets, its sliders
        assert visitor.request(f"/api/kernels/{kernel}", "DELETE") in (403, 404)
        assert visitor.request(f"/voila/api/shutdown/{kernel}", "POST", data=b"") in (403, 404)
    assert stranger.request(f"/api/kernels/{kernel}", "DELETE") == 404   # with a valid _xsrf: not its kernel
    assert owner.kernel_exists(kernel), "a stranger's request shut the kernel down"
    ws = owner.connect(kernel)
    ws.close()
    assert owner.request(f"/voila/api/shutdown/{kernel}", "POST", data=b"") == 204
    assert wait_until(lambda: not owner.kernel_exists(kernel), 30)


@pytest.mark.parametrize("query", ["?template=lab", "?template=classic", "?template=reveal", "?theme=dark",
                                   "?template=nonexistent"])
def test_query_options_cannot_skip_the_pool(server, query):
    """Voilà starts a new kernel for a page asked with another template or theme (and hangs with
    an unknown template); the class server ignores them: the page comes from the pool."""
    visitor = server.stranger()
    status, html = visitor.get(f"/voila/render/07_showdown.ipynb{query}", timeout=60)
    assert status == 200 and "window.voila_finish()" in html
    kernel = html.split('"kernelId": "', 1)[1].split('"', 1)[0]
    assert f"Using pre-heated kernel: {kernel}" in server.log_text()
    assert visitor.request(f"/voila/api/shutdown/{kernel}", "POST", data=b"") == 204
    server.wait_log(rf"(?s)Using pre-heated kernel: {kernel}.*is filled with 1 kernel", timeout=60)


@pytest.mark.parametrize("path", ["/voila/templates/x", "/voila/templates/lab/static/",
                                  "/voila/templates/nonexistent/static/a.js", "/voila/templates/dpexplore/x/y",
                                  "/voila/templates/dpexplore/static/../../../page.html"])
def test_templates_outside_their_static_files_are_not_found(server, path):
    assert server.stranger().get(path)[0] == 404     # Voilà: 500


def test_a_template_static_file_is_served(server):
    assert server.stranger().get("/voila/templates/dpexplore/static/voila-style.js")[0] == 200


# ----------------------------------------------------------------------------- bounds
@pytest.fixture(scope="module")
def strict_server(folder, tmp_path_factory):
    server = VoilaServer(folder, tmp_path_factory.mktemp("strict_server"),
                         ["--pool", "2", "--ClassroomVoila.connect_timeout=2",
                          "--ClassroomVoila.max_kernels_per_client=2"])
    server.wait_log(r"Kernel pool of 07_showdown\.ipynb is filled with 2 kernel", timeout=120)
    yield server
    server.stop()


def test_a_page_that_never_connects_frees_its_kernel(strict_server):
    """A plain fetch of the page held a pool kernel until the idle culler (10 minutes)."""
    fetched, opened = strict_server.stranger(), strict_server.stranger()
    _, idle = fetched.page("07_showdown.ipynb")
    _, used = opened.page("07_showdown.ipynb")
    ws = opened.connect(used)
    try:
        assert wait_until(lambda: not fetched.kernel_exists(idle), 30), "the unopened page kept its kernel"
        assert f"shutting down kernel {idle}: its page did not connect within 2 s" in strict_server.log_text()
        assert opened.kernel_exists(used), "the page that connected lost its kernel"
    finally:
        ws.close()
    assert opened.request(f"/voila/api/shutdown/{used}", "POST", data=b"") == 204
    assert wait_until(lambda: not opened.kernel_exists(used), 30)


def test_one_client_holds_a_bounded_number_of_kernels(strict_server):
    visitor = strict_server.stranger()
    held = []
    for _ in range(2):
        _, kernel = visitor.page("07_showdown.ipynb")
        held.append((kernel, visitor.connect(kernel)))
    status, body = visitor.get("/voila/render/07_showdown.ipynb")
    assert status == 429 and "already has 2 app pages open" in body
    assert strict_server.stranger().get("/voila/render/07_showdown.ipynb")[0] == 429   # new cookies, same address
    kernel, ws = held.pop(0)
    ws.close()
    assert visitor.request(f"/voila/api/shutdown/{kernel}", "POST", data=b"") == 204
    assert wait_until(lambda: not visitor.kernel_exists(kernel), 30)
    _, again = visitor.page("07_showdown.ipynb")            # one closed: a page again
    for kernel in (again, held[0][0]):
        visitor.request(f"/voila/api/shutdown/{kernel}", "POST", data=b"")
    held[0][1].close()


# ----------------------------------------------------------------------------- a pool that grows
TAKEN = re.compile(r"a page of 07_showdown\.ipynb taken with (\d+) pre-rendered left: pool size (\d+)")


def test_pool_size_grows_below_its_low_water_mark_up_to_its_maximum_and_shrinks_back():
    pool = PoolSize(base=3, maximum=5, low_water=2)
    assert [pool.taken(ready_left) for ready_left in (2, 2, 1, 1, 0, 0)] == [3, 3, 4, 5, 5, 5]
    assert [pool.free_surplus() for _ in range(3)] == [True, True, False] and pool.target == 3
    assert PoolSize(base=3, maximum=2, low_water=3).taken(0) == 3    # a maximum under the base: no growth
    assert PoolSize(base=3, maximum=9, low_water=0).taken(0) == 3    # low-water mark 0: no growth
    with pytest.raises(ValueError, match="low_water must be a whole number"):
        PoolSize(base=1, maximum=2, low_water=-1)


def test_the_pool_grows_while_visitors_take_pages_up_to_its_maximum(folder, tmp_path):
    """Voilà keeps the pool at --pool: each page taken is replaced by one refill. With --pool-max,
    each page taken while fewer pre-rendered pages than the low-water mark are left adds a page.
    Each visitor comes once the pool is full, so the pages left are known: 1, 2, 3."""
    server = VoilaServer(folder, tmp_path, ["--pool", "2", "--pool-max", "4", "--ClassroomKernelManager.pool_low_water=3",
                                            "--ClassroomVoila.max_kernels_per_client=20"])
    try:
        server.wait_log(r"Kernel pool of 07_showdown\.ipynb is filled with 2 kernel", timeout=120)
        for _ in range(3):
            visitor = server.stranger()
            _, kernel = visitor.page("07_showdown.ipynb")
            assert visitor.request(f"/voila/api/shutdown/{kernel}", "POST", data=b"") == 204
            size = TAKEN.findall(server.log_text())[-1][1]
            server.wait_log(rf"(?s)Using pre-heated kernel: {kernel}.*is filled with {size} kernel", timeout=120)
        assert [(int(left), int(size)) for left, size in TAKEN.findall(server.log_text())] == [(1, 3), (2, 4), (3, 4)]
        assert wait_until(lambda: len(server.kernel_processes()) == 4, 60), "the pool does not hold 4 kernels"
    finally:
        server.stop()


def test_the_culler_shrinks_a_grown_pool_back_to_its_size(folder, tmp_path):
    """Voilà never culls a pool kernel: a grown pool would keep its surplus kernels for ever."""
    server = VoilaServer(folder, tmp_path, ["--pool", "1", "--pool-max", "2", "--MappingKernelManager.cull_idle_timeout=2",
                                            "--MappingKernelManager.cull_interval=1"])
    try:
        server.wait_log(r"Kernel pool of 07_showdown\.ipynb is filled with 1 kernel", timeout=120)
        visitor = server.stranger()
        _, kernel = visitor.page("07_showdown.ipynb")
        assert TAKEN.findall(server.log_text()) == [("0", "2")]
        assert visitor.request(f"/voila/api/shutdown/{kernel}", "POST", data=b"") == 204
        server.wait_log(r"pool kernel \S+ of 07_showdown\.ipynb unused for \d+ s: shut down, pool size 1", timeout=120)
        assert wait_until(lambda: len(server.kernel_processes()) == 1, 60), "the pool did not shrink to 1 kernel"
        assert len(re.findall(r"unused for \d+ s: shut down", server.log_text())) == 1   # never below --pool
    finally:
        server.stop()
