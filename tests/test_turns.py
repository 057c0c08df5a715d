"""web/turns.py: work on the event loop is served one at a time, in arrival order, and nothing deadlocks."""

from __future__ import annotations

import asyncio

import pytest

from gpuquote.web.turns import Turn, turn


async def _worker(t: Turn, name: str, log: list[str], rounds: int = 1) -> None:
    async with t:
        log.append(f"{name}+")
        for _ in range(rounds):  # a holder that yields must still keep the others out
            await asyncio.sleep(0)
        log.append(f"{name}-")


def test_waiters_are_served_in_arrival_order_one_at_a_time():
    async def main():
        t = Turn(asyncio.get_running_loop())
        log: list[str] = []
        tasks = [asyncio.create_task(_worker(t, n, log, rounds=2)) for n in "abcde"]
        await asyncio.gather(*tasks)
        return t, log

    t, log = asyncio.run(main())
    assert log == [x for n in "abcde" for x in (f"{n}+", f"{n}-")], "no overlap, in the order the tasks started"
    assert t.served == 5 and t.waited == 4 and not t.busy and not t.waiting


def test_requests_of_one_wake_up_queue_instead_of_grabbing_a_free_turn():
    """The holder finishes without yielding; requests that started in the same loop round after it must
    queue in their order, and one that starts later (after a poll) comes behind them."""
    async def main():
        loop = asyncio.get_running_loop()
        t = Turn(loop)
        log: list[str] = []
        first = [asyncio.create_task(_worker(t, n, log, rounds=0)) for n in "abc"]
        await asyncio.sleep(0)  # one round: a finished, b and c queued behind it
        assert log[:2] == ["a+", "a-"] and t.busy and len(t.waiting) == 2
        late = asyncio.create_task(_worker(t, "z", log, rounds=0))
        await asyncio.gather(*first, late)
        return log

    assert asyncio.run(main()) == ["a+", "a-", "b+", "b-", "c+", "c-", "z+", "z-"]


def test_a_free_turn_is_taken_without_waiting():
    async def main():
        t = Turn(asyncio.get_running_loop())
        async with t:
            assert t.busy
        assert t.waited == 0 and t.busy, "kept until the next round"
        await asyncio.sleep(0)
        assert not t.busy
        async with t:  # and taken again at once
            pass
        return t

    assert asyncio.run(main()).waited == 0


def test_a_cancelled_waiter_does_not_block_the_queue():
    async def main():
        t = Turn(asyncio.get_running_loop())
        log: list[str] = []
        hold = asyncio.create_task(_worker(t, "a", log, rounds=3))
        await asyncio.sleep(0)
        b = asyncio.create_task(_worker(t, "b", log))
        c = asyncio.create_task(_worker(t, "c", log))
        await asyncio.sleep(0)
        b.cancel()
        await asyncio.gather(hold, c)
        with pytest.raises(asyncio.CancelledError):
            await b
        await asyncio.sleep(0)
        return t, log

    t, log = asyncio.run(main())
    assert log == ["a+", "a-", "c+", "c-"] and not t.busy


def test_a_waiter_cancelled_after_being_handed_the_turn_hands_it_on():
    async def main():
        t = Turn(asyncio.get_running_loop())
        log: list[str] = []
        await t.__aenter__()
        b = asyncio.create_task(_worker(t, "b", log))
        c = asyncio.create_task(_worker(t, "c", log))
        await asyncio.sleep(0)
        assert len(t.waiting) == 2
        await t.__aexit__(None, None, None)  # hands the turn to b, whose wake-up has not run yet
        assert len(t.waiting) == 1
        b.cancel()
        await asyncio.wait_for(c, 5)
        await asyncio.sleep(0)
        return t, log, b

    t, log, b = asyncio.run(main())
    assert b.cancelled() and log == ["c+", "c-"] and not t.busy


def test_each_event_loop_has_its_own_turn():
    async def get():
        return turn(), turn()

    a1, a2 = asyncio.run(get())
    b1, _ = asyncio.run(get())
    assert a1 is a2 and a1 is not b1
