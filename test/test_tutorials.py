"""The tutorials' programs (doc/examples/), run as the tutorials say to run them, against the
real nodes on the bundled arm: what they print is checked against the core and the physics."""

from __future__ import annotations

import importlib.util
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
from geometry_msgs.msg import WrenchStamped
from pages import assert_shown
from rosutil import SENSOR, NodeProcess, Probe, Process, params_file
from sensor_msgs.msg import JointState

from rbd_ros.dynamics import Data, crba, gravity, load_urdf, rnea
from rbd_ros.robots import ARM, QUADRUPED

EXAMPLES = Path(__file__).resolve().parents[1] / "doc" / "examples"
HOLD = [0.3, 0.6, -0.2, -1.0, 0.4, 0.8, -0.3]


def example(name: str) -> Process:
    return Process(sys.executable, "-u", str(EXAMPLES / name))


def example_gains() -> list[float]:
    """hold_with_gravity.py's KP, one a joint in the arm's order, read from the program."""
    spec = importlib.util.spec_from_file_location("hold", EXAMPLES / "hold_with_gravity.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert [j.name for j in load_urdf(ARM).joints] == module.JOINTS
    return list(module.KP)


def test_the_service_tutorials_client_runs_against_the_node(tmp_path: Path) -> None:
    """dynamics_client.py: its answers are the core's, and the short request is refused. The
    node is started on the parameters file the tutorial's own command writes (run as written,
    in a folder holding the bundled arm where the repository has it)."""
    page = (EXAMPLES.parent / "tutorials" / "services.md").read_text()
    command = re.search(r"```bash\n(python3 -c .*?arm7\.yaml)\n", page, re.S)
    assert command, "services.md: the command that writes arm7.yaml"
    (tmp_path / "rbd_ros" / "robots").mkdir(parents=True)
    (tmp_path / "rbd_ros" / "robots" / "arm7.urdf").write_text(ARM.read_text())
    subprocess.run(["bash", "-c", command.group(1)], cwd=tmp_path, check=True, timeout=300)
    node = NodeProcess("rbd_ros.nodes.dynamics_node", "--params-file",
                       str(tmp_path / "arm7.yaml"))
    try:
        r = subprocess.run([sys.executable, str(EXAMPLES / "dynamics_client.py")],
                           capture_output=True, text=True, timeout=600)
    finally:
        log = node.stop()
    assert r.returncode == 0, r.stdout + r.stderr + log

    def printed(label: str, unit: str = "N m") -> np.ndarray:
        m = re.search(re.escape(f"{label} ({unit}): ") + "(.*)", r.stdout)
        assert m is not None, r.stdout
        return np.array([float(x) for x in m.group(1).split()])

    m = load_urdf(ARM)
    d = Data(m)
    q = np.array([0.0, 0.4, 0.0, -1.2, 0.0, 1.6, 0.8])
    np.testing.assert_allclose(printed("gravity torques"), gravity(m, d, q), atol=1e-3)
    a = np.zeros(7)
    a[3] = 1.0
    np.testing.assert_allclose(printed("inverse dynamics"), rnea(m, d, q, np.zeros(7), a),
                               atol=1e-3)
    np.testing.assert_allclose(printed("forward dynamics", "rad/s^2"), a, atol=2e-3)
    np.testing.assert_allclose(printed("mass matrix diagonal", "kg m^2"),
                               np.diag(crba(m, d, q)), atol=1e-3)
    assert re.search(r"^refused: .*joint", r.stdout, re.M), r.stdout


def test_the_arm_is_held_by_gravity_feed_forward_and_a_push_is_reported(
        probe: Probe, tmp_path: Path) -> None:
    """The feed-forward and the collision tutorials together, as on a robot: the simulator in
    place of the driver (its efforts from /effort_controller/commands; in lockstep, one step
    per command, so that the arm does not fall while the processes find each other, as a
    driver holds the arm until its controller runs), the dynamics node with
    collision thresholds, hold_with_gravity.py holding the arm where it starts, and
    collision_monitor.py. The arm stays put, a push on link5 is reported on link5, then
    cleared."""
    urdf = ARM.read_text()
    dyn = NodeProcess("rbd_ros.nodes.dynamics_node", "--params-file", str(params_file(
        tmp_path / "dyn.yaml", "/rbd_dynamics", {
            "robot_description": urdf, "friction": True, "joints": [f"joint{k}" for k in range(1, 8)],
            "collision_thresholds": [2.0, 2.0, 2.0, 2.0, 0.5, 0.5, 0.5]})))
    hold, monitor = example("hold_with_gravity.py"), example("collision_monitor.py")
    sim = None
    states = probe.listen(JointState, "/joint_states", SENSOR)
    try:
        assert probe.spin_until(lambda: probe.node.count_subscribers("/joint_states") >= 3 and
                                probe.node.count_publishers("/rbd_dynamics/collision") >= 1), \
            "the dynamics node and the examples did not start"
        sim = NodeProcess("rbd_ros.nodes.simulator_node", "-r",
                          "effort_commands:=/effort_controller/commands", "--params-file",
                          str(params_file(tmp_path / "sim.yaml", "/rbd_simulator", {
                              "robot_description": urdf, "initial_positions": HOLD,
                              "lockstep": True})))
        # (a loop of three processes over DDS: on a loaded machine a discovery stall can hold
        # it for tens of seconds; each wait ends as soon as its states have come)
        push = probe.node.create_publisher(WrenchStamped, "/external_wrench", 10)
        assert probe.spin_until(lambda: len(states) > 1500 and push.get_subscription_count()
                                > 0), "the arm did not move"
        held = np.array(states[-1].position)
        pushed = states[-1].header.stamp.sec + 1e-9 * states[-1].header.stamp.nanosec
        msg = WrenchStamped()
        msg.header.frame_id = "link5"
        msg.wrench.force.x, msg.wrench.force.y, msg.wrench.torque.z = 20.0, -30.0, 0.8
        push.publish(msg)
        count = len(states)  # pushed for half a second of the simulation's time
        assert probe.spin_until(lambda: len(states) > count + 500)
        push.publish(WrenchStamped(header=msg.header))  # a zero wrench: the push ends
        count = len(states)
        assert probe.spin_until(lambda: len(states) > count + 1500)
        final = np.array(states[-1].position)
    finally:
        logs = [monitor.stop(), hold.stop(), dyn.stop()] + ([sim.stop()] if sim else [])
    everything = "\n".join(logs)
    assert "holding" in logs[1], everything
    # held: where it started (a few steps of sag before the first command), and back there
    # after the push: a joint's PD stops it anywhere its pull is below the joint's Coulomb
    # friction, within friction / KP of the target (0.06 rad on the soft wrist's joint5)
    stall = np.array([j.friction for j in load_urdf(ARM).joints]) / np.array(example_gains())
    assert np.abs(held - HOLD).max() < 0.05, (held, everything)
    assert np.all(np.abs(final - HOLD) < 0.02 + stall), (final, stall, everything)
    # after the push (the controller's switching on at full gravity torque may flag briefly:
    # the observer integrates the efforts as smooth, the simulator applies them as steps)
    lines = [x for x in logs[0].splitlines() if float(x.split()[0]) >= pushed]
    assert lines and lines[0].endswith("(joints joint2)"), everything  # its largest torque
    assert any(re.fullmatch(r"[\d.]+ collision on link5 \(joints (joint1,)?joint2,joint3,"
                            r"joint4,joint5\)", x) for x in lines), everything
    assert lines[-1].endswith(" clear"), everything


def test_the_contact_split_example_carries_the_quadrupeds_weight() -> None:
    """contact_split.py: the feet carry m (g + a) between them, and the impossible case says
    why."""
    r = subprocess.run([sys.executable, str(EXAMPLES / "contact_split.py")], capture_output=True,
                       text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    cases = r.stdout.split(":\n")
    weight = load_urdf(QUADRUPED, floating_base=True).total_mass * 9.81
    for case, feet in zip(cases[1:3], (4, 3), strict=True):
        up = [float(x) for x in re.findall(r"_foot: +([-\d.]+) N up", case)]
        assert len(up) == feet and all(f > 0 for f in up), case
        assert abs(sum(up) - weight) < 0.2, case  # printed to 0.1 N each
    assert "impossible: " in cases[3] and "moment" in cases[3], r.stdout
    # standing, the ZMP is under the centre of mass, well inside the four feet; speeding up
    # towards the lifted foot moves it near the three feet's edge, still inside
    margins = [float(x) for x in re.findall(r"ZMP .* m, ([-\d.]+) cm inside", r.stdout)]
    assert len(margins) == 2 and margins[0] > 10 * margins[1] > 0, r.stdout
    assert_shown("doc/tutorials/floating_base.md", "standing:", r.stdout)


def test_pinocchio_and_rbd_ros_side_by_side_agree() -> None:
    """concepts.md's program: every computation it sets side by side comes out the same in
    Pinocchio and in rbd_ros (each line's largest difference, as printed)."""
    r = subprocess.run([sys.executable, str(EXAMPLES / "pinocchio_side_by_side.py")],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    found = re.findall(r"^(\S.*?)\s+max difference (\S+)$", r.stdout, re.M)
    assert len(found) == 8, r.stdout
    for name, difference in found:
        assert float(difference) < 1e-10, (name, difference)
