"""Serve the Voilà apps (notebooks 01 and 07) reliably and offline.

    python -m dpexplore.apps notebooks/07_showdown.ipynb [--pool N] [--pool-max M] [voila options]

This launcher runs Voilà with two fixes that a plain ``voila`` command lacks:

* **A page that never finishes**. Voilà executes the notebook with nbclient.
  When a cell draws into an ``ipywidgets.Output``, nbclient mirrors the widget by sending a
  ``comm_msg`` on the shell channel while another task awaits that cell's ``execute_reply`` on
  the same ``zmq.asyncio`` socket. ``jupyter_client.Session.send`` sends through a *synchronous
  shadow* of that socket; ZeroMQ signals "a message arrived" only once (an edge-triggered
  ``ZMQ_FD``), and if the reply has just landed the raw send consumes the signal: the reply waits
  in the socket and the page spins for ever (7 hangs in 20 fresh servers here; ipykernel 6 does
  not avoid it: 4 in 20). Upstream: jupyter/nbclient#312 (fix proposed in #311, open).
  :func:`apply_rearm_patch` re-reads ``ZMQ_EVENTS`` after each such send, which makes pyzmq wake
  any pending wait (0 hangs in 40; ``benchmarks/voila_first_kernel.py`` measures it).
* **The template** ``share/jupyter/voila/templates/dpexplore`` (Voilà's "lab" template without
  Font Awesome from a CDN), which ``voila.json`` selects: a wheel install puts it under
  ``sys.prefix``; from a source checkout (``pip install -e .``) the launcher adds the checkout's
  ``share/jupyter`` to ``JUPYTER_PATH``.

For a class (``docs/teaching_a_class.md``) the launcher also

* **keeps kernels pre-heated**: ``--pool N`` keeps N kernels of each served app page that have
  already run the notebook (Voilà's kernel pools; ``voila.json`` keeps one per app by default),
  so N students arriving at once get a finished page at once;
* **refills the pool one page at a time** (:class:`ClassroomKernelManager`): Voilà starts a new
  pool kernel as soon as one is taken; thirty refills running together would hold both cores
  while the students move their first sliders. ``prerender_concurrency`` (default: all cores
  but one) bounds how many notebooks pre-render at once;
* **grows the pool ahead of demand** with ``--pool-max M``: once fewer than ``pool_low_water``
  pre-rendered pages are left (default: half the pool), each page taken starts a second refill,
  until the pool keeps M pages; a page beyond ``--pool N`` that stays unused for the culler's idle
  timeout is shut down (:class:`dpexplore.app_server.PoolSize`);
* **lets idle kernels be culled** without culling a page being opened: Jupyter's culler
  (``cull_idle_timeout``/``cull_interval``/``cull_connected`` in ``voila.json``) shuts down a
  kernel with no open page after the timeout; a pool kernel handed to a visitor counts as active
  from that moment, not from its pre-render (which may be older than the timeout);
* **shuts a closed page's kernel down**: the page sets the cookie that Voilà's own "page closed"
  request needs (without it the request is refused and every visitor's kernel stays until the
  server stops; :func:`apply_xsrf_cookie_patch` does the same inside JupyterLab);
* **serves only the app pages, each kernel to its own visitor**
  (:class:`dpexplore.app_server.ClassroomVoila`: an allow-list of pages, kernels bound to a visitor
  cookie, a bound on the kernels one client holds, a page that never connects freed);
* runs every kernel with one BLAS/OpenMP thread (many kernels share few cores).

The template shows a visitor whose kernel is gone (culled, crashed, restarted empty, server
stopped) a plain message and a reload button instead of sliders that silently do nothing.

Inside JupyterLab (``/voila/render/...``, e.g. on Binder) the two patches load as a Jupyter
server extension (``jupyter server extension enable dpexplore.apps``; Binder's ``postBuild``
does it).
"""
from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path
from typing import Any, Sequence

__all__ = ["APPS", "app_pages", "apply_rearm_patch", "main", "size_pools"]

_CHECKOUT_SHARE = Path(__file__).resolve().parents[1] / "share" / "jupyter"
#: The notebooks made to be served as Voilà apps (the others run long sweeps when executed).
APPS = ("01_mechanisms.ipynb", "07_showdown.ipynb")
_THREAD_VARIABLES = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")
_PRERENDER_WAIT_S = 300   # longest a pool kernel's pre-render holds back the next one


