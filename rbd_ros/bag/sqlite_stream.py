"""Reading rosbag2 sqlite3 files in time order with bounded memory.

``ORDER BY timestamp`` over a whole recording makes SQLite sort every row first, so memory
grows with the recording. Reading it a page at a time instead, each page continuing after the
last (timestamp, id) it returned, walks the timestamp index: memory stays one page however
long the recording is."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rosbags.typesys import Stores, get_typestore

PAGE = 50_000


@dataclass
class Connection:
    id: int
    topic: str
    msgtype: str
    msgcount: int = 0


def sqlite_files(path: Path) -> list[Path]:
    """The .db3 files of a bag folder (split bags in order), or the file itself."""
    if path.is_file():
        return [path] if path.suffix == ".db3" else []
    return sorted(path.glob("*.db3"))


class SqliteStream:
    """The part of rosbags' AnyReader the analysis uses, over sqlite3 files, paged."""

    def __init__(self, files: list[Path]) -> None:
        self.files = files
        self.typestore = get_typestore(Stores.ROS2_HUMBLE)
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

    def deserialize(self, raw: bytes, msgtype: str) -> Any:
        return self.typestore.deserialize_cdr(raw, msgtype)

    def close(self) -> None:
        pass
