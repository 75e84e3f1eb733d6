"""Paged reading of sqlite3 bags: every wanted message once, in time order, in pages of about
the size asked for, also where the wanted topic is a small part of the rows."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import numpy as np
import pytest
from recordings import TS, description, string
from rosbags.rosbag2 import Writer

from rbd_ros.bag.readers import WIDEST, SqliteSource, _in_time_order, batches


@pytest.mark.parametrize("in_order", [True, False], ids=["by-rowid", "by-timestamp"])
def test_a_rare_topic_among_many(tmp_path: Path, in_order: bool) -> None:
    """10 other messages around each wanted one; pages of 4. Without time order in the file
    (a late message recorded with an early stamp) the timestamp index is used."""
    path = tmp_path / "rec"
    wanted = []
    with Writer(path, version=8) as w:
        rare = w.add_connection("/rare", "std_msgs/msg/String", typestore=TS)
        other = w.add_connection("/other", "std_msgs/msg/String", typestore=TS)
        for k in range(50):
            for j in range(11):
                if j != 5:
                    w.write(other, k * 1000 + j, string("x" * j))
                    continue
                raw = string(f"message {k}")
                w.write(rare, k * 1000 + j, raw)
                wanted.append((k * 1000 + j, raw))
        if not in_order:
            raw = string("late")
            w.write(rare, 7, raw)
            wanted.insert(1, (7, raw))
    db3 = next(path.glob("*.db3"))
    with sqlite3.connect(db3) as db:
        assert _in_time_order(db) == in_order
    stream = SqliteSource([db3])
    conn = [c for c in stream.connections if c.topic == "/rare"]
    pages = list(batches(stream, conn, 4))
    got = [(int(b.stamp[k]), b.raw(k)) for b in pages for k in range(len(b))]
    assert got == sorted(wanted)
    assert all(len(b) <= 4 * WIDEST for b in pages)
    assert np.median([len(b) for b in pages]) >= 2  # the rowid ranges widened to find them


def test_a_description_recorded_late_is_found(tmp_path: Path) -> None:
    """robot_state_publisher started after the driver: the description is row 5,001 of the file,
    found by the storage-order read the analysis uses for it (its ranges widen as they go)."""
    from rbd_ros.bag.recording import recorded_model

    path = tmp_path / "rec"
    with Writer(path, version=8) as w:
        other = w.add_connection("/other", "std_msgs/msg/String", typestore=TS)
        desc = w.add_connection("/robot_description", "std_msgs/msg/String", typestore=TS)
        for k in range(5000):
            w.write(other, k, string("x"))
        w.write(desc, 5000, description())
    model = recorded_model(SqliteSource([next(path.glob("*.db3"))]), None)
    assert model.state_joint_names == [f"joint{k}" for k in range(1, 8)]
