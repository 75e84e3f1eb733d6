"""Readers of rosbag2 files for what rosbags' AnyReader does not cover.

* :class:`SqliteStream` reads sqlite3 files in time order with bounded memory. ``ORDER BY
  timestamp`` over a whole recording makes SQLite sort every row first, so memory grows with
  the recording; reading a page at a time instead, each page continuing after the last
  (timestamp, id) it returned, walks the timestamp index.
* :class:`McapStream` reads an MCAP front to back, record by record, up to where it is
  damaged. rosbags opens an MCAP through its summary at the end of the file, which a
  recording cut short (power loss, a full disk, a crash) does not have.

Both offer the part of AnyReader the analysis uses: ``connections``, ``messages``,
``deserialize``, ``close``.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mcap.exceptions import McapError
from mcap.records import Channel, Chunk, Message, Schema
from mcap.stream_reader import StreamReader, breakup_chunk
from rosbags.typesys import Stores, get_typestore

PAGE = 50_000


@dataclass
class Connection:
    id: int
    topic: str
    msgtype: str
    msgcount: int = 0


class Stream:
    def __init__(self) -> None:
        self.typestore = get_typestore(Stores.ROS2_HUMBLE)
        self.connections: list[Connection] = []

    def deserialize(self, raw: bytes, msgtype: str) -> Any:
        return self.typestore.deserialize_cdr(raw, msgtype)

    def close(self) -> None:
        pass


def sqlite_files(path: Path) -> list[Path]:
    """The .db3 files of a bag folder (split bags in order), or the file itself."""
    if path.is_file():
        return [path] if path.suffix == ".db3" else []
    return sorted(path.glob("*.db3"))


class SqliteStream(Stream):
    """sqlite3 files, paged."""

    def __init__(self, files: list[Path]) -> None:
        super().__init__()
        self.files = files
        by_topic: dict[tuple[str, str], Connection] = {}
        for f in files:
            with sqlite3.connect(f"file:{f}?mode=ro", uri=True) as db:
                for topic, msgtype, count in db.execute(
                        "SELECT t.name, t.type, COUNT(m.id) FROM topics t "
                        "LEFT JOIN messages m ON m.topic_id = t.id GROUP BY t.id"):
                    key = (topic, msgtype)
                    conn = by_topic.setdefault(key, Connection(len(by_topic) + 1, topic, msgtype))
                    conn.msgcount += count
        self.connections = list(by_topic.values())

    def messages(self, connections: list[Connection]) -> Iterator[tuple[Connection, int, bytes]]:
        for page in self.pages(connections):
            yield from page

    def pages(self, connections: list[Connection]
              ) -> Iterator[list[tuple[Connection, int, bytes]]]:
        """The messages in time order, a page (a list) at a time."""
        wanted = {(c.topic, c.msgtype): c for c in connections}
        for f in self.files:
            with sqlite3.connect(f"file:{f}?mode=ro", uri=True) as db:
                ids = {tid: wanted[(name, typ)] for tid, name, typ in
                       db.execute("SELECT id, name, type FROM topics") if (name, typ) in wanted}
                if not ids:
                    continue
                marks = ",".join("?" * len(ids))
                query = (f"SELECT topic_id, timestamp, id, data FROM messages WHERE topic_id IN "
                         f"({marks}) AND (timestamp, id) > (?, ?) ORDER BY timestamp, id "
                         f"LIMIT {PAGE}")
                last = (-(2**63), -(2**63))
                while True:
                    rows = db.execute(query, (*ids, *last)).fetchall()
                    yield [(ids[tid], stamp, data) for tid, stamp, _, data in rows]
                    if len(rows) < PAGE:
                        break
                    last = (rows[-1][1], rows[-1][2])


class McapStream(Stream):
    """An MCAP, possibly truncated, front to back."""

    def __init__(self, path: Path) -> None:
        super().__init__()
        self.path = path
        self.damage: str | None = None
        conns: dict[int, Connection] = {}
        for channel, schema, _ in self._records():
            if channel.id not in conns:
                conns[channel.id] = Connection(channel.id, channel.topic,
                                               schema.name if schema else "")
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

    def messages(self, connections: list[Connection]) -> Iterator[tuple[Connection, int, bytes]]:
        wanted = {c.id: c for c in connections}
        for channel, _, msg in self._records():
            if channel.id in wanted:
                yield wanted[channel.id], msg.log_time, msg.data
