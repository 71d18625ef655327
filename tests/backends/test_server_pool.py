"""The server pool on its own (no HTTP): pieces, order, the per-server bound, the turn, failures."""

from __future__ import annotations

import threading
import time

import pytest

from coca_eval.backends.server_pool import ServerPool, pieces
from coca_eval.errors import CocaEvalError


class Recorder:
    """A ``send`` that answers each row with (server, row), sleeps a little so pieces overlap, and
    keeps, per server, the rows it got and the most pieces it had in flight at once."""

    def __init__(self, delay: float = 0.02, fail_on: str | None = None) -> None:
        self.delay, self.fail_on = delay, fail_on
        self.rows: dict[str, list[int]] = {}
        self.now: dict[str, int] = {}
        self.peak: dict[str, int] = {}
        self.lock = threading.Lock()

    def __call__(self, server: str, rows: range) -> list[tuple[str, int]]:
        with self.lock:
            self.now[server] = self.now.get(server, 0) + 1
            self.peak[server] = max(self.peak.get(server, 0), self.now[server])
            self.rows.setdefault(server, []).extend(rows)
        time.sleep(self.delay)
        with self.lock:
            self.now[server] -= 1
        if server == self.fail_on:
            raise CocaEvalError(f"server {server} answered 503 on /completions (gave up after 4 attempts)")
        return [(server, row) for row in rows]


def test_pieces_fill_the_slots_and_cover_every_row_once():
    assert pieces(10, 4, 32) == [range(0, 3), range(3, 6), range(6, 9), range(9, 10)]
    assert pieces(1, 8, 32) == [range(0, 1)]
    assert pieces(0, 8, 32) == []
    many = pieces(1000, 2, 32)  # the request size caps a piece
    assert len(many) == 32 and max(map(len, many)) == 32
    assert [row for piece in many for row in piece] == list(range(1000))


def test_answers_come_back_in_row_order_from_every_server():
    send, pool = Recorder(), ServerPool(["a", "b", "c"], max_concurrent=2)
    got = [answer for _, answers in pool.map(send, 40, largest=1) for answer in answers]
    pool.close()
    assert [row for _, row in got] == list(range(40))
    assert [server for server, _ in got[:6]] == ["a", "b", "c", "a", "b", "c"]  # dealt in turn
    assert {server: len(rows) for server, rows in send.rows.items()} == {"a": 14, "b": 13, "c": 13}


def test_no_server_has_more_than_max_concurrent_in_flight():
    """40 one-row pieces on two servers: without the bound each would have 20 at once."""
    send, pool = Recorder(delay=0.05), ServerPool(["a", "b"], max_concurrent=3)
    list(pool.map(send, 40, largest=1))
    pool.close()
    assert send.peak == {"a": 3, "b": 3}


def test_the_turn_carries_over_between_calls():
    """One row per call (``--batch-size 1``) still alternates servers."""
    send, pool = Recorder(delay=0), ServerPool(["a", "b"], max_concurrent=4)
    servers = [next(iter(pool.map(send, 1, largest=32)))[1][0][0] for _ in range(5)]
    pool.close()
    assert servers == ["a", "b", "a", "b", "a"]


def test_a_failing_server_ends_the_call_with_its_error_and_stops_the_rest():
    send, pool = Recorder(delay=0.05, fail_on="b"), ServerPool(["a", "b"], max_concurrent=1)
    with pytest.raises(CocaEvalError, match="server b answered 503"):
        list(pool.map(send, 40, largest=1))
    pool.close()
    assert len(send.rows["a"]) < 20  # the pieces not yet started were cancelled


def test_a_pool_needs_a_server_and_a_slot():
    with pytest.raises(ValueError):
        ServerPool([], 4)
    with pytest.raises(ValueError):
        ServerPool(["a"], 0)
