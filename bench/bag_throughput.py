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

from rbd_ros.bag.synthetic import generate

ROOT = Path(__file__).resolve().parents[1]

ANALYZE = """
import json, os, sys, threading, time
from pathlib import Path
from rbd_ros.bag.analyze import AnalyzeOptions, analyze

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
outputs = AnalyzeOptions.outputs + tuple(sys.argv[3:])
s = analyze([Path(sys.argv[1])], Path(sys.argv[2]), AnalyzeOptions(progress=False, outputs=outputs))
print(json.dumps({"seconds": time.perf_counter() - t, "messages": s.messages,
                  "peak_mb": hwm("self"), "writer_mb": writer["mb"]}))
"""


READ_ONLY = """
import json, sys, time
from pathlib import Path
from rbd_ros.bag.recording import open_reader
from rbd_ros.bag.decode import decode
from rbd_ros.bag.readers import batches
t = time.perf_counter()
reader, _ = open_reader([Path(sys.argv[1])])
n = 0
for b in batches(reader, [c for c in reader.connections if c.topic == "/joint_states"], 10_000):
    n += sum(len(g.index) for g in decode(b.data, b.offsets))
print(json.dumps({"seconds": time.perf_counter() - t, "messages": n}))
"""


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
    # the kernels compiled as an install leaves them (a source edited since would otherwise
    # make the first analysis pay the compilation)
    subprocess.run([sys.executable, "-m", "rbd_ros.app.numba_cache"], check=True, cwd=ROOT,
                   capture_output=True)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for m, extra in sorted({(messages // 10, ()), (messages // 3, ()),
                                (messages // 3, ("csv",)), (messages, ())}):
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
        short = Path(tmp) / f"rec{messages // 10}"
        r = subprocess.run([sys.executable, "-c", READ_ONLY, str(short)], capture_output=True,
                           text=True, check=True, cwd=ROOT)
        reading = json.loads(r.stdout.strip().splitlines()[-1])
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
    rate = reading["messages"] / reading["seconds"]
    print(f"reading and decoding alone, nothing computed or written, {reading['messages']:,d} "
          f"joint states: {reading['seconds']:.2f} s, {rate:,.0f} per second = "
          f"{rate / base:.1f}x the straightforward path (what no analysis can skip)")


if __name__ == "__main__":
    bag_throughput(float(sys.argv[1]) if len(sys.argv) > 1 else 60.0)
