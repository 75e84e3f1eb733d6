"""Readers of rosbag2 files for what rosbags' AnyReader does not cover.

* :class:`SqliteSource` reads sqlite3 files in time order with bounded memory. ``ORDER BY
  timestamp`` over a whole recording makes SQLite sort every row first, so memory grows with
  the recording; reading a page at a time instead, each page continuing after the last
  (timestamp, id) it returned, walks the timestamp index.
* :class:`McapSource` reads an MCAP front to back, record by record, up to where it is
  damaged. rosbags opens an MCAP through its summary at the end of the file, which a
  recording cut short (power loss, a full disk, a crash) does not have.

Both offer the part of AnyReader the analysis uses: ``connections``, ``messages``,
``deserialize``, ``close``; and :func:`batches` reads any of them (and AnyReader) as
:class:`Batch` es: many messages in one buffer, which is what the analysis works on.
"""

from __future__ import annotations

import itertools
import sqlite3
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from mcap.exceptions import McapError
from mcap.records import Channel, Chunk, Message, Schema
from mcap.stream_reader import StreamReader, breakup_chunk
from numpy.typing import NDArray
from rosbags.typesys import Stores, get_typestore

I64 = NDArray[np.int64]


@dataclass
class Connection:
    id: int
    topic: str
    msgtype: str
    msgcount: int = 0
    offered_qos: str = ""  # the recording's QoS profiles of the topic (YAML), where it has them


def _offsets(lengths: I64) -> I64:
    """Where each message starts in a buffer of messages of these lengths, and the end."""
    return np.concatenate([[0], np.cumsum(lengths)])


@dataclass
class Batch:
    """Messages in time order, in one buffer: message ``k`` is ``data[offsets[k]:offsets[k+1]]``,
    recorded at ``stamp[k]`` (ns) on connection ``conn[k]``."""

    conn: I64
    stamp: I64
    offsets: I64
    data: NDArray[np.uint8]

    @classmethod
    def of(cls, messages: list[tuple[Any, int, bytes]]) -> Batch:
        """From ``(connection, timestamp, raw)`` tuples, as rosbags' readers yield them."""
        lengths = np.fromiter((len(m[2]) for m in messages), np.int64, len(messages))
        return cls(np.fromiter((m[0].id for m in messages), np.int64, len(messages)),
                   np.fromiter((m[1] for m in messages), np.int64, len(messages)),
                   _offsets(lengths),
                   np.frombuffer(b"".join(bytes(m[2]) for m in messages), np.uint8))

    def __len__(self) -> int:
        return len(self.stamp)

    def raw(self, k: int) -> bytes:
        return self.data[self.offsets[k] : self.offsets[k + 1]].tobytes()

    def take(self, index: I64) -> Batch:
        """The messages at ``index`` (in that order)."""
        lengths = np.diff(self.offsets)[index]
        starts = self.offsets[index]
        if len(index) and (np.diff(starts) == lengths[:-1]).all():  # contiguous: a view
            data = self.data[starts[0] : starts[0] + lengths.sum()]
        else:
            data = np.frombuffer(b"".join(self.data[s : s + n].tobytes() for s, n in
                                          zip(starts.tolist(), lengths.tolist(), strict=True)),
                                 np.uint8)
        return Batch(self.conn[index], self.stamp[index], _offsets(lengths), data)


def batches(reader: Any, connections: list[Any], size: int, ordered: bool = True,
            start: int | None = None) -> Iterator[Batch]:
    """The connections' messages in time order, ``size`` at a time, from a :class:`MessageSource`
    that reads batches itself or from any reader with rosbags' ``messages``. ``ordered=False``:
    a caller that only looks at a few messages (the first description, the joint names) may
    have a sqlite3 file's in storage order, which saves checking the order first. ``start``:
    from this recorded time (ns) on."""
    if isinstance(reader, SqliteSource):
        yield from reader.batches(connections, size, ordered, start)
        return
    if start is None:
        it = reader.messages(connections=connections)
    elif isinstance(reader, McapSource):
        it = (m for m in reader.messages(connections) if m[1] >= start)
    else:  # rosbags: from its index
        it = reader.messages(connections=connections, start=start)
    while page := list(itertools.islice(it, size)):
        yield Batch.of(page)


