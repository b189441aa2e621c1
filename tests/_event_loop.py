"""``asyncio.run`` for tests that run in the same session as the browser tests."""
from __future__ import annotations

import asyncio
import concurrent.futures


def run_coroutine(coroutine):
    """Run ``coroutine`` with ``asyncio.run`` in a thread of its own: the browser tests' Playwright
    keeps an event loop running in the main thread for the whole session, where ``asyncio.run``
    refuses to start."""
    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(asyncio.run, coroutine).result()
