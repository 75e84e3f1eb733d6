"""Offline analysis of bags written here with rosbags (sqlite3) and mcap-ros2-support (MCAP),
from a known trajectory of the bundled arm whose torques Pinocchio computes."""

from __future__ import annotations

import csv
import re
import subprocess
import sys
from pathlib import Path
from typing import cast

import numpy as np
import pinocchio as pin
import pyarrow.parquet as pq
import pytest
from armrec import (
    BUMP,
    Rec,
    write_mcap,
    write_rosbags,
)
from rosbags.rosbag2 import StoragePlugin, Writer
from rosbags.typesys import Stores, get_typestore
from rosbags.typesys.stores.ros2_humble import sensor_msgs__msg__JointState as BagJointState

from rbd_ros.bag.analyze import AnalyzeOptions, analyze
from rbd_ros.bag.errors import BagError
from rbd_ros.bag.stream import THRESHOLDS_FILE
from rbd_ros.robots import ARM

TS = get_typestore(Stores.ROS2_HUMBLE)
NAMES = [f"joint{k}" for k in range(1, 8)]


def check(out: Path, rec: dict[str, np.ndarray], tol_model: float) -> None:
    table = pq.read_table(out / "analysis.parquet").to_pydict()
    t = np.array(table["t"])
    np.testing.assert_allclose(t, rec["t"], atol=1e-9)

    def col(c: str) -> np.ndarray:
        return np.column_stack([table[f"{c}_{n}"] for n in NAMES])

    np.testing.assert_allclose(col("gravity"), rec["g"], atol=1e-9)
    inner = slice(2, -2)  # the ends use one-sided differences
    np.testing.assert_allclose(col("tau_model")[inner], rec["tau"][inner], atol=tol_model)
    external = col("tau_external")[inner]
    bump = rec["bump"][inner]
    assert np.abs(external[~bump]).max() < tol_model
    np.testing.assert_allclose(external[bump][:, BUMP[2]], BUMP[3], atol=tol_model)
    # commanded = measured efforts: ABA should give back the trajectory's accelerations
    qdd = col("qdd_predicted")[inner]
    no_bump = ~bump
    np.testing.assert_allclose(qdd[no_bump], rec["a"][inner][no_bump], atol=50 * tol_model)


def test_sqlite3_bag_matches_pinocchio(tmp_path: Path, recording: Rec) -> None:
    bag = write_rosbags(tmp_path / "rec", recording, StoragePlugin.SQLITE3)
    out = tmp_path / "out"
    summary = analyze([bag], out, AnalyzeOptions(command_topic="/effort_commands",
                                          command_joints=NAMES, progress=False,
                                          outputs=("mcap", "csv", "parquet", "png")))
    assert summary.messages == len(recording["t"])
    check(out, recording, tol_model=2e-3)
    # the other outputs: CSV rows, plots, summary, and a bag of the computed topics
    with (out / "analysis.csv").open() as f:
        rows = list(csv.reader(f))
    assert len(rows) == 1 + len(recording["t"]) and rows[0][0] == "t"
    assert all((out / f"{n}.png").stat().st_size > 10_000 for n in NAMES)
    text = (out / "summary.txt").read_text()
    assert "joint2" in text and f"{len(recording['t'])} joint states" in text
    worst_t = summary.worst[BUMP[2]][1] - 10.0
    assert BUMP[0] <= worst_t < BUMP[1]
    from mcap.reader import make_reader
    from rosbags.highlevel import AnyReader

    with AnyReader([out / "analysis.mcap"]) as r:
        topics = {c.topic: c.msgcount for c in r.connections}
        assert topics["/rbd/gravity_torques"] == len(recording["t"])
        conn = next(c for c in r.connections
                    if c.topic == "/rbd/external_torques_from_acceleration")
        msgs = [cast(BagJointState, r.deserialize(raw, conn.msgtype))
                for _, _, raw in r.messages(connections=[conn])]
        stamps = np.array([m.header.stamp.sec + 1e-9 * m.header.stamp.nanosec for m in msgs])
        np.testing.assert_allclose(stamps, recording["t"], atol=1e-6)
        want = np.column_stack([pq.read_table(out / "analysis.parquet").to_pydict()[
            f"tau_external_{n}"] for n in NAMES])
        np.testing.assert_allclose([m.effort for m in msgs], want, atol=1e-12)
    with (out / "analysis.mcap").open("rb") as f:  # an independent reader agrees
        reader = make_reader(f)
        info = reader.get_summary()
        assert info is not None and info.statistics is not None
        # gravity, model, external torques (from acceleration and the observer's), the
        # commands' accelerations; no collision flags without thresholds
        assert info.statistics.message_count == 5 * len(recording["t"])
        assert sum(1 for _ in reader.iter_messages(topics=["/rbd/model_torques"])) == \
            len(recording["t"])


