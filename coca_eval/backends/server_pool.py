"""Requests spread over several servers, each with a bound on what it has in flight.

The openai backend hands a pool the rows of one call (a batch of windows, the prompts of a passkey
cell) and a function that sends some of them to one server. The pool cuts the rows into contiguous
pieces, deals them to the servers in turn (each server has its own ``max_concurrent`` worker
threads, so no server sees more requests at once) and gives the answers back in row order. Every row
is answered by exactly one request that holds only independent prompts, so which server answered
changes no number: the results equal a single server's.

Dealing in turn rather than letting idle servers take work keeps the spread predictable (every server
gets a share, which a slow server's run can be checked against); the turn carries over from call to
call, so even one row per call (``--batch-size 1``) alternates servers. The first failure anywhere,
already retried by the client, cancels the pieces not yet started and ends the call with its error.

While a call waits on requests and none comes back for ``HEARTBEAT_S`` seconds, a line names the
server whose request has been out longest and for how long: a hung server is seen while it is hung,
not only once its ``--request-timeout`` and retries run out.
"""

from __future__ import annotations

import queue
import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, wait
from typing import Generic, TypeVar

Server = TypeVar("Server")
Answer = TypeVar("Answer")
HEARTBEAT_S = 30.0  # as often as the progress's own plain lines (coca_eval.progress.PLAIN_INTERVAL_S)


def pieces(count: int, slots: int, largest: int) -> list[range]:
    """``range(count)`` cut into contiguous pieces: enough to fill ``slots`` requests at once when the
    rows allow it, none longer than ``largest`` (a request the server handles comfortably)."""
    size = max(1, min(largest, -(-count // max(1, slots))))
    return [range(lo, min(lo + size, count)) for lo in range(0, count, size)]


def in_order(futures: Sequence[Future], on_idle: Callable[[], None] | None = None) -> Iterator:
    """The futures' results in their order, each as soon as it and those before it are done; the
    first failure among them, whichever finishes first, is raised at once and cancels the rest.
    ``on_idle`` is called each time ``HEARTBEAT_S`` seconds pass with none of them finishing."""
    waiting = set(futures)
    try:
        for future in futures:
            while not future.done():
                done, waiting = wait(waiting, timeout=HEARTBEAT_S, return_when=FIRST_COMPLETED)
                if not done and on_idle is not None:
                    on_idle()
                for finished in done:
                    if finished.exception() is not None:
                        raise finished.exception()
            yield future.result()
    finally:
        for future in futures:
            future.cancel()  # a no-op on those already running or done


class Workers:
    """``count`` daemon threads working through one server's queue. Unlike ThreadPoolExecutor's
    threads, they never hold up the exit of a run that failed or was interrupted while another
    request was still out (a hung server would otherwise keep the process alive until its timeout)."""

    def __init__(self, count: int, name: str) -> None:
        self.count, self._queue = count, queue.SimpleQueue()
        for i in range(count):
            threading.Thread(target=self._serve, name=f"{name}-{i}", daemon=True).start()

    def submit(self, fn: Callable, *args) -> Future:
        future: Future = Future()
        self._queue.put((future, fn, args))
        return future

    def _serve(self) -> None:
        while (item := self._queue.get()) is not None:
            future, fn, args = item
            if not future.set_running_or_notify_cancel():
                continue  # cancelled while it waited
            try:
                future.set_result(fn(*args))
            except BaseException as exc:  # handed to whoever reads the future
                future.set_exception(exc)

    def stop(self) -> None:
        """Let the threads end once what is queued before now is done or cancelled."""
        for _ in range(self.count):
            self._queue.put(None)


class ServerPool(Generic[Server]):
    """``servers`` (clients, in ``--base-url`` order) behind one thread pool each."""

    def __init__(self, servers: Sequence[Server], max_concurrent: int) -> None:
        if not servers or max_concurrent < 1:
            raise ValueError("a pool needs at least one server and one request in flight per server")
        self.servers, self.max_concurrent = list(servers), max_concurrent
        self._workers: list[Workers] | None = None
        self._turn = 0  # the server that gets the next piece
        self._out: dict[object, tuple[int, float]] = {}  # request -> (server index, when it was sent)
        self._out_lock = threading.Lock()

    def _server_workers(self, index: int) -> Workers:
        if self._workers is None:  # threads start on first use, not when the backend loads
            self._workers = [
                Workers(self.max_concurrent, f"coca-eval-server-{i}") for i in range(len(self.servers))
            ]
        return self._workers[index]

    def map(
        self, send: Callable[[Server, range], list[Answer]], count: int, largest: int
    ) -> Iterator[tuple[range, list[Answer]]]:
        """``(rows, answers)`` for every piece of ``range(count)``, in row order, where ``send(server,
        rows)`` returns one answer per row. Consume it fully (or close it) before the next call."""
        slots = len(self.servers) * self.max_concurrent
        futures, spans = [], pieces(count, slots, largest)
        for rows in spans:
            index = self._turn
            self._turn = (self._turn + 1) % len(self.servers)
            futures.append(self._server_workers(index).submit(self._sent, send, index, rows))
        yield from zip(spans, in_order(futures, self._report_slowest), strict=True)

    def _sent(self, send: Callable[[Server, range], list[Answer]], index: int, rows: range) -> list[Answer]:
        """``send`` to server ``index``, noted as out while it runs (for the waiting line)."""
        request = object()
        with self._out_lock:
            self._out[request] = (index, time.monotonic())
        try:
            return send(self.servers[index], rows)
        finally:
            with self._out_lock:
                del self._out[request]

    def _report_slowest(self) -> None:
        """One line naming the server whose request has waited longest (a server prints as its URL)."""
        with self._out_lock:
            out = list(self._out.values())
        if not out:
            return
        index, since = min(out, key=lambda entry: entry[1])
        waited = time.monotonic() - since
        print(
            f"coca-eval: waiting for server {self.servers[index]}: a request unanswered for {waited:.0f} s",
            file=sys.stderr,
            flush=True,
        )

    def close(self) -> None:
        """Stop every server's threads (the method's cells are done); a later call starts new ones."""
        for workers in self._workers or []:
            workers.stop()
        self._workers = None