def span(reader: Any, connections: list[Any]) -> tuple[int, int]:
    """The recorded times (ns) of the first and last messages of ``connections`` (rosbags:
    the last of the whole recording)."""
    if isinstance(reader, MessageSource):
        return reader.span(connections)
    first = next(iter(reader.messages(connections=connections)), None)
    return (reader.start_time if first is None else first[1]), int(reader.end_time)


class MessageSource:
    def __init__(self) -> None:
        self.typestore = get_typestore(Stores.ROS2_HUMBLE)
        self.connections: list[Connection] = []

    def deserialize(self, raw: bytes, msgtype: str) -> Any:
        return self.typestore.deserialize_cdr(raw, msgtype)

    def span(self, connections: list[Connection]) -> tuple[int, int]:
        raise NotImplementedError

    def close(self) -> None:
        pass


def sqlite_files(path: Path) -> list[Path]:
    """The .db3 files of a bag folder (split bags in order), or the file itself."""
    if path.is_file():
        return [path] if path.suffix == ".db3" else []
    return sorted(path.glob("*.db3"))


def _recorded_counts(folder: Path) -> dict[tuple[str, str], int] | None:
    """Messages per (topic, type) as the bag's metadata.yaml states them, if it has one."""
    from ruamel.yaml import YAML  # rosbags reads metadata.yaml with it too

    try:
        info = YAML(typ="safe").load((folder / "metadata.yaml").read_text())
        return {(t["topic_metadata"]["name"], t["topic_metadata"]["type"]): t["message_count"]
                for t in info["rosbag2_bagfile_information"]["topics_with_message_count"]}
    except Exception:  # no metadata (a bare .db3, a recording that crashed): count instead
        return None


def _in_time_order(db: sqlite3.Connection) -> bool:
    """Whether the rows of ``messages`` are stored in time order, so that reading them by
    rowid (a sequential scan, about twice as fast as following the timestamp index on a long
    recording) gives time order. Walks the timestamp index, which is small, a page at a time."""
    page, last, prev = 1_000_000, (-(2**63), -(2**63)), -(2**63)
    while True:
        text = db.execute("SELECT group_concat(id) FROM (SELECT id FROM messages WHERE "
                          "(timestamp, id) > (?, ?) ORDER BY timestamp, id LIMIT ?)",
                          (*last, page)).fetchone()[0]
        if text is None:
            return True
        ids = np.fromstring(text, dtype=np.int64, sep=",")
        if ids[0] < prev or (np.diff(ids) < 0).any():
            return False
        prev = int(ids[-1])
        if len(ids) < page:
            return True
        last = (db.execute("SELECT timestamp FROM messages WHERE id = ?", (prev,)).fetchone()[0],
                prev)