def test_missing_velocities_and_causal_filter(tmp_path: Path, recording: Rec) -> None:
    bag = write_rosbags(tmp_path / "rec", recording, StoragePlugin.SQLITE3, velocities=False)
    out = tmp_path / "out"
    analyze([bag], out, AnalyzeOptions(urdf=ARM, filter="backward", progress=False, chunk=333,
                                outputs=("parquet",)))
    table = pq.read_table(out / "analysis.parquet").to_pydict()
    g = np.column_stack([table[f"gravity_{n}"] for n in NAMES])
    np.testing.assert_allclose(g, recording["g"], atol=1e-9)  # chunking loses no sample
    v = np.column_stack([table[f"v_{n}"] for n in NAMES])[1:]
    np.testing.assert_allclose(v, recording["v"][1:], atol=5e-3)  # backward differences


def test_mcap_from_another_writer(tmp_path: Path, recording: Rec) -> None:
    path = write_mcap(tmp_path / "rec.mcap", recording)
    out = tmp_path / "out"
    summary = analyze([path], out, AnalyzeOptions(urdf=ARM, progress=False, outputs=("parquet",)))
    assert summary.messages == len(recording["t"])
    table = pq.read_table(out / "analysis.parquet").to_pydict()
    tau = np.column_stack([table[f"tau_model_{n}"] for n in NAMES])
    np.testing.assert_allclose(tau[2:-2], recording["tau"][2:-2], atol=2e-3)


def test_errors_say_what_to_fix(tmp_path: Path, recording: Rec) -> None:
    bag = write_rosbags(tmp_path / "rec", recording, StoragePlugin.SQLITE3)
    with pytest.raises(BagError, match="no sensor_msgs/msg/JointState on topic /arm/states"):
        analyze([bag], tmp_path / "o1", AnalyzeOptions(joint_states_topic="/arm/states",
                                               progress=False))
    with pytest.raises(BagError, match="cannot read"):
        analyze([tmp_path / "nothing_here"], tmp_path / "o2", AnalyzeOptions(progress=False))
    other = tmp_path / "other.urdf"
    other.write_text(ARM.read_text().replace('"joint7"', '"wrist_roll"'))
    with pytest.raises(BagError, match=r"the model's \['wrist_roll'\] are not recorded.*"
                                       r"\['joint7'\]"):
        analyze([bag], tmp_path / "o3", AnalyzeOptions(urdf=other, progress=False))
    r = subprocess.run([sys.executable, "-m", "rbd_ros.app.cli", "analyze", str(tmp_path / "x"),
                        "--quiet"], capture_output=True, text=True, timeout=300)
    assert r.returncode == 2 and r.stderr.startswith("error: cannot read")


