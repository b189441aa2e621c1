"""The Voilà server of a class: only the app pages, each kernel for its own visitor.

Voilà, serving a folder, lists and runs every notebook in it, starts a new kernel for a page
asked with ``?template=`` or ``?theme=``, and lets anyone who knows a kernel's id read it, drive
its widgets and shut it down. :class:`ClassroomVoila`, which ``python -m dpexplore.apps`` runs,
keeps Voilà's pages and kernels under these rules:

* **Only the app pages.** The launcher names them (:func:`dpexplore.apps.app_pages`: the notebook
  it was given, or in a folder the student versions of the apps, never ``instructor/``); any
  other path is a 404. In a folder, ``/`` lists the apps; there is no file tree, contents API or
  file download. A page's query options (``?template=``, ``?theme=``) are ignored, so every page
  comes from the pool.
* **A kernel answers its visitor only.** A page sets a secret visitor cookie (signed, HTTP-only,
  for this browser session) and the kernel it hands out is bound to it; the kernel's REST
  (``/api/kernels/<id>``), websocket (``…/channels``) and shutdown (``/voila/api/shutdown/<id>``)
  requests from anyone else get a 404, as for a kernel that does not exist.
* **Bounded kernels per client.** One client address holds at most
  ``ClassroomVoila.max_kernels_per_client`` app kernels at a time; a further page gets a 429 page
  that says to close one.
* **A page that never connects frees its kernel.** ``ClassroomVoila.connect_timeout`` seconds
  after a page was sent, its kernel is shut down unless the page opened its connection (a plain
  fetch of the page, or a browser that left before the page loaded).
* ``/voila/templates/…`` that is not a template's static file is a 404 (Voilà answers 500).
* **A pool that grows ahead of demand** (:class:`PoolSize`, used by the launcher's kernel manager,
  ``--pool-max``): while a class takes pages faster than the refills replace them, each page
  taken starts a second refill, up to a maximum; surplus pages the culler finds idle are freed.

Every route Voilà declares is either kept as it is (static files, themes, JupyterLab extensions,
log-in), replaced by one of the handlers here, or dropped; a route this module does not know stops
the server at start, so that a new Voilà version cannot expose something unnoticed.
"""
from __future__ import annotations

import asyncio
import hmac
import html
import os
import secrets
from dataclasses import dataclass
from typing import Any, Callable

from jupyter_core.utils import ensure_async
from jupyter_server.services.kernels.handlers import KernelHandler
from jupyter_server.utils import url_escape, url_path_join
from tornado import web
from tornado.ioloop import IOLoop
from traitlets import Float, Integer, List, Unicode
from voila.app import Voila
from voila.request_info_handler import RequestInfoSocketHandler
from voila.shutdown_kernel_handler import VoilaShutdownKernelHandler
from voila.static_file_handler import AllowListFileHandler, TemplateStaticFileHandler
from voila.tornado.contentshandler import VoilaContentsHandler
from voila.tornado.execution_request_handler import ExecutionRequestHandler
from voila.tornado.handler import TornadoVoilaHandler
from voila.tornado.kernel_websocket_handler import VoilaKernelWebsocketHandler
from voila.tornado.treehandler import TornadoVoilaTreeHandler

__all__ = ["ClassroomVoila", "PoolSize", "Visitors"]

_VISITORS = "dpexplore_visitors"   # the tornado setting that holds the Visitors


@dataclass
class _Page:
    visitor: str          # the secret of the visitor the kernel was handed to
    client: str           # the address the page was asked from
    opened: bool = False  # has the page opened its kernel's websocket?


