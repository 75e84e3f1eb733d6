"""Reading an MCAP file front to back, record by record, up to where it is damaged.

rosbags opens an MCAP through its summary at the end of the file, which a recording cut
short (power loss, a full disk, a crash) does not have. This reader needs no summary: it
yields what the file holds up to the first broken record, and says where it stopped."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mcap.exceptions import McapError
from mcap.records import Channel, Chunk, Message, Schema
from mcap.stream_reader import StreamReader, breakup_chunk
from rosbags.typesys import Stores, get_typestore


@dataclass
class Connection:
    id: int
    topic: str
    msgtype: str
    msgcount: int = 0


class McapStream:
    """The part of rosbags' AnyReader the analysis uses, over a possibly truncated MCAP."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.typestore = get_typestore(Stores.ROS2_HUMBLE)
        self.damage: str | None = None
        conns: dict[int, Connection] = {}
        for channel, schema, _ in self._records(count_only=True):
            if channel.id not in conns:
                conns[channel.id] = Connection(channel.id, channel.topic,
                                               schema.name if schema else "")
            conns[channel.id].msgcount += 1
        self.connections = list(conns.values())

    def _records(self, count_only: bool = False) -> Iterator[tuple[Channel, Any, Message]]:
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

    def deserialize(self, raw: bytes, msgtype: str) -> Any:
        return self.typestore.deserialize_cdr(raw, msgtype)

    def close(self) -> None:
        pass