def apply_rearm_patch() -> None:
    """Re-arm pyzmq's asyncio wake-up after jupyter_client sends on a socket's sync shadow.

    Idempotent; must run in the process that runs nbclient (the Voilà server).
    """
    import zmq
    import zmq.asyncio
    from jupyter_client.session import Session

    if getattr(Session.send, "_dpexplore_rearm", False):
        return

    def rearmed(send):
        def send_then_rearm(self, stream, *args, **kwargs):
            result = send(self, stream, *args, **kwargs)
            if isinstance(stream, zmq.asyncio.Socket) and not stream.closed:
                stream.get(zmq.EVENTS)  # pyzmq's asyncio socket wakes pending waits if POLLIN
            return result

        send_then_rearm._dpexplore_rearm = True  # type: ignore[attr-defined]
        send_then_rearm.__wrapped__ = send  # type: ignore[attr-defined]
        return send_then_rearm

    Session.send = rearmed(Session.send)  # type: ignore[method-assign]
    Session.send_raw = rearmed(Session.send_raw)  # type: ignore[method-assign]


def apply_xsrf_cookie_patch() -> None:
    """Give every Voilà page the ``_xsrf`` cookie, so that closing the page shuts its kernel down.

    When a page is closed or reloaded, Voilà's widget manager posts ``voila/api/shutdown/<kernel>``
    with a beacon that carries the ``_xsrf`` cookie's value; the page handler never sets that
    cookie (only the file tree does), so a visitor who opens an app by its address gets a 403 and
    the kernel stays until the server stops (upstream: voila-dashboards/voila#1458, open).
    Reading tornado's ``xsrf_token`` in the page handler's ``prepare`` sets the cookie. Idempotent.
    """
    import inspect

    from voila.handler import VoilaHandler

    if getattr(VoilaHandler.prepare, "_dpexplore_xsrf", False):
        return
    prepare = VoilaHandler.prepare

    async def prepare_with_xsrf_cookie(self, *args, **kwargs):
        result = prepare(self, *args, **kwargs)
        if inspect.isawaitable(result):
            result = await result
        self.xsrf_token   # noqa: B018  (tornado sets the cookie when the visitor has none)
        return result

    prepare_with_xsrf_cookie._dpexplore_xsrf = True  # type: ignore[attr-defined]
    prepare_with_xsrf_cookie.__wrapped__ = prepare  # type: ignore[attr-defined]
    VoilaHandler.prepare = prepare_with_xsrf_cookie  # type: ignore[method-assign]


def _use_checkout_templates() -> None:
    """From a source checkout, let Voilà find the ``dpexplore`` template without installing it."""
    if (_CHECKOUT_SHARE / "voila" / "templates" / "dpexplore").is_dir():
        paths = [p for p in os.environ.get("JUPYTER_PATH", "").split(os.pathsep) if p]
        if str(_CHECKOUT_SHARE) not in paths:
            os.environ["JUPYTER_PATH"] = os.pathsep.join([str(_CHECKOUT_SHARE), *paths])