class Visitors:
    """Which visitor each app kernel was handed to, and whether its page opened its connection.

    ``kernels`` is the server's kernel manager (only ``kernel_id in kernels`` and
    ``shutdown_kernel`` are used). A visitor is a random secret that the page handler keeps in a
    cookie.

    >>> visitors = Visitors({"k1", "k2"}, max_per_client=2, connect_timeout=30)
    >>> me = visitors.new_visitor()
    >>> visitors.bind("k1", me, "10.0.0.7")
    >>> visitors.owns("k1", me), visitors.owns("k1", visitors.new_visitor()), visitors.owns("k1", None)
    (True, False, False)
    >>> visitors.held_by("10.0.0.7"), visitors.held_by("10.0.0.8")
    (['k1'], [])
    """

    def __init__(self, kernels: Any, *, max_per_client: int, connect_timeout: float, log: Any = None):
        self._kernels = kernels
        self.max_per_client = max_per_client
        self.connect_timeout = connect_timeout
        self._log = log
        self._pages: dict[str, _Page] = {}

    @staticmethod
    def new_visitor() -> str:
        """A fresh visitor secret (192 random bits)."""
        return secrets.token_urlsafe(24)

    def bind(self, kernel_id: str, visitor: str, client: str) -> None:
        """Hand ``kernel_id`` to ``visitor``, whose page was asked from ``client``."""
        self._pages[kernel_id] = _Page(visitor, client)

    def owns(self, kernel_id: str, visitor: str | None) -> bool:
        """True when ``kernel_id`` is alive and was handed to ``visitor``."""
        page = self._pages.get(kernel_id)
        return (page is not None and visitor is not None and kernel_id in self._kernels
                and hmac.compare_digest(page.visitor.encode(), visitor.encode()))

    def held_by(self, client: str) -> list[str]:
        """The live kernels handed to pages asked from ``client``, oldest first."""
        for gone in [k for k in self._pages if k not in self._kernels]:
            del self._pages[gone]
        return [k for k, page in self._pages.items() if page.client == client]

    def opened(self, kernel_id: str) -> None:
        """The page of ``kernel_id`` opened its connection: the kernel is in use."""
        if kernel_id in self._pages:
            self._pages[kernel_id].opened = True

    def page_sent(self, kernel_id: str) -> None:
        """The page of ``kernel_id`` was sent (or its request ended): free the kernel after
        ``connect_timeout`` seconds unless the page has opened its connection by then."""
        if kernel_id in self._pages:
            IOLoop.current().call_later(self.connect_timeout, self._free_unopened, kernel_id)

    def _free_unopened(self, kernel_id: str) -> None:
        page = self._pages.get(kernel_id)
        if page is None or page.opened or kernel_id not in self._kernels:
            return
        if self._log is not None:
            self._log.info("dpexplore.apps: shutting down kernel %s: its page did not connect within %g s",
                           kernel_id, self.connect_timeout)
        asyncio.ensure_future(ensure_async(self._kernels.shutdown_kernel(kernel_id)))


class PoolSize:
    """How many pages of one app its pool keeps: ``base`` (``--pool``), grown ahead of demand up
    to ``maximum`` (``--pool-max``), and back to ``base`` as the culler frees unused pages.

    Voilà replaces each page taken from the pool by one refill, and refills run one at a time
    (about 2 s of a core each for 07): a class that takes pages faster than that empties the pool,
    and each student past it waits for the refills of all those before. Here each page taken while
    fewer than ``low_water`` pre-rendered pages are left behind it adds one page to the pool (two
    refills start instead of one), so the pool keeps growing while the class keeps arriving, and a
    later wave (a second group, the students who reload) finds more pages ready. A page beyond
    ``base`` that nobody took within the culler's idle timeout is freed (:meth:`free_surplus`),
    one at a time: an idle server holds ``base`` pages again. The growth only counts pages that
    were handed out, i.e. within the per-client cap (:class:`ClassroomVoila`).

    >>> pool = PoolSize(base=4, maximum=6, low_water=2)
    >>> [pool.taken(ready_left) for ready_left in (3, 2, 1, 0, 0)]   # pre-rendered pages left
    [4, 4, 5, 6, 6]
    >>> [pool.free_surplus() for _ in range(3)], pool.target
    ([True, True, False], 4)
    """

    def __init__(self, base: int, maximum: int, low_water: int):
        for name, value in (("base", base), ("maximum", maximum), ("low_water", low_water)):
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise ValueError(f"PoolSize: {name} must be a whole number >= 0, got {value!r}")
        self.base = base
        self.maximum = max(base, maximum)   # a maximum below the base: no growth
        self.low_water = low_water
        self.target = base

    def taken(self, ready_left: int) -> int:
        """A page was taken, leaving ``ready_left`` pre-rendered pages: the pool's new target."""
        if ready_left < self.low_water and self.target < self.maximum:
            self.target += 1
        return self.target

    @property
    def surplus(self) -> bool:
        """Does the pool keep more pages than ``base``?"""
        return self.target > self.base

    def free_surplus(self) -> bool:
        """One surplus page is freed (the culler found it unused): True, or False if none is."""
        if not self.surplus:
            return False
        self.target -= 1
        return True


class _VisitorMixin:
    """The visitor of a request (its signed cookie) and the check that it owns a kernel."""

    @property
    def visitors(self) -> Visitors:
        return self.settings[_VISITORS]

    @property
    def visitor_cookie(self) -> str:
        # one name per port: two servers on one host (a test, a second app) keep their own visitors
        return f"dpexplore-visitor-{self.settings['dpexplore_port']}"

    def visitor(self) -> str | None:
        value = self.get_signed_cookie(self.visitor_cookie)
        return value.decode() if value else None

    def check_owner(self, kernel_id: str) -> None:
        """404, as for a kernel that does not exist, unless this request's visitor owns it."""
        if not self.visitors.owns(kernel_id, self.visitor()):
            raise web.HTTPError(404, "no such kernel")


