"""Serve the Voilà apps (notebooks 01 and 07) reliably and offline.

    python -m dpexplore.apps notebooks/07_showdown.ipynb [voila options]

This launcher runs Voilà with two fixes that a plain ``voila`` command lacks:

* **A page that never finishes** (issue 13, item 5). Voilà executes the notebook with nbclient.
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

Inside JupyterLab (``/voila/render/...``, e.g. on Binder) the same patch loads as a Jupyter
server extension (``jupyter server extension enable dpexplore.apps``; Binder's ``postBuild``
does it).
"""
from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any, Sequence

__all__ = ["apply_rearm_patch", "main"]

_CHECKOUT_SHARE = Path(__file__).resolve().parents[1] / "share" / "jupyter"


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


def _use_checkout_templates() -> None:
    """From a source checkout, let Voilà find the ``dpexplore`` template without installing it."""
    if (_CHECKOUT_SHARE / "voila" / "templates" / "dpexplore").is_dir():
        paths = [p for p in os.environ.get("JUPYTER_PATH", "").split(os.pathsep) if p]
        if str(_CHECKOUT_SHARE) not in paths:
            os.environ["JUPYTER_PATH"] = os.pathsep.join([str(_CHECKOUT_SHARE), *paths])


def main(argv: Sequence[str] | None = None) -> Any:
    """Run Voilà (same arguments as the ``voila`` command) with the fixes above."""
    _use_checkout_templates()
    apply_rearm_patch()
    from voila.app import main as voila_main

    sys.argv = ["voila", *(sys.argv[1:] if argv is None else argv)]
    return voila_main()


# Jupyter server extension: the patch inside JupyterLab's own /voila/render handler.
def _jupyter_server_extension_points() -> list[dict]:
    return [{"module": "dpexplore.apps"}]


def _load_jupyter_server_extension(server_app: Any) -> None:
    apply_rearm_patch()
    server_app.log.info("dpexplore.apps: nbclient/jupyter_client shell re-arm patch applied")


if __name__ == "__main__":
    sys.exit(main())