class SqliteSource(MessageSource):
    """sqlite3 files, paged."""

    def __init__(self, files: list[Path]) -> None:
        super().__init__()
        self.files = files
        self.in_time_order: dict[Path, bool] = {}  # per file, checked on its first read
        by_topic: dict[tuple[str, str], Connection] = {}
        counts = _recorded_counts(files[0].parent)
        for f in files:
            with sqlite3.connect(f"file:{f}?mode=ro", uri=True) as db:
                for topic, msgtype in db.execute("SELECT name, type FROM topics"):
                    key = (topic, msgtype)
                    by_topic.setdefault(key, Connection(len(by_topic) + 1, topic, msgtype))
                if counts is None:  # no metadata.yaml: count (a full scan of the file)
                    for topic, msgtype, count in db.execute(
                            "SELECT t.name, t.type, COUNT(m.id) FROM topics t "
                            "LEFT JOIN messages m ON m.topic_id = t.id GROUP BY t.id"):
                        by_topic[(topic, msgtype)].msgcount += count
        if counts is not None:
            for key, conn in by_topic.items():
                conn.msgcount = counts.get(key, 0)
        self.connections = list(by_topic.values())

    def span(self, connections: list[Connection]) -> tuple[int, int]:
        wanted = {(c.topic, c.msgtype) for c in connections}
        ends = []
        for f in self.files:
            with sqlite3.connect(f"file:{f}?mode=ro", uri=True) as db:
                ids = [tid for tid, name, typ in db.execute("SELECT id, name, type FROM topics")
                       if (name, typ) in wanted]
                marks = ",".join("?" * len(ids))
                # apart, each walking the timestamp index from its end
                ends += [db.execute(f"SELECT timestamp FROM messages WHERE topic_id IN ({marks}) "
                                    f"ORDER BY timestamp {way} LIMIT 1", ids).fetchone()
                         for way in ("ASC", "DESC")]
        stamps = [e[0] for e in ends if e is not None]
        return (min(stamps), max(stamps)) if stamps else (0, 0)

    def messages(self, connections: list[Connection]) -> Iterator[tuple[Connection, int, bytes]]:
        by_id = {c.id: c for c in connections}
        for b in self.batches(connections, 10_000):
            for k, (cid, stamp) in enumerate(zip(b.conn.tolist(), b.stamp.tolist(), strict=True)):
                yield by_id[cid], stamp, b.raw(k)

    def batches(self, connections: list[Connection], size: int, ordered: bool = True,
                start: int | None = None) -> Iterator[Batch]:
        """The messages in time order (or in storage order: ``ordered=False``), ``size`` at a
        time, from recorded time ``start`` (ns) on if given. SQLite concatenates each
        page's blobs into one, and its stamps, lengths and topics each into one line of text,
        so a page costs a few Python objects instead of a tuple per row."""
        wanted = {(c.topic, c.msgtype): c.id for c in connections}
        for f in self.files:
            with sqlite3.connect(f"file:{f}?mode=ro", uri=True) as db:
                ids = {tid: wanted[(name, typ)] for tid, name, typ in
                       db.execute("SELECT id, name, type FROM topics") if (name, typ) in wanted}
                if not ids:
                    continue
                conn_of = np.zeros(max(ids) + 1, np.int64)
                conn_of[list(ids)] = list(ids.values())
                marks = ",".join("?" * len(ids))
                topic = "group_concat(topic_id)" if len(ids) > 1 else "NULL"
                columns = (f"CAST(group_concat(data, x'') AS BLOB), group_concat(timestamp), "
                           f"group_concat(length(data)), {topic}")
                if ordered and f not in self.in_time_order:
                    self.in_time_order[f] = _in_time_order(db)
                if not ordered or self.in_time_order[f]:
                    pages = _by_rowid(db, columns, marks, ids, size, start)
                else:
                    pages = _by_time(db, columns, marks, ids, size, start)
                for data, stamp, lengths, topics in pages:
                    if ordered and (np.diff(stamp) < 0).any():
                        raise ValueError(f"{f}: SQLite returned a page out of time order")
                    yield Batch(conn_of[np.fromstring(topics, dtype=np.int64, sep=",")]
                                if topics else np.full(len(stamp), ids[next(iter(ids))]),
                                stamp, _offsets(np.fromstring(lengths, dtype=np.int64, sep=",")),
                                np.frombuffer(data, np.uint8))


Page = tuple[bytes, I64, str, str | None]  # the data, stamps, lengths and topics of a page
#: a rowid range is at most this many pages wide: then a page after a sparse stretch holds at
#: most this many times the rows asked for, when the wanted topic turns dense
WIDEST = 8


def _page(db: sqlite3.Connection, query: str, args: tuple[Any, ...]) -> Page | None:
    """One page, its stamps parsed (the pagers and the reader need them); None if empty."""
    data, stamps, lengths, topics = db.execute(query, args).fetchone()
    if stamps is None:
        return None
    return data, np.fromstring(stamps, dtype=np.int64, sep=","), lengths, topics


