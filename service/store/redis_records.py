"""``RecordCache``: the map records a service read from Redis, kept exact by events.

``RedisStore.record`` is every request's lookup: it answers from this copy without a
round trip while the copy is known to be exact, and from Redis otherwise.
"""

import logging
import threading
from collections.abc import Callable
from typing import Final

import redis

from service.store.records import MapRecord

log = logging.getLogger("gridpath.store")

#: Seconds the record events listener waits for a message before it looks at its stop
#: flag; and between attempts to subscribe again after the connection broke.
EVENTS_POLL_S: Final = 0.25
EVENTS_RETRY_S: Final = 0.5
#: Seconds between the listener connection's health checks (a half-open connection
#: is noticed), and the longest wait for the listener to stop.
EVENTS_HEALTH_S: Final = 5
EVENTS_CLOSE_S: Final = 5.0


class RecordCache:
    """The records this service has read, kept exact by the ``<p>:events`` channel:
    every delete and every record change (a compaction, a rebuilt island table) is
    published there, and a thread of this service listens. Records are kept only
    while it listens: when the subscription breaks (Redis restarting) the copy is
    dropped, and lookups go to Redis until it is back."""

    def __init__(self, url: str, channel: str, *, timeout: float,
                 on_change: Callable[[str], None], on_restart: Callable[[], None]
                 ) -> None:  # fmt: skip
        self._client = redis.Redis.from_url(url, socket_timeout=timeout,
                                            socket_connect_timeout=timeout,
                                            health_check_interval=EVENTS_HEALTH_S)  # fmt: skip
        self._channel = channel
        self._on_change = on_change
        self._on_restart = on_restart
        #: The server's run id when last subscribed: a new one is a restarted server.
        self._run_id: str | None = None
        self._lock = threading.Lock()
        self._records: dict[str, MapRecord] = {}
        #: Bumped by every drop: a record read before a drop is not kept after it.
        self._generation = 0
        self._listening = False
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._listen, name="gridpath-records",
                                        daemon=True)  # fmt: skip
        self._thread.start()

    def get(self, map_id: str) -> MapRecord | None:
        with self._lock:
            return self._records.get(map_id)

    def generation(self) -> int:
        with self._lock:
            return self._generation

    def put(self, record: MapRecord, generation: int) -> None:
        """Keep ``record``, read when :meth:`generation` was ``generation``, unless a
        drop came since (it may be stale) or no one listens for changes."""
        with self._lock:
            if self._listening and generation == self._generation:
                self._records[record.id] = record

    def drop(self, map_id: str | None = None) -> None:
        """Forget one record (None: all)."""
        with self._lock:
            self._generation += 1
            if map_id is None:
                self._records.clear()
            else:
                self._records.pop(map_id, None)

    def _check_run_id(self) -> None:
        """After each (re)subscription: call ``on_restart`` if the server is not the
        one subscribed to before."""
        run_id = str(self._client.info("server").get("run_id", ""))
        if self._run_id is not None and run_id != self._run_id:
            self._on_restart()
        self._run_id = run_id

    def close(self) -> None:
        self._stop.set()
        self._thread.join(timeout=EVENTS_CLOSE_S)  # a daemon: it cannot hold the exit
        self._client.close()

    def _listen(self) -> None:
        while not self._stop.is_set():
            pubsub = self._client.pubsub()  # type: ignore[no-untyped-call]
            try:
                pubsub.subscribe(self._channel)
                while not self._stop.is_set():
                    message = pubsub.get_message(timeout=EVENTS_POLL_S)
                    if message is None:
                        continue
                    if message["type"] == "subscribe":
                        # From now on nothing is missed; what was kept before may have
                        # missed events (redis-py resubscribes by itself after a
                        # broken connection, and confirms again): start afresh.
                        with self._lock:
                            self._records.clear()
                            self._generation += 1
                            self._listening = True
                        self._check_run_id()
                    elif message["type"] == "message":
                        _, _, map_id = as_text(message["data"]).partition(" ")
                        self.drop(map_id)
                        self._on_change(map_id)
            except (redis.ConnectionError, redis.TimeoutError, OSError) as exc:
                log.warning("record events: %s; looking records up in Redis meanwhile", exc)
            finally:
                with self._lock:
                    self._listening = False
                self.drop()
                pubsub.close()
            self._stop.wait(EVENTS_RETRY_S)


def as_text(value: object) -> str:
    """A value as read (bytes: no ``decode_responses``) as text."""
    return value.decode() if isinstance(value, bytes) else str(value)