class AppPageHandler(_VisitorMixin, TornadoVoilaHandler):
    """An app page: only the launcher's pages, no query options, the kernel bound to its visitor."""

    async def prepare(self) -> None:
        await super().prepare()
        self.xsrf_token   # noqa: B018  (sets the _xsrf cookie of the page-closed request; Voilà's page never does)
        self.request.query_arguments.clear()   # ?template=, ?theme=: every page from the pool
        self.request.arguments.clear()
        self._visitor = self.visitor()
        if self._visitor is None:
            self._visitor = self.visitors.new_visitor()
            self.set_signed_cookie(self.visitor_cookie, self._visitor, expires_days=None, httponly=True,
                                   samesite="Lax")
        self._kernel_id: str | None = None

    async def get(self, path: str | None = None) -> None:
        if self.notebook_path:       # one app: only "/"
            if path:
                raise web.HTTPError(404)
        elif path not in self.settings["dpexplore_pages"]:
            raise web.HTTPError(404)
        client = self.request.remote_ip
        if len(self.visitors.held_by(client)) >= self.visitors.max_per_client:
            raise web.HTTPError(429, "This computer already has %d app pages open on this server, the most it may "
                                "have at once. Close one of them, then reload this page.",
                                self.visitors.max_per_client, reason="Too many open pages")
        await super().get(path)

    @property
    def kernel_manager(self) -> Any:
        return _BindingKernelManager(self.settings["kernel_manager"], self._bind)

    def _bind(self, kernel_id: str) -> None:
        self.visitors.bind(kernel_id, self._visitor, self.request.remote_ip)
        self._kernel_id = kernel_id

    def on_finish(self) -> None:
        if self._kernel_id is not None:
            self.visitors.page_sent(self._kernel_id)

    def on_connection_close(self) -> None:
        super().on_connection_close()
        self.on_finish()


class _BindingKernelManager:
    """The kernel manager as a page handler sees it: the kernel handed to the page (from the pool,
    or started for it) is bound to the page's visitor first."""

    def __init__(self, manager: Any, bind: Callable[[str], None]):
        self._manager = manager
        self._bind = bind

    def __getattr__(self, name: str) -> Any:
        return getattr(self._manager, name)

    async def get_rendered_notebook(self, *args: Any, **kwargs: Any):
        task, rendered, kernel_id = await self._manager.get_rendered_notebook(*args, **kwargs)
        self._bind(kernel_id)
        return task, rendered, kernel_id

    async def start_kernel(self, *args: Any, **kwargs: Any) -> str:
        kernel_id = await ensure_async(self._manager.start_kernel(*args, **kwargs))
        self._bind(kernel_id)
        return kernel_id


class AppIndexHandler(TornadoVoilaTreeHandler):
    """``/`` of a folder: the list of its apps (instead of Voilà's file tree). A page of its own,
    not a template's: it does not depend on the template ``voila.json`` selects."""

    async def get(self, path: str = "") -> None:
        if path.strip("/"):
            raise web.HTTPError(404)
        links = "".join(f'<li><a href="{html.escape(url_path_join(self.base_url, "voila", "render", url_escape(page)))}">'
                        f"{html.escape(title)}</a></li>"
                        for page, title in self.settings["dpexplore_pages"].items())
        self.write(_APP_LIST.format(links=links))


_APP_LIST = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>dpexplore apps</title></head>
<body><main style="max-width: 720px; margin: 4em auto; font: 16px/1.5 system-ui, sans-serif;">
<h1 style="font-size: 1.6em;">dpexplore apps</h1><ul>{links}</ul></main></body></html>
"""


class OwnedKernelHandler(_VisitorMixin, KernelHandler):
    """``GET``/``DELETE /api/kernels/<id>``: for the kernel's visitor only."""

    async def get(self, kernel_id: str) -> None:
        self.check_owner(kernel_id)
        await super().get(kernel_id)

    async def delete(self, kernel_id: str) -> None:
        self.check_owner(kernel_id)
        await super().delete(kernel_id)


class OwnedKernelWebsocketHandler(_VisitorMixin, VoilaKernelWebsocketHandler):
    """The kernel's channels (widgets, sliders): for the kernel's visitor only."""

    async def get(self, kernel_id: str) -> None:
        self.check_owner(kernel_id)
        await super().get(kernel_id)

    async def open(self, kernel_id: str) -> None:   # type: ignore[override]
        self.visitors.opened(kernel_id)
        await super().open(kernel_id)