def _by_rowid(db: sqlite3.Connection, columns: str, marks: str, ids: dict[int, int],
              size: int, start: int | None) -> Iterator[Page]:
    """Pages of a file stored in time order: ranges of rowids, aggregated without a subquery
    (a third faster than ``ORDER BY id LIMIT``). A range is widened where the wanted topics
    are a small part of the rows, so that a page still holds about ``size`` of them."""
    # apart: SQLite finds a lone min() or max() of the rowid at once, but scans for the pair
    low, high = (db.execute(f"SELECT {f}(id) FROM messages").fetchone()[0] for f in ("min", "max"))
    if start is not None:  # the first row at or after it, from the timestamp index
        first = db.execute("SELECT id FROM messages WHERE timestamp >= ? ORDER BY timestamp, id "
                           "LIMIT 1", (start,)).fetchone()
        low = None if first is None else first[0]
    if low is None:
        return
    query = f"SELECT {columns} FROM messages WHERE id >= ? AND id < ? AND topic_id IN ({marks})"
    start, width = low, size
    while start <= high:
        page = _page(db, query, (start, start + width, *ids))
        start += width
        if page is None:
            width = min(width * 2, WIDEST * size)
            continue
        width = max(size, min(WIDEST * size, width * size // len(page[1])))
        yield page


def _by_time(db: sqlite3.Connection, columns: str, marks: str, ids: dict[int, int],
             size: int, start: int | None) -> Iterator[Page]:
    """Pages by the timestamp index, each continuing at the last stamp and skipping the rows
    of it already read (they come in id order)."""
    query = (f"SELECT {columns} FROM (SELECT id, topic_id, timestamp, data FROM messages "
             f"WHERE topic_id IN ({marks}) AND timestamp >= ? ORDER BY timestamp, id "
             f"LIMIT {size} OFFSET ?)")
    last, skip = -(2**63) if start is None else start, 0
    while True:
        page = _page(db, query, (*ids, last, skip))
        if page is None:
            return
        yield page
        stamp = page[1]
        if len(stamp) < size:
            return
        tail = int(np.count_nonzero(stamp == stamp[-1]))
        skip = skip + tail if stamp[-1] == last else tail
        last = int(stamp[-1])


class McapSource(MessageSource):
    """An MCAP, possibly truncated, front to back."""

    def __init__(self, path: Path) -> None:
        super().__init__()
        self.path = path
        self.damage: str | None = None
        conns: dict[int, Connection] = {}
        self.ends: dict[int, tuple[int, int]] = {}  # per channel: first and last recorded ns
        for channel, schema, msg in self._records():
            first, last = self.ends.get(channel.id, (msg.log_time, msg.log_time))
            self.ends[channel.id] = min(first, msg.log_time), max(last, msg.log_time)
            if channel.id not in conns:
                conns[channel.id] = Connection(
                    channel.id, channel.topic, schema.name if schema else "",
                    offered_qos=channel.metadata.get("offered_qos_profiles", ""))
            conns[channel.id].msgcount += 1
        self.connections = list(conns.values())

    def _records(self) -> Iterator[tuple[Channel, Any, Message]]:
        schemas: dict[int, Schema] = {}
        channels: dict[int, Channel] = {}
        with self.path.open("rb") as f:
            try:
                for record in StreamReader(f, skip_magic=False).records:
                    inner = breakup_chunk(record) if isinstance(record, Chunk) else [record]
                    for r in inner:
                        if isinstance(r, Schema):
                            schemas[r.id] = r
                        elif isinstance(r, Channel):
                            channels[r.id] = r
                        elif isinstance(r, Message) and r.channel_id in channels:
                            ch = channels[r.channel_id]
                            yield ch, schemas.get(ch.schema_id), r
            except (McapError, EOFError, ValueError, OSError) as e:
                self.damage = f"{type(e).__name__}: {e}"

    def span(self, connections: list[Connection]) -> tuple[int, int]:
        ends = [self.ends[c.id] for c in connections if c.id in self.ends]
        return (min(e[0] for e in ends), max(e[1] for e in ends)) if ends else (0, 0)

    def messages(self, connections: list[Connection]) -> Iterator[tuple[Connection, int, bytes]]:
        wanted = {c.id: c for c in connections}
        for channel, _, msg in self._records():
            if channel.id in wanted:
                yield wanted[channel.id], msg.log_time, msg.data
