"""The Voilà page that never finishes, reduced to its mechanism.

nbclient (inside the Voilà server) sends a ``comm_msg`` on the shell channel while another task
awaits the ``execute_reply`` on the same ``zmq.asyncio`` socket. ``jupyter_client.Session.send``
sends through a sync shadow of the socket; if the reply's arrival is pending in the socket's
edge-triggered ZMQ_FD at that moment, the raw send consumes the wake-up and the awaiting poll
is never woken. These tests stage exactly that order of events, deterministically, with no
kernel and no browser; ``benchmarks/voila_first_kernel.py`` measures it on real servers; ``dpexplore.apps`` applies the fix.
"""
from __future__ import annotations

import asyncio
import time

import zmq
import zmq.asyncio
from jupyter_client.channels import AsyncZMQSocketChannel
from jupyter_client.session import Session

from _event_loop import run_coroutine


def _fix():
    """The workaround the package's Voilà launcher applies."""
    from dpexplore.apps import apply_rearm_patch

    return apply_rearm_patch


async def _reply_is_delivered() -> bool:
    """Stage the race; True when the awaiting ``get_msg`` receives the reply within 2 s."""
    ctx = zmq.asyncio.Context()
    router = zmq.Context.instance().socket(zmq.ROUTER)        # the kernel's shell socket
    port = router.bind_to_random_port("tcp://127.0.0.1")
    dealer = ctx.socket(zmq.DEALER)                             # the Voilà executor's shell socket
    dealer.connect(f"tcp://127.0.0.1:{port}")
    session = Session(key=b"k")
    channel = AsyncZMQSocketChannel(dealer, session)
    try:
        channel.send(session.msg("kernel_info_request"))        # lets the router learn the peer
        ident, *_ = router.recv_multipart()
        waiting = asyncio.ensure_future(channel.get_msg(timeout=None))   # nbclient's reply task
        await asyncio.sleep(0.1)                                # the poll is now registered
        session.send(router, "execute_reply", {"status": "ok"}, ident=[ident])
        time.sleep(0.2)   # the reply lands in the dealer and signals its fd; the loop does not run
        channel.send(session.msg("comm_msg", {"comm_id": "x", "data": {}}))  # nbclient's Output mirror
        try:
            msg = await asyncio.wait_for(waiting, 2)
        except asyncio.TimeoutError:
            return False
        return msg["msg_type"] == "execute_reply"
    finally:
        dealer.close(linger=0)
        router.close(linger=0)
        ctx.term()


def test_raw_send_on_the_shadow_strands_the_reply(monkeypatch):
    """Without the workaround the reply is stranded (this is the upstream bug: jupyter/nbclient#312).
    If this starts failing, jupyter_client no longer drains the wake-up and the workaround can go."""
    monkeypatch.setattr(Session, "send", getattr(Session.send, "__wrapped__", Session.send))
    monkeypatch.setattr(Session, "send_raw", getattr(Session.send_raw, "__wrapped__", Session.send_raw))
    assert not run_coroutine(_reply_is_delivered())


def test_rearm_patch_delivers_the_reply(monkeypatch):
    monkeypatch.setattr(Session, "send", getattr(Session.send, "__wrapped__", Session.send))
    monkeypatch.setattr(Session, "send_raw", getattr(Session.send_raw, "__wrapped__", Session.send_raw))
    _fix()()
    assert run_coroutine(_reply_is_delivered())
    _fix()()   # idempotent: applying twice does not wrap twice
    assert not hasattr(Session.send.__wrapped__, "__wrapped__")


def test_rearm_patch_keeps_ordinary_traffic(monkeypatch):
    """With the workaround, plain request/reply traffic still flows."""
    n = 3
    monkeypatch.setattr(Session, "send", getattr(Session.send, "__wrapped__", Session.send))
    monkeypatch.setattr(Session, "send_raw", getattr(Session.send_raw, "__wrapped__", Session.send_raw))
    _fix()()

    async def roundtrips() -> int:
        ctx = zmq.asyncio.Context()
        router = ctx.socket(zmq.ROUTER)
        port = router.bind_to_random_port("tcp://127.0.0.1")
        dealer = ctx.socket(zmq.DEALER)
        dealer.connect(f"tcp://127.0.0.1:{port}")
        session = Session(key=b"k")
        channel = AsyncZMQSocketChannel(dealer, session)
        got = 0
        try:
            for _ in range(n):
                channel.send(session.msg("kernel_info_request"))
                ident, *frames = await router.recv_multipart()
                session.send(router, "kernel_info_reply", {"status": "ok"}, ident=[ident])
                reply = await asyncio.wait_for(channel.get_msg(timeout=None), 2)
                got += reply["msg_type"] == "kernel_info_reply"
        finally:
            dealer.close(linger=0)
            router.close(linger=0)
            ctx.term()
        return got

    assert run_coroutine(roundtrips()) == n
