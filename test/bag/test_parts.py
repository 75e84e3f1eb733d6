"""One recording analysed in parts (as Dask workers do with a long one) and reduced: every
output byte-identical to the analysis of the whole in one process."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from recordings import EMPTY, NAMES, TS, description, float_array, joint_state
from rosbags.rosbag2 import StoragePlugin, Writer

from rbd_ros.bag.analyze import AnalyzeOptions, analyze
from rbd_ros.bag.parts import analyze_part, parts_for, reduce_parts


def _recording(path: Path, n: int, velocities: bool = True,
               plugin: StoragePlugin = StoragePlugin.SQLITE3) -> Path:
    """Joint states at 1 kHz (4 kHz for a third of them: blocks of recorded time that hold
    more than a chunk; every 7th naming joints 1-3 only, a few cut short, stamps a little
    irregular), commands every 10th (a few cut short), the description at t = 0."""
    rng = np.random.default_rng(5)
    w = 2 * np.pi * np.linspace(0.2, 0.9, 7)
    with Writer(path, version=8, storage_plugin=plugin) as bag:
        desc = bag.add_connection("/robot_description", "std_msgs/msg/String", typestore=TS)
        js = bag.add_connection("/joint_states", "sensor_msgs/msg/JointState", typestore=TS)
        cmd = bag.add_connection("/effort_commands", "std_msgs/msg/Float64MultiArray",
                                 typestore=TS)
        bag.write(desc, 0, description())
        step = np.where((np.arange(n) > n // 3) & (np.arange(n) < 2 * n // 3), 250_000, 10**6)
        stamps = 50 * 10**9 + np.cumsum(step) + rng.integers(0, 200_000, n) * step // 10**6
        for k, ns in enumerate(stamps.tolist()):
            t = ns * 1e-9
            joints = slice(0, 3) if k % 7 == 3 else slice(0, 7)
            q = 0.5 * np.sin(w * t)
            raw = joint_state(ns, NAMES[joints], q[joints],
                              (0.5 * w * np.cos(w * t))[joints] if velocities else EMPTY,
                              (10 * np.sin(w * t + 0.3))[joints])
            bag.write(js, ns, raw[:40] if k % 4001 == 17 else raw)
            if k % 10 == 0:
                raw = float_array(np.sin(w * t + 1.0))
                bag.write(cmd, ns - 1, raw[:30] if k % 5000 == 2500 else raw)
    return path


def _same_outputs(a: Path, b: Path) -> None:
    files = sorted(p.name for p in a.iterdir())
    assert files == sorted(p.name for p in b.iterdir())
    assert {"analysis.parquet", "analysis.mcap", "joint1.png", "summary.txt"} <= set(files)
    for name in files:
        x, y = (a / name).read_bytes(), (b / name).read_bytes()
        if name == "summary.txt":  # its first line says how long it took
            x, y = x.split(b"\n", 1)[1], y.split(b"\n", 1)[1]
        assert x == y, name


OPTS = AnalyzeOptions(chunk=1000, progress=False, command_topic="/effort_commands",
                      command_joints=NAMES)


@pytest.mark.parametrize(("velocities", "plugin"), [
    (True, StoragePlugin.SQLITE3), (True, StoragePlugin.MCAP),
    (False, StoragePlugin.SQLITE3)])  # no velocities: each part reads from the start
def test_parts_reduce_to_the_outputs_of_the_whole(tmp_path: Path, velocities: bool,
                                                  plugin: StoragePlugin) -> None:
    bag = _recording(tmp_path / "rec", 24_000, velocities, plugin)
    whole = analyze([bag], tmp_path / "whole", OPTS)
    text = (tmp_path / "whole" / "summary.txt").read_text()
    assert "6 unreadable joint_states messages skipped" in text, text
    assert "unreadable command messages skipped (no command in force from them): 5" in text
    assert whole.messages == 24_000 - 6
    for count in (2, 5):
        parts = [analyze_part([bag], tmp_path / f"parts{count}" / str(k), OPTS, k, count)
                 for k in range(count)]
        assert sum(p.states for p in parts) == 24_000
        summary = reduce_parts([bag], tmp_path / f"reduced{count}", OPTS, parts)
        assert summary.messages == whole.messages
        _same_outputs(tmp_path / "whole", tmp_path / f"reduced{count}")
        assert not any((tmp_path / f"parts{count}" / str(k)).exists() for k in range(count))


def test_which_recordings_are_cut(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import rbd_ros.bag.parts as parts_module

    monkeypatch.setattr(parts_module, "SPLIT_FROM", 10_000)
    bag = _recording(tmp_path / "rec", 12_000)
    assert parts_for([bag], OPTS, 1) == 1  # one worker
    assert parts_for([bag], OPTS, 2) == 2
    assert parts_for([bag], OPTS, 64) == 3  # at least four blocks a part
    monkeypatch.setattr(parts_module, "SPLIT_FROM", 20_000)
    assert parts_for([bag], OPTS, 2) == 1  # short: whole
    monkeypatch.setattr(parts_module, "SPLIT_FROM", 10_000)
    no_v = _recording(tmp_path / "no_v", 12_000, velocities=False)
    assert parts_for([no_v], OPTS, 2) == 1  # every part would have to read from the start


def test_a_long_recording_is_cut_across_dask_workers_and_a_lost_worker_is_said(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A real cluster of two worker processes (with nannies, as `dask worker` starts them):
    the recording cut in two parts, reduced into the outputs of one process; then again with
    the worker of a running part killed: its part runs again elsewhere, which is said, and
    the outputs are still the same."""
    import os
    import signal
    import time

    from distributed import Client, LocalCluster

    import rbd_ros.bag.parts as parts_module
    from rbd_ros.bag.fleet import EVENT, analyze_fleet

    monkeypatch.setattr(parts_module, "SPLIT_FROM", 10_000)  # decided here, by the client
    bag = _recording(tmp_path / "rec", 24_000)
    analyze([bag], tmp_path / "whole", OPTS)
    with LocalCluster(n_workers=2, threads_per_worker=1, host="127.0.0.1",  # type: ignore[no-untyped-call]
                      dashboard_address="127.0.0.1:0", processes=True) as cluster:
        said: list[str] = []
        results = analyze_fleet([(bag, "rec")], tmp_path / "dask", OPTS,
                                scheduler=cluster.scheduler_address, log=said.append)
        assert results[0].ok, results[0].error
        _same_outputs(tmp_path / "whole", tmp_path / "dask" / "rec")
        assert "rec: cut into 2 parts by recorded time, one task each" in said, said
        assert {"rec: part 1 of 2 done", "rec: part 2 of 2 done"} <= set(said), said
        assert [p.name for p in (tmp_path / "dask" / "rec").iterdir()
                if p.name.startswith(".rbd-parts")] == []

        # again, killing the worker of the first part that starts
        with Client(cluster.scheduler_address) as client:  # type: ignore[no-untyped-call]
            pids = client.run(os.getpid)
            killed: list[str] = []

            def kill_first_part() -> None:
                end = time.monotonic() + 60
                while time.monotonic() < end and not killed:
                    for _, e in client.get_events(EVENT)[len(seen):]:  # this run's
                        if e["part"] >= 0 and not killed:
                            os.kill(pids[e["worker"]], signal.SIGKILL)
                            killed.append(e["worker"])
                    time.sleep(0.01)

            seen = [e for _, e in client.get_events(EVENT)]  # the first run's
            import threading

            killer = threading.Thread(target=kill_first_part)
            killer.start()
            said.clear()
            results = analyze_fleet([(bag, "rec")], tmp_path / "dask2", OPTS,
                                    scheduler=cluster.scheduler_address, log=said.append)
            killer.join()
    assert killed, "no part started"
    assert results[0].ok, results[0].error
    assert any(f"its worker {killed[0]} was lost; the task runs again on" in s for s in said), \
        said
    _same_outputs(tmp_path / "whole", tmp_path / "dask2" / "rec")
