"""The README's main command, and its errors."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from pages import assert_drawn_as_committed, assert_shown

from rbd_ros.dynamics import Data, gravity, load_urdf
from rbd_ros.robots import ARM


def rbd_ros(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "rbd_ros.app.cli", *args], capture_output=True,
                          text=True, timeout=300)


def test_info_prints_the_arm_and_its_gravity_torques() -> None:
    r = rbd_ros("info")
    assert r.returncode == 0, r.stderr
    assert "model 'arm7'" in r.stdout and "nv=7" in r.stdout
    printed = [float(x) for x in re.findall(r"joint\d\s+([+-]\d+\.\d+) N m", r.stdout)]
    m = load_urdf(ARM)
    from rbd_ros.app.cli import ARM_READY
    np.testing.assert_allclose(printed, gravity(m, Data(m), np.array(ARM_READY)), atol=1e-4)


def test_quadruped_base_carries_the_weight() -> None:
    r = rbd_ros("info", "quadruped")
    assert r.returncode == 0, r.stderr
    m = re.search(r"base_fz\s+([+-]\d+\.\d+)", r.stdout)
    assert m is not None, r.stdout
    fz = float(m.group(1))
    assert abs(fz - 21.0 * 9.81) < 1e-3


def test_bad_urdf_prints_an_error_not_a_traceback(tmp_path) -> None:
    bad = tmp_path / "bad.urdf"
    bad.write_text("<robot name='x'><link name='a'>")
    r = rbd_ros("info", str(bad))
    assert r.returncode == 2
    assert r.stderr.startswith("error: the URDF is not well-formed XML")
    assert "Traceback" not in r.stderr


def test_demo_tracks_better_with_feed_forward_and_computed_torque(tmp_path: Path) -> None:
    """The README's first command, as scripts/pictures.py runs it for the README's picture: the
    lockstep demo gives the same errors on every run, so the picture drawn now is the one
    committed (doc/images/demo_tracking.png)."""
    pytest.importorskip("rclpy", reason="the demo runs ROS nodes")
    r = rbd_ros("demo", "--plot", str(tmp_path / "demo_tracking.png"))
    assert r.returncode == 0, r.stdout + r.stderr
    assert_drawn_as_committed(tmp_path / "demo_tracking.png")
    m = re.search(r"reduces the mean tracking error ([\d.]+) times", r.stdout)
    assert m is not None, r.stdout
    gain = float(m.group(1))
    assert gain > 2.0, r.stdout
    # the trajectory controller's computed torque on the simulator (its own model): far below
    # PD alone, through a FollowJointTrajectory goal that succeeds
    m = re.search(r"computed torque .*?: (\d+) times below PD alone", r.stdout)
    assert m is not None and int(m.group(1)) > 50, r.stdout
    assert "goal succeeded (error_code 0" in r.stdout, r.stdout
    m = re.search(r"p50 ([\d.]+) ms", r.stdout)
    assert m is not None, r.stdout
    p50 = float(m.group(1))
    assert 0.0 < p50 < 100.0, r.stdout


def test_quadruped_demo_reports_loads_impossible_motion_and_flight() -> None:
    pytest.importorskip("rclpy", reason="the demo runs ROS nodes")
    r = rbd_ros("demo", "--robot", "quadruped")
    assert r.returncode == 0, r.stdout + r.stderr
    rows = {line[:30].strip(): line[30:] for line in r.stdout.splitlines()}
    assert rows["standing on four feet"].endswith("ok"), r.stdout  # else: what it said
    loads = [float(x) for x in rows["standing on four feet"].split()[:4]]
    # each foot's frame is tilted by the leg (0.4 rad): the loads are m g cos(0.4) in all
    np.testing.assert_allclose(sum(loads), 21.0 * 9.81 * np.cos(0.4), rtol=1e-3)
    assert "the ground would have to pull" in rows["dropping faster than gravity"]
    assert "base falls at -9.81" in rows["in flight (no contact)"]
    assert_shown("doc/tutorials/floating_base.md", "situation", r.stdout)


def test_every_option_has_help_that_says_its_default() -> None:
    """Each command's --help, as a user reads it: every option says what it is, and every
    option that has a default (not none, off or empty) says it."""
    import argparse

    from rbd_ros.app.cli import parser

    commands = next(a for a in parser()._actions if isinstance(a, argparse._SubParsersAction))
    for name, sub in commands.choices.items():
        text = " ".join(sub.format_help().split())
        for action in sub._actions:
            if not action.option_strings or action.dest == "help":
                continue
            assert action.help, f"rbd-ros {name} {action.option_strings[0]}: no help"
            d = action.default
            if d is None or d is False or (isinstance(d, list) and not d):
                continue
            said = " ".join(action.help.split())
            assert said in text, (name, said)
            after = text[text.index(said) + len(said):][:120]
            assert "default" in said or after.startswith(" (default: "), (name, said, after)


def test_the_demo_answers_each_simulated_state_once() -> None:
    """Under load the lockstep simulator publishes its waiting state again (after 0.1 s), and
    the dynamics node answers that copy too: the demo's controller scores each state once, so
    its run has as many samples as steps (a second answer made 3502 of 3500 on a busy CI). A
    copy of a state it answered says the answer was lost: the same answer goes again (the
    simulator steps on the first that comes). A copy of a state still without its
    feed-forward says the dynamics node has no trajectory: it is asked again."""
    import numpy as np

    from rbd_ros.app.demo import _Controller

    sent: list[tuple[int, np.ndarray]] = []
    asked: list[int] = []
    ctl = _Controller(4.0, lambda stamp, tau: sent.append((stamp, tau)),
                      lambda: asked.append(1))
    q = v = np.zeros(7)
    s1, s2 = 10**9, 10**9 + 10**6
    ctl.on_state(s1, q, v)
    ctl.begin("PD + feed-forward")
    assert sent == [] and asked == []  # waits for the dynamics node's feed-forward of s1
    ctl.on_state(s1, q, v)  # the simulator's copy, while it waits: the trajectory again
    assert sent == [] and asked == [1]
    ctl.on_ff(s1, np.ones(7))
    ctl.on_ff(s1, np.ones(7))  # the node's answer to the copy
    assert [s for s, _ in sent] == [s1] and ctl.steps == 1
    ctl.on_state(s1, q, v)  # a copy after the answer: the answer again, not a second step
    assert [s for s, _ in sent] == [s1, s1] and ctl.steps == 1 and asked == [1]
    np.testing.assert_array_equal(sent[1][1], sent[0][1])
    ctl.on_state(s2, q, v)
    ctl.on_ff(s2, np.ones(7))
    ctl.on_state(s1, q, v)  # a late copy of a state stepped past: nothing
    assert [s for s, _ in sent] == [s1, s1, s2] and ctl.steps == 2 and asked == [1]


def test_a_killed_demo_leaves_no_node_running() -> None:
    """A demo stopped by SIGKILL (a test's or a CI's timeout) takes its simulator and dynamics
    node with it: each child is asked to stop when its parent dies."""
    pytest.importorskip("rclpy", reason="the demo runs ROS nodes")
    import os
    import signal
    import time

    def children(pid: int) -> list[int]:
        out = []
        for stat in Path("/proc").glob("[0-9]*/stat"):
            try:
                fields = stat.read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue  # gone meanwhile
            if int(fields[1]) == pid:
                out.append(int(stat.parent.name))
        return out

    demo = subprocess.Popen([sys.executable, "-m", "rbd_ros.app.cli", "demo"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 300
        while len(nodes := children(demo.pid)) < 2 and time.monotonic() < deadline:
            time.sleep(0.2)
        assert len(nodes) == 2, "the demo started no simulator and dynamics node"
    finally:
        demo.kill()
        demo.wait()
    deadline = time.monotonic() + 300  # a node compiling its kernels stops once they are built
    while (alive := [p for p in nodes if Path(f"/proc/{p}").exists()
                     and Path(f"/proc/{p}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"]
           ) and time.monotonic() < deadline:
        time.sleep(0.2)
    for p in alive:
        os.kill(p, signal.SIGKILL)
    assert not alive, f"the demo's nodes outlived it: {alive}"
