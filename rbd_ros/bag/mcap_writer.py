"""An MCAP file writer for many messages at a time (the analyses' outputs).

Each call to :meth:`McapWriter.write_records` writes one chunk holding one channel's messages,
records (of one size, or each at its offset) that the caller builds in one buffer. The
file follows the MCAP specification (https://mcap.dev/spec): header, schemas and channels,
chunks with message indexes, then a summary (schemas, channels, statistics, chunk indexes)
and the footer, so indexed readers (rosbags, Foxglove, PlotJuggler, ros2 bag) open it."""

from __future__ import annotations

import struct
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from .sink import Sink

MAGIC = b"\x89MCAP0\r\n"
OP_HEADER, OP_FOOTER, OP_SCHEMA, OP_CHANNEL, OP_MESSAGE = 0x01, 0x02, 0x03, 0x04, 0x05
OP_CHUNK, OP_MESSAGE_INDEX, OP_CHUNK_INDEX, OP_STATISTICS, OP_DATA_END = (
    0x06, 0x07, 0x08, 0x0B, 0x0F)


#: a message record: opcode (1), record length (8), channel id (2), sequence (4), log time (8),
#: publish time (8), then the message's bytes
MESSAGE_CHANNEL, MESSAGE_LOG_TIME, MESSAGE_PUBLISH_TIME, MESSAGE_DATA = 9, 15, 23, 31


def _str(s: str) -> bytes:
    b = s.encode()
    return struct.pack("<I", len(b)) + b


def _record(op: int, body: bytes) -> bytes:
    return struct.pack("<BQ", op, len(body)) + body


class McapWriter:
    def __init__(self, path: Path, profile: str = "ros2") -> None:
        self.f = Sink(path)
        self.f.write(MAGIC)
        self.f.write(_record(OP_HEADER, _str(profile) + _str("rbd_ros")))
        self.schemas: list[bytes] = []
        self.channels: list[bytes] = []
        self.chunk_indexes: list[bytes] = []
        self.counts: dict[int, int] = {}
        self.start, self.end = 2**64 - 1, 0
        import zstandard  # comes with the mcap package

        # level -3: a tenth bigger than level 1 on these messages, in half the time
        self.zstd = zstandard.ZstdCompressor(level=-3)

    def add_schema(self, schema_id: int, name: str, text: str) -> None:
        rec = _record(OP_SCHEMA, struct.pack("<H", schema_id) + _str(name) + _str("ros2msg")
                      + _str(text))
        self.schemas.append(rec)
        self.f.write(rec)

    def add_channel(self, channel_id: int, schema_id: int, topic: str) -> None:
        rec = _record(OP_CHANNEL, struct.pack("<HH", channel_id, schema_id) + _str(topic)
                      + _str("cdr") + struct.pack("<I", 0))
        self.channels.append(rec)
        self.counts[channel_id] = 0
        self.f.write(rec)

    @staticmethod
    def message_record(channel_id: int, data: bytes) -> NDArray[np.uint8]:
        """A message record of ``data`` with zero times and sequence (fields at the
        ``MESSAGE_*`` offsets)."""
        head = struct.pack("<BQHIQQ", OP_MESSAGE, MESSAGE_DATA - 9 + len(data), channel_id, 0,
                           0, 0)
        return np.frombuffer(head + data, dtype=np.uint8)

    def write_records(self, channel_id: int, log_time: NDArray[np.int64], records: Any,
                      width: int = 0, starts: NDArray[np.uint64] | None = None) -> None:
        """One chunk of a channel's message records (built by the caller, in time order; each
        ``width`` bytes, or each at its offset in ``starts``): compressed, then its message
        index and chunk index."""
        n = len(log_time)
        if n == 0:
            return
        start, end = int(log_time.min()), int(log_time.max())
        compression, payload = "zstd", self.zstd.compress(records)
        chunk_start = self.f.tell()
        head = (struct.pack("<QQQI", start, end, len(records), 0) + _str(compression)
                + struct.pack("<Q", len(payload)))
        self.f.write(struct.pack("<BQ", OP_CHUNK, len(head) + len(payload)) + head)
        self.f.write(payload)
        chunk_length = self.f.tell() - chunk_start
        # the message index: (log time, offset in the uncompressed records) per message
        pairs = np.empty((n, 2), dtype="<u8")
        pairs[:, 0] = log_time
        pairs[:, 1] = np.arange(n, dtype=np.uint64) * width if starts is None else starts
        entries = pairs.tobytes()
        index_start = self.f.tell()
        self.f.write(_record(OP_MESSAGE_INDEX, struct.pack("<HI", channel_id, len(entries))
                             + entries))
        index_length = self.f.tell() - index_start
        offsets = struct.pack("<HQ", channel_id, index_start)
        self.chunk_indexes.append(_record(OP_CHUNK_INDEX, struct.pack(
            "<QQQQ", start, end, chunk_start, chunk_length) + struct.pack("<I", len(offsets))
            + offsets + struct.pack("<Q", index_length) + _str(compression)
            + struct.pack("<QQ", len(payload), len(records))))
        self.counts[channel_id] += n
        self.start, self.end = min(self.start, start), max(self.end, end)

    def close(self) -> None:
        f = self.f
        f.write(_record(OP_DATA_END, struct.pack("<I", 0)))
        summary_start = f.tell()
        for rec in (*self.schemas, *self.channels):
            f.write(rec)
        counts = b"".join(struct.pack("<HQ", c, n) for c, n in self.counts.items())
        total = sum(self.counts.values())
        f.write(_record(OP_STATISTICS, struct.pack(
            "<QHIIII", total, len(self.schemas), len(self.channels), 0, 0,
            len(self.chunk_indexes)) + struct.pack("<QQ", self.start if total else 0, self.end)
            + struct.pack("<I", len(counts)) + counts))
        for rec in self.chunk_indexes:
            f.write(rec)
        f.write(_record(OP_FOOTER, struct.pack("<QQI", summary_start, 0, 0)))
        f.write(MAGIC)
        f.close()