class OwnedShutdownHandler(_VisitorMixin, VoilaShutdownKernelHandler):
    """The page-closed request: shuts down the visitor's own kernel only."""

    async def post(self, kernel_id: str) -> None:
        self.check_owner(kernel_id)
        await super().post(kernel_id)


class TemplateStaticHandler(TemplateStaticFileHandler):
    """A template's static file, ``<template>/static/<file>``; anything else is a 404 (Voilà's
    handler fails with a 500 on other paths)."""

    def parse_url_path(self, path: str) -> str:
        parts = os.path.normpath(path).split(os.sep)
        if len(parts) < 3 or parts[1] != "static" or ".." in parts:
            raise web.HTTPError(404)
        return super().parse_url_path(path)


#: Voilà's handlers that the class server keeps as they are: static files (Voilà's, JupyterLab
#: extensions', themes)
_KEPT = (web.StaticFileHandler,)
#: Voilà's handlers it replaces
_REPLACED = {TornadoVoilaHandler: AppPageHandler, KernelHandler: OwnedKernelHandler,
             VoilaKernelWebsocketHandler: OwnedKernelWebsocketHandler,
             VoilaShutdownKernelHandler: OwnedShutdownHandler, TemplateStaticFileHandler: TemplateStaticHandler}
#: and those it drops: the file tree and contents API, file downloads, the request-info socket
#: (read by a kernel that asks for its URL; the apps do not), progressive rendering (not used with a pool)
_DROPPED = (VoilaContentsHandler, AllowListFileHandler, RequestInfoSocketHandler, ExecutionRequestHandler)


class ClassroomVoila(Voila):
    """Voilà with the class server's rules (module docstring). The launcher sets :attr:`pages`."""

    description = Unicode(
        "python -m dpexplore.apps NOTEBOOK_OR_FOLDER [--pool N] [--pool-max M] [OPTIONS]\n\n"
        "The class server of the dpexplore apps (docs/teaching_a_class.md): Voilà serving only the "
        "app pages, each kernel to its own visitor.\n\n"
        "--pool N: keep N pre-rendered pages of each app (voila.json keeps 1).\n\n"
        "--pool-max M: let each app's pool grow ahead of demand, up to M pages: once fewer than half "
        "the pool is pre-rendered (--ClassroomKernelManager.pool_low_water), each page taken starts a "
        "second refill; a page beyond N left unused for the culler's idle timeout is shut down. "
        "Default: N (no growth).")

    max_kernels_per_client = Integer(4, config=True, help=(
        "The most app kernels one client address may hold at once (a student's pages, reloads "
        "included). Where students reach the server through one address (a NAT, a proxy), set it "
        "to the class size."))
    connect_timeout = Float(30.0, config=True, help=(
        "Seconds after a page is sent within which it must open its kernel's connection; "
        "otherwise the kernel is shut down."))
    pages = List(Unicode(), help="The app pages served, as paths relative to the root folder.")

    def init_settings(self) -> dict:
        settings = super().init_settings()
        settings[_VISITORS] = Visitors(self.kernel_manager, max_per_client=self.max_kernels_per_client,
                                       connect_timeout=self.connect_timeout, log=self.log)
        settings["dpexplore_port"] = self.port
        settings["dpexplore_pages"] = {page: _title(os.path.join(self.root_dir, page)) for page in self.pages}
        return settings

    def init_handlers(self) -> list:
        login = {pattern for pattern, _ in self.identity_provider.get_handlers()}
        handlers = []
        for pattern, handler, *kwargs in super().init_handlers():
            if handler is TornadoVoilaTreeHandler:
                if pattern == self.server_url:                  # "/" of a folder: the list of its apps
                    handlers.append((pattern, AppIndexHandler, *kwargs))
            elif handler in _REPLACED:
                handlers.append((pattern, _REPLACED[handler], *kwargs))
            elif issubclass(handler, _DROPPED):
                continue
            elif pattern in login or issubclass(handler, _KEPT):
                handlers.append((pattern, handler, *kwargs))
            else:
                raise RuntimeError(f"dpexplore.apps does not know Voilà's handler {handler!r} for {pattern!r}: "
                                   "decide whether a class server may serve it (dpexplore/app_server.py)")
        return handlers


def _title(path: str) -> str:
    """A notebook's first Markdown heading (its title), else its file name."""
    import nbformat

    try:
        notebook = nbformat.read(path, as_version=4)
    except (OSError, ValueError):
        return os.path.basename(path)
    for cell in notebook.cells:
        if cell.cell_type == "markdown":
            for line in cell.source.splitlines():
                if line.startswith("# "):
                    return line[2:].strip()
    return os.path.basename(path)