def classroom_kernel_manager_factory(base_class: type, preheat_kernel: bool, default_pool_size: int,
                                     page_config_hook: Any = None) -> type:
    """Voilà's kernel-manager factory, plus :class:`ClassroomKernelManager` when pools are on.

    Same signature as ``voila.voila_kernel_manager.voila_kernel_manager_factory``, which
    :func:`main` replaces with it in ``voila.app``.
    """
    from jupyter_core.utils import ensure_async
    from jupyter_server._tz import utcnow
    from traitlets import Integer, default
    from voila.voila_kernel_manager import voila_kernel_manager_factory

    from .app_server import PoolSize

    pooled = voila_kernel_manager_factory(base_class, preheat_kernel, default_pool_size, page_config_hook)
    if not preheat_kernel:
        return pooled

    class ClassroomKernelManager(pooled):
        """Voilà's pooling kernel manager that pre-renders at most ``prerender_concurrency``
        notebooks at a time, counts the hand-over of a pool kernel as activity, and grows each
        app's pool ahead of demand up to ``pool_max`` pages."""

        prerender_concurrency = Integer(config=True, help="How many pool kernels may run their notebook "
                                        "at the same time (the others wait their turn).")
        pool_max = Integer(0, config=True, help=(
            "The most pages each app's pool may grow to ahead of demand (--pool-max); 0 or a number "
            "at most the pool's size: the pool keeps its size."))
        pool_low_water = Integer(None, allow_none=True, config=True, help=(
            "Each page taken while fewer pre-rendered pages than this are left grows the pool by one "
            "page, up to pool_max (default: half the pool's size, rounded up)."))

        @default("prerender_concurrency")
        def _all_cores_but_one(self) -> int:
            return max(1, (os.cpu_count() or 2) - 1)

        def __init__(self, **kwargs: Any):
            self._pool_sizes: dict[str, PoolSize] = {}
            super().__init__(**kwargs)

        def _pool_size(self, notebook_name: str) -> PoolSize:
            """The size rule of ``notebook_name``'s pool, made from its configured size on first use."""
            sizes = self._pool_sizes
            if notebook_name not in sizes:
                default = self.kernel_pools_config.get("default", {})
                base = self.kernel_pools_config.get(notebook_name, default).get("pool_size",
                                                                                default.get("pool_size", 1))
                low_water = (base + 1) // 2 if self.pool_low_water is None else self.pool_low_water
                sizes[notebook_name] = PoolSize(max(0, base), max(0, self.pool_max), max(0, low_water))
            return sizes[notebook_name]

        def _resize_pool(self, notebook_name: str, target: int) -> None:
            """Voilà's refills (``fill_if_needed``) fill the pool to its configured size: set it."""
            pools = dict(self.kernel_pools_config)
            pools[notebook_name] = {**pools.get(notebook_name, pools.get("default", {})), "pool_size": target}
            self.kernel_pools_config = pools

        def _take(self, notebook_name: str) -> None:
            """A page of ``notebook_name`` is about to be taken from its pool (the first entry)."""
            pool = self._pools.get(notebook_name, [])
            size = self._pool_size(notebook_name)
            before = size.target
            ready_left = sum(entry.done() for entry in pool[1:])
            if size.taken(ready_left) != before:
                self._resize_pool(notebook_name, size.target)
            self.log.info("dpexplore.apps: a page of %s taken with %d pre-rendered left: pool size %d",
                          notebook_name, ready_left, size.target)

        async def _initialize(self, notebook_path: str, kernel_id: str | None = None, **kwargs: Any) -> dict:
            if getattr(self, "_prerender_gate", None) is None:
                self._prerender_gate = asyncio.Semaphore(max(1, self.prerender_concurrency))
            async with self._prerender_gate:
                content = await super()._initialize(notebook_path, kernel_id, **kwargs)
                # until the page is pre-rendered (or failed); a page that hangs lets the next go
                await asyncio.wait([content["task"]], timeout=_PRERENDER_WAIT_S)
            return content

        async def get_rendered_notebook(self, notebook_name: str, extra_kernel_env_variables: dict | None = None,
                                        **kwargs: Any):
            self._take(notebook_name)   # before Voilà's refill, which fills the pool to its size
            task, rendered, kernel_id = await super().get_rendered_notebook(
                notebook_name, extra_kernel_env_variables or {}, **kwargs)
            if kernel_id in self._kernels:   # its last message may be older than the cull timeout
                self._kernels[kernel_id].last_activity = utcnow()
            return task, rendered, kernel_id

        async def cull_kernel_if_idle(self, kernel_id: str) -> None:
            """Voilà never culls a pool kernel; a surplus one (beyond ``--pool``) idle for the cull
            timeout is shut down, and its pool shrinks by one page."""
            notebook_name = self._pooled_notebook(kernel_id)
            if notebook_name is None or not self._pool_size(notebook_name).surplus:
                return await super().cull_kernel_if_idle(kernel_id)
            last_activity = getattr(self._kernels[kernel_id], "last_activity", None)   # set once it is watched
            idle = 0.0 if last_activity is None else (utcnow() - last_activity).total_seconds()
            if self.cull_idle_timeout <= 0 or idle <= self.cull_idle_timeout:
                return None
            size = self._pool_size(notebook_name)
            size.free_surplus()
            self._resize_pool(notebook_name, size.target)
            self.log.info("dpexplore.apps: pool kernel %s of %s unused for %d s: shut down, pool size %d",
                          kernel_id, notebook_name, idle, size.target)
            await ensure_async(self.shutdown_kernel(kernel_id))   # Voilà's: takes it out of its pool
            return None

        def _pooled_notebook(self, kernel_id: str) -> str | None:
            """The notebook whose pool holds ``kernel_id`` pre-rendered, or None."""
            for notebook_name, pool in self._pools.items():
                for entry in pool:
                    if (entry.done() and not entry.cancelled() and entry.exception() is None
                            and entry.result().get("kernel_id") == kernel_id):
                        return notebook_name
            return None

    return ClassroomKernelManager


