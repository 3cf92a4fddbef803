"""The kit's REST client serves the app on the test's own event loop (campus_mcp.testing.rest).

Litestar's test client ran each request on a loop of its own, in a thread, and blocked the test's
loop until the answer came: an app object shared by both loops (a pool's queue, a lock) could leave
a waiter on one loop that the other woke without running it, and the test hung for good. These
tests hang under that client (pytest-timeout then fails them); under the kit's client they pass.
"""

from __future__ import annotations

import asyncio

import pytest
from campus_mcp.testing import RestClient
from litestar import Litestar, get

BASE_URL = "http://campus.test"


def waiting_app(
    released: asyncio.Event, seen: list[tuple[str, asyncio.AbstractEventLoop]], arrived: asyncio.Event | None = None
) -> Litestar:
    @get("/held")
    async def held() -> str:
        seen.append(("request", asyncio.get_running_loop()))
        if arrived is not None:
            arrived.set()
        await released.wait()
        return "answered"

    def started() -> None:
        seen.append(("startup", asyncio.get_running_loop()))

    def stopped() -> None:
        seen.append(("shutdown", asyncio.get_running_loop()))

    return Litestar([held], on_startup=[started], on_shutdown=[stopped])


async def test_a_request_runs_on_the_tests_loop_while_the_test_goes_on() -> None:
    released, arrived = asyncio.Event(), asyncio.Event()
    seen: list[tuple[str, asyncio.AbstractEventLoop]] = []
    here = asyncio.get_running_loop()
    async with RestClient(waiting_app(released, seen, arrived), base_url=BASE_URL) as client:
        request = asyncio.create_task(client.get("/held"))
        # The request waits in the app for the test: the test's loop must keep running meanwhile.
        async with asyncio.timeout(10):
            await arrived.wait()
        assert not request.done()
        released.set()
        async with asyncio.timeout(10):
            response = await request
    assert (response.status_code, response.text) == (200, "answered")
    assert seen == [("startup", here), ("request", here), ("shutdown", here)]


async def test_the_client_can_be_used_again_and_a_failing_startup_is_raised() -> None:
    released = asyncio.Event()
    released.set()
    seen: list[tuple[str, asyncio.AbstractEventLoop]] = []
    client = RestClient(waiting_app(released, seen), base_url=BASE_URL)
    async with client:
        assert (await client.get("/held")).text == "answered"
    assert [what for what, _ in seen] == ["startup", "request", "shutdown"]

    def refuse() -> None:
        raise RuntimeError("the campus database is not reachable")

    broken = Litestar([], on_startup=[refuse])
    with pytest.raises(RuntimeError, match="not reachable"):
        async with RestClient(broken, base_url=BASE_URL):
            pass
