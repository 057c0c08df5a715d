"""First come, first served for the work a server does on its event loop (offers queries, plans seen before).

Why: left alone, an event loop serves the requests of one wake-up in the kernel's ready-list order, one after
another, before it looks for new ones. Under load that order sticks: a connection whose request arrives just
after a wake-up waits for two whole rounds, every time. With 50 clients and one worker it was always one or
two connections at twice the median latency, which made the p99 (benchmarks/bench_api.py --distinct).

A `Turn` runs one such piece of work at a time, in the order the requests reached the app, and between two
pieces the loop polls its sockets, so a request that arrived meanwhile joins the queue behind the earlier ones.
Only the computation holds the turn: the response is sent after it is passed on, so a slow reader never makes
the others wait. An idle server pays nothing (a free turn is taken without waiting).
"""

from __future__ import annotations

import asyncio
from collections import deque
from weakref import WeakKeyDictionary

_TURNS: WeakKeyDictionary = WeakKeyDictionary()


class Turn:
    """One holder at a time; waiters in arrival order (see the module docstring)."""

    def __init__(self, loop: asyncio.AbstractEventLoop):
        self.loop = loop
        self.busy = False
        self.waiting: deque[asyncio.Future] = deque()
        self.served = 0
        self.waited = 0  # how many had to queue (the tests and the benchmark read it)

    async def __aenter__(self) -> Turn:
        if self.busy:  # (never False while a live waiter is queued: _release hands the turn to it)
            self.waited += 1
            fut = self.loop.create_future()
            self.waiting.append(fut)
            try:
                await fut
            except BaseException:
                if fut.done() and not fut.cancelled():  # handed the turn, then cancelled: hand it on
                    self._release()
                raise  # (a cancelled waiter's future stays queued; _release skips it)
        self.busy = True
        return self

    async def __aexit__(self, *exc) -> None:
        self.served += 1
        if self.waiting:
            self._release()  # the next one resumes on the loop's next round, after it has polled
        else:
            # keep the turn until the next round: requests that arrived in the same wake-up as this one
            # have not run yet, and they queue in order instead of each taking a free turn in ready-list order
            self.loop.call_soon(self._release)

    def _release(self) -> None:
        while self.waiting:
            fut = self.waiting.popleft()
            if not fut.done():
                fut.set_result(None)  # the turn passes to it (busy stays True)
                return
        self.busy = False


def turn() -> Turn:
    """The running loop's turn (each event loop has its own: tests run apps on several)."""
    loop = asyncio.get_running_loop()
    t = _TURNS.get(loop)
    if t is None:
        t = _TURNS[loop] = Turn(loop)
    return t


__all__ = ["Turn", "turn"]