def app_pages(root_dir: str, notebook_path: str | None = None) -> list[str]:
    """The pages a class server serves, as paths relative to ``root_dir``: the one notebook it was
    given, or each :data:`APPS` notebook at the top of the folder or in its ``notebooks/`` (the
    student versions: never a notebook of ``notebooks/instructor/``, which holds the solutions).

    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as root:
    ...     for name in ("07_showdown.ipynb", "02_privpfc.ipynb", "instructor/01_mechanisms.ipynb"):
    ...         os.makedirs(os.path.dirname(os.path.join(root, name)), exist_ok=True)
    ...         Path(root, name).touch()
    ...     app_pages(root), app_pages(root, os.path.join(root, "02_privpfc.ipynb"))
    (['07_showdown.ipynb'], ['02_privpfc.ipynb'])
    """
    if notebook_path:
        return [os.path.relpath(notebook_path, root_dir)]
    root = Path(root_dir)
    found = []
    for name in APPS:
        for page in (name, f"notebooks/{name}"):
            if (root / page).is_file():
                found.append(page)
                break
    return found


def size_pools(app: Any, size: int) -> dict:
    """Keep ``size`` pre-heated kernels for each page ``app`` (a ``voila.app.Voila``, initialised,
    not started) serves as an app (:func:`app_pages`). Other notebooks keep their ``voila.json``
    pools. Returns the new ``kernel_pools_config``."""
    if isinstance(size, bool) or not isinstance(size, int) or size < 0:
        raise ValueError(f"--pool must be a whole number of kernels >= 0, got {size!r}")
    section = app.config.VoilaKernelManager
    pools = {key: dict(value) for key, value in section.get("kernel_pools_config", {}).items()}
    pools.setdefault("default", {"pool_size": 0})
    for key in app_pages(app.root_dir, app.notebook_path):
        pools[key] = {**pools.get(key, {}), "pool_size": size}
    section.kernel_pools_config = pools
    return pools


def _pop_pool(argv: list[str], option: str = "--pool") -> tuple[int | None, list[str]]:
    """``--pool N`` / ``--pool=N`` (or another ``option`` of the launcher, e.g. ``--pool-max``)
    taken out of Voilà's arguments."""
    rest, pool = [], None
    args = iter(argv)
    for arg in args:
        if arg == option or arg.startswith(f"{option}="):
            value = arg.partition("=")[2] if "=" in arg else next(args, "")
            try:
                pool = int(value)
            except ValueError:
                raise SystemExit(f"{option} needs a whole number of kernels, got {value!r}") from None
        else:
            rest.append(arg)
    return pool, rest


def main(argv: Sequence[str] | None = None) -> Any:
    """Run the class server (same arguments as the ``voila`` command, plus ``--pool N`` and
    ``--pool-max M``): Voilà with the fixes above and the rules of
    :class:`dpexplore.app_server.ClassroomVoila`."""
    pool, args = _pop_pool(list(sys.argv[1:] if argv is None else argv))
    pool_max, args = _pop_pool(args, "--pool-max")
    if pool_max is not None and (pool_max < 0 or (pool is not None and pool_max < pool)):
        raise SystemExit(f"--pool-max must be at least --pool ({pool if pool is not None else 0}), got {pool_max}")
    _use_checkout_templates()
    for variable in _THREAD_VARIABLES:            # inherited by every kernel
        os.environ.setdefault(variable, "1")
    apply_rearm_patch()
    import voila.app

    from .app_server import ClassroomVoila

    voila.app.voila_kernel_manager_factory = classroom_kernel_manager_factory
    sys.argv = ["voila", *args]
    app = ClassroomVoila.instance()
    app.initialize(args)
    app.pages = app_pages(app.root_dir, app.notebook_path)
    if not app.pages:
        raise SystemExit(f"no app to serve in {app.root_dir}: give one notebook, or a folder holding "
                         f"{' or '.join(APPS)} (at its top or in notebooks/)")
    app.log.info("dpexplore.apps: serving %s", ", ".join(app.pages))
    if pool is not None:
        pools = size_pools(app, pool)
        app.log.info("dpexplore.apps: kernel pools %s", pools)
    if pool_max is not None:
        app.config.ClassroomKernelManager.pool_max = pool_max
        app.log.info("dpexplore.apps: each app's pool may grow to %d pages", pool_max)
    return app.start()


# Jupyter server extension: the patch inside JupyterLab's own /voila/render handler.
def _jupyter_server_extension_points() -> list[dict]:
    return [{"module": "dpexplore.apps"}]


def _load_jupyter_server_extension(server_app: Any) -> None:
    apply_rearm_patch()
    apply_xsrf_cookie_patch()
    server_app.log.info("dpexplore.apps: nbclient/jupyter_client shell re-arm and Voilà _xsrf cookie patches applied")


if __name__ == "__main__":
    sys.exit(main())
