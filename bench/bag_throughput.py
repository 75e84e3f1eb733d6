"""Throughput of ``rbd-ros analyze`` on a generated recording of the bundled 7-joint arm at
1 kHz, beside the straightforward path (rosbags deserialisation + Pinocchio per sample), and
its peak memory for two recording lengths."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]

ANALYZE = """
import json, os, sys, threading, time
from pathlib import Path
from rbd_ros.bag.analyze import Options, analyze

def hwm(pid):  # the peak resident memory of a process since its exec, in MB (VmHWM: unlike
    try:       # ru_maxrss, it does not start from the parent's size at the fork)
        for line in open(f"/proc/{pid}/status"):
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0

writer = {"mb": 0.0}
def watch():  # the writer process' peak, read until it ends
    while True:
        for pid in open(f"/proc/{os.getpid()}/task/{os.getpid()}/children").read().split():
            writer["mb"] = max(writer["mb"], hwm(pid))
        time.sleep(0.05)
threading.Thread(target=watch, daemon=True).start()
t = time.perf_counter()
outputs = Options.outputs + tuple(sys.argv[3:])
s = analyze([Path(sys.argv[1])], Path(sys.argv[2]), Options(progress=False, outputs=outputs))
print(json.dumps({"seconds": time.perf_counter() - t, "messages": s.messages,
                  "peak_mb": hwm("self"), "writer_mb": writer["mb"]}))
"""


def generate(path: Path, messages: int, rate: float = 1000.0) -> None:
    """A recording of the bundled arm: sinusoidal joints, efforts, the robot_description."""
    from rosbags.rosbag2 import Writer
    from rosbags.typesys import Stores, get_typestore

    from rbd_ros.bag.cdr import layout
    from rbd_ros.robots import ARM

    ts = get_typestore(Stores.ROS2_HUMBLE)
    names = [f"joint{k}" for k in range(1, 8)]
    msg = ts.types["sensor_msgs/msg/JointState"](
        header=ts.types["std_msgs/msg/Header"](
            stamp=ts.types["builtin_interfaces/msg/Time"](sec=0, nanosec=0), frame_id=""),
        name=names, position=np.zeros(7), velocity=np.zeros(7), effort=np.zeros(7))
    raw = bytes(ts.serialize_cdr(msg, "sensor_msgs/msg/JointState"))
    lay = layout(raw)
    assert lay is not None
    template = np.frombuffer(raw, dtype=np.uint8)
    w = 2 * np.pi * np.linspace(0.2, 0.8, 7)
    with Writer(path, version=8) as writer:
        desc = writer.add_connection("/robot_description", "std_msgs/msg/String", typestore=ts)
        js = writer.add_connection("/joint_states", "sensor_msgs/msg/JointState", typestore=ts)
        writer.write(desc, 0, ts.serialize_cdr(ts.types["std_msgs/msg/String"](
            data=ARM.read_text()), "std_msgs/msg/String"))
        chunk = 100_000
        for start in range(0, messages, chunk):
            k = np.arange(start, min(start + chunk, messages))
            t = 1_000_000_000 + k / rate
            q = 0.5 * np.sin(w * t[:, None])
            v = 0.5 * w * np.cos(w * t[:, None])
            e = 10 * np.sin(w * t[:, None] + 0.3)
            rows = np.tile(template, (k.size, 1))
            sec = np.floor(t).astype(np.int64)
            nsec = np.rint((t - sec) * 1e9).astype(np.int64)
            rows[:, 4:8] = sec.astype("<i4")[:, None].view(np.uint8)
            rows[:, 8:12] = nsec.astype("<u4")[:, None].view(np.uint8)
            for (off, count), x in zip(lay.fields, (q, v, e), strict=True):
                rows[:, off : off + 8 * count] = np.ascontiguousarray(x, "<f8").view(np.uint8)
            for ns, row in zip((sec * 1_000_000_000 + nsec).tolist(), rows, strict=True):
                writer.write(js, ns, row.tobytes())


def straightforward(path: Path, limit: int) -> float:
    """Messages per second of rosbags deserialisation + Pinocchio RNEA and gravity per sample."""
    import pinocchio as pin
    from rosbags.highlevel import AnyReader

    from rbd_ros.robots import ARM

    pm = pin.buildModelFromUrdf(str(ARM))
    pd = pm.createData()
    prev = None
    n = 0
    t0 = time.perf_counter()
    with AnyReader([path]) as reader:
        conns = [c for c in reader.connections if c.topic == "/joint_states"]
        for conn, _, raw in reader.messages(connections=conns):
            msg: Any = reader.deserialize(raw, conn.msgtype)
            stamp = msg.header.stamp.sec + 1e-9 * msg.header.stamp.nanosec
            q, v = np.asarray(msg.position), np.asarray(msg.velocity)
            a = np.zeros(7) if prev is None else (v - prev[1]) / (stamp - prev[0])
            pin.rnea(pm, pd, q, v, a)
            pin.computeGeneralizedGravity(pm, pd, q)
            prev = (stamp, v)
            n += 1
            if n >= limit:
                break
    return n / (time.perf_counter() - t0)


def bag_throughput(minutes: float) -> None:
    messages = int(minutes * 60_000)
    print(f"\n## rbd-ros analyze on a generated {minutes:g}-minute 1 kHz recording of the "
          f"7-joint arm ({messages:,} joint states); default outputs: MCAP, Parquet, PNG, "
          "summary")
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for m, extra in sorted({(messages // 3, ()), (messages // 3, ("csv",)),
                                (messages, ())}):
            bag = Path(tmp) / f"rec{m}"
            gen = 0.0
            if not bag.exists():
                t = time.perf_counter()
                generate(bag, m)
                os.sync()  # a recording is on disk before it is analysed: no write-back now
                gen = time.perf_counter() - t
            out = Path(tmp) / "o"
            r = subprocess.run([sys.executable, "-c", ANALYZE, str(bag), str(out), *extra],
                               capture_output=True, text=True, check=True, cwd=ROOT)
            shutil.rmtree(out)  # the outputs of an hour are gigabytes
            rows.append((m, extra, json.loads(r.stdout.strip().splitlines()[-1]), gen))
        base = straightforward(Path(tmp) / f"rec{messages}", min(messages, 100_000))
    print(f"{'joint states':>14} {'outputs':>10} {'analyze (s)':>12} {'per second':>12} "
          f"{'peak MB (+ writer)':>18} {'vs straightforward':>19}   (recording written in)")
    for m, extra, r, gen in rows:
        rate = r["messages"] / r["seconds"]
        print(f"{m:14,d} {'+ CSV' if extra else 'default':>10} {r['seconds']:12.1f} "
              f"{rate:12,.0f} {r['peak_mb']:8.0f} (+ {r['writer_mb']:4.0f}) "
              f"{rate / base:18.1f}x   ({gen:.0f} s)")
    print(f"straightforward path (rosbags deserialise + Pinocchio per sample, on the longest "
          f"recording): {base:,.0f} joint states per second")


if __name__ == "__main__":
    bag_throughput(float(sys.argv[1]) if len(sys.argv) > 1 else 60.0)