def test_truncated_bag_is_processed_up_to_the_damage(tmp_path: Path, recording: Rec) -> None:
    mcap = write_mcap(tmp_path / "rec.mcap", recording, chunk_size=16 * 1024)
    data = mcap.read_bytes()
    mcap.write_bytes(data[: len(data) // 2])  # cut in the middle, as a crash would
    out = tmp_path / "out"
    summary = analyze([mcap], out, AnalyzeOptions(urdf=ARM, progress=False, outputs=("parquet",),
                                           chunk=200))
    assert 0 < summary.messages < len(recording["t"])
    assert any("damaged after" in w for w in summary.warnings), summary.warnings
    # what was read is right
    table = pq.read_table(out / "analysis.parquet").to_pydict()
    n = len(table["t"])
    g = np.column_stack([table[f"gravity_{name}"] for name in NAMES])
    np.testing.assert_allclose(g, recording["g"][:n], atol=1e-9)


@pytest.mark.parametrize("lag", [1, 1_500_000])
def test_partial_messages_commands_and_equal_stamps(tmp_path: Path, recording: Rec,
                                                    lag: int) -> None:
    """Two publishers naming different joints (in other orders) at the same record stamps,
    commands as JointState every third sample in reversed order, and pages of 5 messages, so
    that messages of one stamp straddle page ends. The rows must be what merging by name gives
    (computed here message by message), and gravity and ABA Pinocchio's at those rows. With a
    1.5 ms lag the commands are stored after joint states they precede in time (the file is
    not in time order, so it is read through its timestamp index)."""
    JS, Header = TS.types["sensor_msgs/msg/JointState"], TS.types["std_msgs/msg/Header"]
    Time = TS.types["builtin_interfaces/msg/Time"]
    pubs = (["joint1", "joint2", "joint3", "joint4"], ["joint7", "joint5", "joint6"])
    n = 120

    def js(ns: int, names: list[str], q: dict[str, float], v: dict[str, float],
           e: dict[str, float]) -> memoryview:
        return TS.serialize_cdr(JS(
            header=Header(stamp=Time(sec=ns // 10**9, nanosec=ns % 10**9), frame_id=""),
            name=names, position=np.array([q[x] for x in names]),
            velocity=np.array([v[x] for x in names]),
            effort=np.array([e[x] for x in names])), "sensor_msgs/msg/JointState")

    rows, row_ns, commands = [], [], []
    state: dict[str, dict[str, float]] = {"q": {}, "v": {}, "e": {}}
    path = tmp_path / "rec"
    with Writer(path, version=8) as w:
        c_js = w.add_connection("/joint_states", "sensor_msgs/msg/JointState", typestore=TS)
        c_cmd = w.add_connection("/cmd", "sensor_msgs/msg/JointState", typestore=TS)
        for k in range(n):
            ns = 10 * 10**9 + k * 10**6
            vals = {f: {x: float(recording[key][k][j]) for j, x in enumerate(NAMES)}
                    for f, key in (("q", "q"), ("v", "v"), ("e", "effort"))}
            if k % 3 == 0:
                u = {x: 2.0 * vals["e"][x] + 1.0 for x in NAMES}
                rev = NAMES[::-1]
                w.write(c_cmd, ns - lag, js(ns, rev, vals["q"], vals["v"], u))
                commands.append((ns - lag, [u[x] for x in NAMES]))
            for p, names in enumerate(pubs):
                w.write(c_js, ns, js(ns + p * 500_000, names, *vals.values()))  # equal stamps
                for f in "qve":
                    state[f].update({x: vals[f][x] for x in names})
                if len(state["q"]) == len(NAMES):
                    rows.append([[state[f][x] for x in NAMES] for f in "qve"])
                    row_ns.append(ns)
    # the command in force at a joint state: the last one recorded at or before it
    at = np.searchsorted([c[0] for c in commands], row_ns, side="right") - 1
    expect_u = [commands[k][1] for k in at]
    import sqlite3

    from rbd_ros.bag.readers import _in_time_order

    with sqlite3.connect(next(path.glob("*.db3"))) as db:
        assert _in_time_order(db) == (lag == 1)
    out = tmp_path / "out"
    summary = analyze([path], out, AnalyzeOptions(urdf=ARM, command_topic="/cmd", progress=False,
                                           chunk=5, outputs=("parquet",)))
    assert summary.messages == 2 * n
    table = pq.read_table(out / "analysis.parquet").to_pydict()

    def col(c: str) -> np.ndarray:
        return np.column_stack([table[f"{c}_{x}"] for x in NAMES])

    got_q = col("q")[1:]  # the first row (joint5-7 not yet seen) has no complete state
    want = np.array(rows)
    np.testing.assert_allclose(got_q, want[:, 0], atol=0)
    np.testing.assert_allclose(col("v")[1:], want[:, 1], atol=0)
    pm = pin.buildModelFromUrdf(str(ARM))
    pd = pm.createData()
    order = [pm.getJointId(x) - 1 for x in NAMES]
    back = np.argsort(order)
    g = np.array([pin.computeGeneralizedGravity(pm, pd, q[back])[order] for q in want[:, 0]])
    np.testing.assert_allclose(col("gravity")[1:], g, atol=1e-9)
    qdd = np.array([pin.aba(pm, pd, q[back], v[back], np.array(u)[back])[order]
                    for (q, v, _), u in zip(want, expect_u, strict=True)])
    np.testing.assert_allclose(col("qdd_predicted")[1:], qdd, rtol=1e-9, atol=1e-8)


def test_no_outputs_gives_the_summary_alone(tmp_path: Path, recording: Rec) -> None:
    """outputs=(): the summary only (and no writer process), the same numbers as with files."""
    bag = write_rosbags(tmp_path / "rec", recording, StoragePlugin.SQLITE3)
    alone = analyze([bag], tmp_path / "a", AnalyzeOptions(urdf=ARM, progress=False, outputs=()))
    full = analyze([bag], tmp_path / "b", AnalyzeOptions(urdf=ARM, progress=False,
                                                   outputs=("parquet",)))
    assert sorted(p.name for p in (tmp_path / "a").iterdir()) == [".rbd-outputs",
                                                                  THRESHOLDS_FILE, "summary.txt"]
    assert alone.messages == full.messages == len(recording["t"])
    np.testing.assert_array_equal(alone.rms(), full.rms())


def test_output_errors_stop_the_analysis_with_the_reason(tmp_path: Path, recording: Rec) -> None:
    from rbd_ros.bag.errors import OutputError

    bag = write_rosbags(tmp_path / "rec", recording, StoragePlugin.SQLITE3)
    out = tmp_path / "out"
    (out / "analysis.parquet").mkdir(parents=True)  # where the table should go
    with pytest.raises(OutputError, match=r"writing the outputs failed: .*analysis\.parquet"):
        analyze([bag], out, AnalyzeOptions(urdf=ARM, progress=False, chunk=100))


def test_a_writer_that_dies_is_reported(tmp_path: Path) -> None:
    from rbd_ros.bag.errors import OutputError
    from rbd_ros.bag.writers import COLUMNS, Writers

    w = Writers(tmp_path, NAMES, ("parquet",), rows=100)
    cols = {"ns": np.arange(100, dtype=np.int64), **{c: np.zeros((100, 7)) for c in COLUMNS}}
    w.write(cols)
    w.child.kill()
    w.child.wait()
    with pytest.raises(OutputError, match="ended"):
        for _ in range(10):  # the first writes may still fit in the socket's buffer
            w.write(cols)
        w.close()
    w.abort()
    assert not w.path.exists()  # the shared chunk file is gone


def test_residual_statistics_and_plot_envelope() -> None:
    """The fused pass over a chunk (residual, summary sums, worst, min-max envelope) against
    numpy doing each step on its own, with NaN where a joint was not recorded."""
    from rbd_ros.bag.analyze import _residuals

    rng = np.random.default_rng(3)
    n, nj, stride = 103, 3, 10
    e, tau = rng.normal(size=(n, nj)), rng.normal(size=(n, nj))
    e[:20, 1] = np.nan  # joint 1 not measured at first
    tau[50, 2] = np.nan
    external = np.empty_like(e)
    sum_sq, count, worst = np.ones(nj), np.full(nj, 2.0), np.array([0.0, 0.5, 99.0])
    env = np.empty((-(-n // stride), 6 * nj))
    at = _residuals(e, tau, stride, external, sum_sq, count, worst, env)
    want = tau - e
    fin = np.isfinite(want)
    np.testing.assert_array_equal(external, want)
    np.testing.assert_allclose(sum_sq, 1 + np.nansum(want**2, axis=0))
    np.testing.assert_array_equal(count, 2 + fin.sum(axis=0))
    absr = np.where(fin, np.abs(want), -1)
    assert list(at[:2]) == list(absr.argmax(axis=0)[:2]) and at[2] == -1  # 99 stays worst
    np.testing.assert_array_equal(worst[:2], absr.max(axis=0)[:2])
    series = np.column_stack([e, tau, want])
    starts = np.arange(0, n, stride)
    with np.errstate(invalid="ignore"):
        np.testing.assert_array_equal(env, np.column_stack([np.fmin.reduceat(series, starts),
                                                            np.fmax.reduceat(series, starts)]))


def test_recorded_names_are_mapped_and_missing_joints_held(tmp_path: Path) -> None:
    """A Franka recording names its joints fer_joint1..7 and has no gripper; the common panda
    URDF says panda_joint1..7 plus a finger joint. Refused with what to do, then analysed with
    a prefix rename and the finger held: gravity equals Pinocchio's on the panda. Its efforts
    are motor currents (torque / 4 on joint 2): --effort-scale makes them torques."""
    from pinref import ROBOTS, PinRef

    from rbd_ros.dynamics import load_urdf

    urdf = ROBOTS / "panda_description/urdf/panda.urdf"
    model = load_urdf(urdf)
    assert model.state_joint_names == [f"panda_joint{k}" for k in range(1, 8)] + \
        ["panda_finger_joint1"]
    rng = np.random.default_rng(3)
    lo = np.array([j.lower for j in model.joints if j.idx_v >= 0])[:7]
    hi = np.array([j.upper for j in model.joints if j.idx_v >= 0])[:7]
    q = rng.uniform(lo, hi, (50, 7))
    JS, Header = TS.types["sensor_msgs/msg/JointState"], TS.types["std_msgs/msg/Header"]
    Time = TS.types["builtin_interfaces/msg/Time"]
    bag = tmp_path / "franka"
    with Writer(bag, version=8, storage_plugin=StoragePlugin.SQLITE3) as w:
        js = w.add_connection("/joint_states", "sensor_msgs/msg/JointState", typestore=TS)
        for k in range(len(q)):
            ns = 1_700_000_000 * 10**9 + k * 1_000_000
            msg = JS(header=Header(stamp=Time(sec=ns // 10**9, nanosec=ns % 10**9), frame_id=""),
                     name=[f"fer_joint{i}" for i in range(1, 8)], position=q[k].copy(),
                     velocity=np.zeros(7), effort=np.r_[0.0, 2.5, 0.0, 0.0, 0.0, 0.0, 0.0])
            w.write(js, ns, TS.serialize_cdr(msg, "sensor_msgs/msg/JointState"))
    with pytest.raises(BagError, match=r"fer_\*=panda_\*"):
        analyze([bag], tmp_path / "refused", AnalyzeOptions(urdf=urdf, progress=False, outputs=()))
    out = tmp_path / "out"
    r = subprocess.run([sys.executable, "-m", "rbd_ros.app.cli", "analyze", str(bag), "--urdf",
                        str(urdf), "--out", str(out), "--quiet", "--rename", "fer_*=panda_*",
                        "--hold", "panda_finger_joint1=0.02", "--effort-scale",
                        "panda_joint2=4"], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    assert "held at a fixed position at rest: panda_finger_joint1 = 0.02" in r.stdout
    table = pq.read_table(out / "analysis.parquet").to_pydict()
    ref = PinRef(model, str(urdf), False)
    for k in range(len(q)):
        want = ref.gravity(np.r_[q[k], 0.02])
        got = [table[f"gravity_{n}"][k] for n in model.state_joint_names]
        np.testing.assert_allclose(got, want, atol=1e-9)
    assert set(table["tau_measured_panda_joint2"]) == {10.0}
    assert set(table["tau_measured_panda_joint1"]) == {0.0}
    r = subprocess.run([sys.executable, "-m", "rbd_ros.app.cli", "analyze", str(bag), "--urdf",
                        str(urdf), "--out", str(out), "--rename", "fer_*=panda_*", "--hold",
                        "panda_finger_joint1=0.02", "--effort-scale", "fer_joint2=4"],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode != 0 and "effort scales for ['fer_joint2'], which are not joints of " \
        "the model" in r.stderr, r.stderr


def test_commands_without_names_need_their_order(tmp_path: Path, recording: Rec) -> None:
    """A Float64MultiArray command topic is values without names: without --command-joints
    analyze refuses it and says what to give, rather than take the model's order."""
    bag = write_rosbags(tmp_path / "bag", recording, StoragePlugin.SQLITE3)
    r = subprocess.run([sys.executable, "-m", "rbd_ros.app.cli", "analyze", str(bag), "--urdf",
                        str(ARM), "--out", str(tmp_path / "out"), "--command-topic",
                        "/effort_commands", "--quiet"], capture_output=True, text=True,
                       timeout=300)
    assert r.returncode != 0
    assert "/effort_commands carries std_msgs/msg/Float64MultiArray, values without joint " \
        "names: give their order with --command-joints" in r.stderr, r.stderr


def test_unreadable_messages_are_skipped_and_counted(tmp_path: Path, recording: Rec) -> None:
    """One message cut short must not empty the analysis: it is skipped, named, and the rest
    is analysed as if it were not there; nothing readable at all fails the command."""
    n = len(recording["t"])
    bag = write_rosbags(tmp_path / "bag", recording, StoragePlugin.SQLITE3,
                        cut=frozenset({500, 501, 1200}))
    out = tmp_path / "out"
    r = subprocess.run([sys.executable, "-m", "rbd_ros.app.cli", "analyze", str(bag), "--urdf",
                        str(ARM), "--out", str(out), "--command-topic", "/effort_commands",
                        "--command-joints", *NAMES, "--quiet"],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    assert "3 unreadable joint_states messages skipped" in r.stderr
    text = (out / "summary.txt").read_text()
    assert f"{n - 3} joint states analysed" in text
    assert "3 unreadable joint_states messages skipped: #500 (recorded at" in text
    assert "#501" in text and "#1200" in text
    assert "unreadable command messages skipped (no command in force from them): 3" in text
    table = pq.read_table(out / "analysis.parquet").to_pydict()
    keep = np.setdiff1d(np.arange(n), [500, 501, 1200])
    np.testing.assert_allclose(table["t"], recording["t"][keep], atol=1e-9)
    g = np.column_stack([table[f"gravity_{name}"] for name in NAMES])
    np.testing.assert_allclose(g, recording["g"][keep], atol=1e-9)
    # the worst residual's time: seconds from the first state, and its stamp
    row = next(line for line in text.splitlines() if line.startswith(NAMES[BUMP[2]]))
    from_start, stamp = (float(x) for x in row.split()[-2:])
    assert stamp == pytest.approx(from_start + recording["t"][0], abs=1e-3)
    assert BUMP[0] - 0.1 <= from_start + recording["t"][0] - 10.0 <= BUMP[1] + 0.1
    # every joint state unreadable: nothing analysed is a failure, not an empty success
    bad = write_rosbags(tmp_path / "bad", recording, StoragePlugin.SQLITE3,
                        cut=frozenset(range(n)))
    r = subprocess.run([sys.executable, "-m", "rbd_ros.app.cli", "analyze", str(bad), "--urdf",
                        str(ARM), "--out", str(tmp_path / "out2"), "--quiet"],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode != 0
    assert re.match(r"error: none of the first \d+ joint_states messages can be read", r.stderr)


def test_an_interrupted_run_leaves_the_previous_complete_outputs(
        tmp_path: Path, recording: Rec, monkeypatch: pytest.MonkeyPatch) -> None:
    """Outputs are written aside and moved into place when complete: Ctrl-C in the middle of
    a second run leaves the first run's files as they were, and nothing half-written."""
    from rbd_ros.bag.readers import Batch
    from rbd_ros.bag.stream import Stream

    bag = write_rosbags(tmp_path / "rec", recording, StoragePlugin.SQLITE3)
    out = tmp_path / "out"
    opts = AnalyzeOptions(urdf=ARM, progress=False, chunk=300)
    analyze([bag], out, opts)
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    assert {"analysis.parquet", "analysis.mcap", "summary.txt", "joint1.png"} <= set(before)
    calls = 0
    add = Stream.add

    def interrupted(self: Stream, js: Batch, commands: np.ndarray) -> None:
        nonlocal calls
        calls += 1
        if calls == 3:  # after two chunks have gone to the writers
            raise KeyboardInterrupt
        add(self, js, commands)

    monkeypatch.setattr(Stream, "add", interrupted)
    with pytest.raises(KeyboardInterrupt):
        analyze([bag], out, AnalyzeOptions(urdf=ARM, progress=False, chunk=300, outputs=("parquet",)))
    assert calls == 3
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before  # no partial folder left
    # a complete run with other outputs replaces the whole set: no stale files of the first
    monkeypatch.setattr(Stream, "add", add)
    analyze([bag], out, AnalyzeOptions(urdf=ARM, progress=False, outputs=("parquet",)))
    assert sorted(p.name for p in out.iterdir()) == [".rbd-outputs", "analysis.parquet",
                                                     THRESHOLDS_FILE, "summary.txt"]


def test_an_arm_and_its_gripper_published_apart_are_one_joint_state_a_stamp(
        tmp_path: Path, recording: Rec) -> None:
    """A driver that publishes joints 1-6 and the gripper's joint 7 as two messages of one
    stamp, positions and efforts in each: one joint state a stamp, differenced over the
    stamps' time, with the observer's thresholds; the rows of one message a stamp, exactly."""
    JS, Header = TS.types["sensor_msgs/msg/JointState"], TS.types["std_msgs/msg/Header"]
    Time = TS.types["builtin_interfaces/msg/Time"]
    split = tmp_path / "split"
    with Writer(split, version=8) as w:
        c = w.add_connection("/joint_states", "sensor_msgs/msg/JointState", typestore=TS)
        for k, t in enumerate(recording["t"]):
            ns = round(t * 1e9)
            header = Header(stamp=Time(sec=ns // 10**9, nanosec=ns % 10**9), frame_id="")
            for part in (slice(0, 6), slice(6, 7)):
                w.write(c, ns, TS.serialize_cdr(JS(
                    header=header, name=NAMES[part], position=recording["q"][k, part],
                    velocity=np.empty(0), effort=recording["effort"][k, part]),
                    "sensor_msgs/msg/JointState"))
    whole = write_rosbags(tmp_path / "whole", recording, StoragePlugin.SQLITE3, velocities=False)
    tables, summaries = [], []
    for bag in (split, whole):
        summaries.append(analyze([bag], tmp_path / f"out_{bag.name}", AnalyzeOptions(
            urdf=ARM, progress=False, chunk=7, outputs=("parquet",))))
        tables.append(pq.read_table(tmp_path / f"out_{bag.name}" / "analysis.parquet"))
    assert summaries[0].messages == summaries[1].messages == len(recording["t"])
    assert summaries[0].observer is not None, summaries[0].text()
    assert summaries[0].text().splitlines()[2:] == summaries[1].text().splitlines()[2:]
    for name in ("t", *(f"{c}_{x}" for c in ("v", "tau_model", "tau_external") for x in NAMES)):
        np.testing.assert_array_equal(tables[0][name].to_numpy(), tables[1][name].to_numpy())
