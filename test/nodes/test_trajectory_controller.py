"""The trajectory controller node closing the loop on the simulator node (lockstep: every
command steps it once, so the loop is the same at any speed), driven as MoveIt drives a
controller: an rclpy ActionClient sending FollowJointTrajectory goals, and a JointTrajectory
on the controller's topic as rqt_joint_trajectory_controller sends one. Every goal ends with
the error code and reason control_msgs defines; the arm gets where the goal says."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from action_msgs.msg import GoalStatus
from armsim import HOLD
from builtin_interfaces.msg import Duration
from control_msgs.action import FollowJointTrajectory
from control_msgs.msg import JointTolerance
from rclpy.action import ActionClient
from rclpy.qos import QoSProfile, ReliabilityPolicy
from rosutil import LATCHED, PATIENCE_S, NodeProcess, Probe, params_file
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray, String
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

from rbd_ros.dynamics import Data, gravity, load_urdf
from rbd_ros.robots import ARM

Result = FollowJointTrajectory.Result
# the arm without Coulomb friction (its sign at rest is undefined: a joint held still would
# chatter), its viscous damping kept and known to the controller (friction: true)
URDF = re.sub(r'friction="[0-9.]+"', 'friction="0"', ARM.read_text())
MODEL = load_urdf(ARM)
NAMES = list(MODEL.state_joint_names)
#: the states and commands as they are now: the latest, never a backlog (a reliable queue of
#: every state trails the loop by seconds on a loaded machine)
LATEST = QoSProfile(depth=10, reliability=ReliabilityPolicy.BEST_EFFORT)
NS = "/tc"
ACTION = f"{NS}/rbd_trajectory_controller/follow_joint_trajectory"


@pytest.fixture(scope="module")
def rig(ros: None, tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """The simulator (lockstep, from HOLD) and the controller, in namespace /tc."""
    tmp = tmp_path_factory.mktemp("tc")
    sim = NodeProcess("rbd_ros.nodes.simulator_node", "-r", f"__ns:={NS}", "--params-file",
                      str(params_file(tmp / "sim.yaml", f"{NS}/rbd_simulator", {
                          "robot_description": URDF, "lockstep": True,
                          "initial_positions": [float(x) for x in HOLD]})))
    ctl = NodeProcess("rbd_ros.nodes.trajectory_controller_node", "-r", f"__ns:={NS}",
                      "-r", "commands:=effort_commands", "--params-file",
                      str(params_file(tmp / "tc.yaml", f"{NS}/rbd_trajectory_controller", {
                          "robot_description": URDF, "joints": NAMES, "friction": True,
                          "joint_states_qos": "reliable", "natural_frequency": 30.0,
                          "joint_state_timeout": 5.0})))
    yield {"sim": sim, "ctl": ctl}
    print(ctl.stop())
    print(sim.stop())


@pytest.fixture(scope="module")
def client(rig: dict[str, Any]) -> Iterator[tuple[Probe, Any, list[JointState]]]:
    from rosutil import Probe

    probe = Probe("tc_client")
    action = ActionClient(probe.node, FollowJointTrajectory, ACTION)
    states = probe.listen(JointState, f"{NS}/joint_states", LATEST)
    assert probe.spin_until(action.server_is_ready), "no action server"
    assert probe.spin_until(lambda: len(states) > 10), "the loop does not run"
    yield probe, action, states
    action.destroy()
    probe.close()


def point(t: float, q: Any, v: Any = (), a: Any = ()) -> JointTrajectoryPoint:
    return JointTrajectoryPoint(positions=[float(x) for x in q], velocities=[float(x) for x in v],
                                accelerations=[float(x) for x in a],
                                time_from_start=Duration(sec=int(t), nanosec=round(t % 1 * 1e9)))


def goal(names: list[str], *points: JointTrajectoryPoint, **fields: Any) -> Any:
    g = FollowJointTrajectory.Goal(**fields)
    g.trajectory = JointTrajectory(joint_names=names, points=list(points))
    return g


#: each goal's feedback, by its goal id
FEEDBACK: dict[bytes, list[Any]] = {}


def send(client: tuple[Probe, Any, list[JointState]], g: Any) -> Any:
    """The goal's handle once the server answers; its feedback goes to FEEDBACK."""
    from unique_identifier_msgs.msg import UUID

    probe, action, _ = client
    goal_id = UUID(uuid=list(np.random.default_rng().integers(0, 256, 16, dtype=np.uint8)))
    box = FEEDBACK[bytes(goal_id.uuid)] = []
    future = action.send_goal_async(g, feedback_callback=box.append, goal_uuid=goal_id)
    assert probe.spin_until(future.done), "no answer to the goal"
    return future.result()


def outcome(client: tuple[Probe, Any, list[JointState]], handle: Any) -> tuple[int, Any]:
    """(status, result) once the goal ends."""
    probe = client[0]
    future = handle.get_result_async()
    assert probe.spin_until(future.done), "the goal never ended"
    return future.result().status, future.result().result


def now(states: list[JointState]) -> np.ndarray:
    return np.array(states[-1].position)


def stamp(msg: Any) -> int:
    return int(msg.header.stamp.sec) * 10**9 + int(msg.header.stamp.nanosec)


def at_rest(client: tuple[Probe, Any, list[JointState]], after: Any = None,
            since: int = 0) -> np.ndarray:
    """The arm's position once a state it sends (stamped after ``since``, or the last feedback
    of the goal ``after``, a goal handle) says it is at rest: the probe's reliable stream of
    states may trail the action's answers by many states."""
    probe, _, states = client
    if after is not None:
        fb = FEEDBACK[bytes(after.goal_id.uuid)]
        assert fb, "no feedback from the goal"
        since = stamp(fb[-1].feedback)

    def resting() -> bool:
        return stamp(states[-1]) > since and np.abs(states[-1].velocity).max() < 1e-3

    assert probe.spin_until(resting), states[-1]
    return now(states)


def test_a_goal_is_followed_and_succeeds(client: tuple[Probe, Any, list[JointState]]) -> None:
    """Two points with velocities (cubic), then a third with accelerations (quintic): the goal
    succeeds, its feedback carries desired, actual and error for every joint, and the arm
    ends within the goal tolerance of the last point, at rest."""
    target = HOLD + np.linspace(0.2, -0.2, 7)
    mid = (HOLD + target) / 2
    handle = send(client, goal(NAMES, point(0.5, mid, np.full(7, 0.1)),
                               point(1.0, target, np.zeros(7), np.zeros(7)),
                               goal_tolerance=[JointTolerance(name=n, position=0.01)
                                               for n in NAMES]))
    fb = FEEDBACK[bytes(handle.goal_id.uuid)]
    assert handle.accepted
    status, result = outcome(client, handle)
    assert (status, result.error_code) == (GoalStatus.STATUS_SUCCEEDED, Result.SUCCESSFUL), \
        result.error_string
    assert np.abs(at_rest(client, handle) - target).max() < 0.01
    assert fb, "no feedback"
    f = fb[-1].feedback
    assert list(f.joint_names) == NAMES
    np.testing.assert_allclose(np.array(f.desired.positions) - f.actual.positions,
                               f.error.positions, atol=1e-12)


@pytest.mark.parametrize(("make", "code", "why"), [
    (lambda: goal(["no_such_joint"], point(1.0, [0.0])), Result.INVALID_JOINTS,
     r"joints \['no_such_joint'\] are not controlled"),
    (lambda: goal(NAMES), Result.INVALID_GOAL, "no points"),
    (lambda: goal(NAMES, point(1.0, HOLD[:3])), Result.INVALID_GOAL, "has 3 positions for 7"),
    (lambda: goal(NAMES, point(1.0, HOLD), point(1.0, HOLD)), Result.INVALID_GOAL,
     "strictly increasing"),
    (lambda: goal(NAMES, point(1.0, [np.nan, *HOLD[1:]])), Result.INVALID_GOAL,
     "NaN"),
    (lambda: goal(NAMES, point(20.0, HOLD + 10.0)), Result.INVALID_GOAL,
     r"position \S+ beyond its URDF limits"),
    (lambda: goal(NAMES, point(1.0, HOLD, np.full(7, 0.1))), Result.INVALID_GOAL,
     "the last point's velocities are not zero"),
    (lambda: goal(NAMES, point(0.01, HOLD + 0.5)), Result.INVALID_GOAL,
     "beyond its URDF velocity limit"),
    # joint2 0.3 rad in 0.25 s from rest (cubic): 1.8 rad/s at most, within its 2.2, but about
    # twice its 87 N m at the start (the check's figures: test/dynamics/test_limits.py)
    (lambda: goal(NAMES, point(0.25, HOLD + np.eye(7)[1] * 0.3, np.zeros(7))),
     Result.INVALID_GOAL, r"beyond the URDF's effort limits: joint2 at 0\.\d{3} s: effort "
                          r"\S+ N m over its URDF limit 87 N m"),
    (lambda: goal(NAMES[:2], point(1.0, HOLD[:2]),
                  path_tolerance=[JointTolerance(name=NAMES[3], position=0.1)]),
     Result.INVALID_JOINTS, "which the goal does not move"),
])
def test_a_goal_that_cannot_be_followed_is_aborted_with_the_reason(
        client: tuple[Probe, Any, list[JointState]], make: Any, code: int, why: str) -> None:
    handle = send(client, make())
    status, result = outcome(client, handle)
    assert status == GoalStatus.STATUS_ABORTED
    assert result.error_code == code
    assert re.search(why, result.error_string), result.error_string


def test_an_old_trajectory_is_refused(client: tuple[Probe, Any, list[JointState]]) -> None:
    _, _, states = client
    g = goal(NAMES, point(1.0, HOLD))
    g.trajectory.header.stamp = states[-1].header.stamp
    g.trajectory.header.stamp.sec -= 10  # ended nine seconds ago
    status, result = outcome(client, send(client, g))
    assert (status, result.error_code) == (GoalStatus.STATUS_ABORTED,
                                           Result.OLD_HEADER_TIMESTAMP)
    assert "before the last joint state's stamp" in result.error_string


def test_tolerances_abort_with_the_joint_and_how_far(
        client: tuple[Probe, Any, list[JointState]]) -> None:
    """A path tolerance no arm meets (1e-9 rad) aborts on the path; a goal tolerance no arm
    meets within a goal_time_tolerance of 0.2 s aborts after the end."""
    _, _, states = client
    here = now(states)
    tight = [JointTolerance(name=n, position=1e-9) for n in NAMES]
    status, result = outcome(client, send(client, goal(NAMES, point(1.0, here + 0.1),
                                                       path_tolerance=tight)))
    assert (status, result.error_code) == (GoalStatus.STATUS_ABORTED,
                                           Result.PATH_TOLERANCE_VIOLATED)
    assert re.match(r"\w+: position error \S+ beyond the tolerance 1e-09 at \S+ s of the "
                    "trajectory", result.error_string), result.error_string
    here = now(states)
    status, result = outcome(client, send(client, goal(
        NAMES, point(0.5, here), goal_tolerance=[JointTolerance(name=n, position=1e-15,
                                                                velocity=-1.0) for n in NAMES],
        goal_time_tolerance=Duration(nanosec=200_000_000))))
    assert (status, result.error_code) == (GoalStatus.STATUS_ABORTED,
                                           Result.GOAL_TOLERANCE_VIOLATED)
    assert "goal_time_tolerance 0.2 s" in result.error_string, result.error_string


def test_a_new_goal_preempts_smoothly_and_a_cancel_holds(
        client: tuple[Probe, Any, list[JointState]]) -> None:
    """A slow goal, replaced a second in (by its feedback's stamps) by another: the first is
    aborted as preempted, the second succeeds; a third, canceled a second in, ends canceled
    and the arm stays where it was."""
    probe = client[0]
    start = at_rest(client)

    def into(handle: Any, seconds: float) -> bool:  # its feedback: 20 a second of its stamps
        return len(FEEDBACK[bytes(handle.goal_id.uuid)]) > 20 * seconds

    first = send(client, goal(NAMES, point(8.0, start + 0.3)))
    assert probe.spin_until(lambda: into(first, 1.0))
    second = send(client, goal(NAMES, point(1.0, start - 0.1)))
    status, result = outcome(client, first)
    assert (status, result.error_code) == (GoalStatus.STATUS_ABORTED, Result.INVALID_GOAL)
    assert result.error_string == "preempted by a newer goal"
    status, result = outcome(client, second)
    assert status == GoalStatus.STATUS_SUCCEEDED, result.error_string
    assert np.abs(at_rest(client, second) - (start - 0.1)).max() < 0.02

    third = send(client, goal(NAMES, point(8.0, start + 0.3)))
    assert probe.spin_until(lambda: into(third, 1.0))
    cancel = third.cancel_goal_async()
    assert probe.spin_until(cancel.done)
    status, result = outcome(client, third)
    assert status == GoalStatus.STATUS_CANCELED, result.error_string
    assert result.error_string == "canceled: holding where the arm is"
    held = at_rest(client, third)
    assert 0.02 < np.abs(held - (start - 0.1)).max() < 0.3  # stopped on the way
    assert np.abs(at_rest(client) - held).max() < 0.01, "the arm did not hold"


def test_a_goal_naming_some_joints_holds_the_others(
        client: tuple[Probe, Any, list[JointState]]) -> None:
    start = at_rest(client)
    handle = send(client, goal([NAMES[5], NAMES[1]], point(0.8, [start[5] - 0.2,
                                                                 start[1] + 0.1])))
    status, result = outcome(client, handle)
    assert status == GoalStatus.STATUS_SUCCEEDED, result.error_string
    end = at_rest(client, handle)
    assert end[5] - start[5] == pytest.approx(-0.2, abs=0.01)
    assert end[1] - start[1] == pytest.approx(0.1, abs=0.01)
    others = [k for k in range(7) if k not in (1, 5)]
    assert np.abs(end[others] - start[others]).max() < 0.01


def test_the_topic_moves_the_arm_and_an_empty_trajectory_holds(
        client: tuple[Probe, Any, list[JointState]]) -> None:
    """A JointTrajectory on ~/joint_trajectory, stamped to start two simulated seconds after
    the controller's time (the last feedback of a short goal): the arm waits, moves, and holds
    its last point; an empty one sent while a slower motion runs holds the arm where it is."""
    probe, _, states = client
    pub = probe.node.create_publisher(JointTrajectory,
                                      f"{NS}/rbd_trajectory_controller/joint_trajectory", 10)
    assert probe.spin_until(lambda: pub.get_subscription_count() > 0)
    start = at_rest(client)
    clock = send(client, goal(NAMES, point(0.1, start)))
    assert outcome(client, clock)[0] == GoalStatus.STATUS_SUCCEEDED
    t0 = stamp(FEEDBACK[bytes(clock.goal_id.uuid)][-1].feedback) + 2 * 10**9
    msg = JointTrajectory(joint_names=NAMES, points=[point(0.5, start + 0.1)])
    msg.header.stamp.sec, msg.header.stamp.nanosec = divmod(t0, 10**9)
    pub.publish(msg)
    first = start + 0.1
    assert np.abs(at_rest(client, since=t0 + 10**9 // 2) - first).max() < 0.01
    before = [m for m in states if stamp(m) < t0]
    assert np.abs(np.array(before[-1].position) - start).max() < 0.01  # waited for its start
    pub.publish(JointTrajectory(joint_names=NAMES, points=[point(8.0, start - 0.3)]))
    assert probe.spin_until(lambda: np.abs(now(states) - first).max() > 0.05)
    pub.publish(JointTrajectory(joint_names=NAMES))  # empty: hold
    held = at_rest(client, since=stamp(states[-1]))  # (a state of the motion)
    assert 0.05 < np.abs(held - first).max() < 0.3
    probe.node.destroy_publisher(pub)


def test_holding_at_rest_the_commands_are_gravity(
        client: tuple[Probe, Any, list[JointState]], rig: dict[str, Any]) -> None:
    """Held still, the controller's efforts are the model's gravity torques at the measured
    posture, up to its PD's answer to the error that is left."""
    probe, _, states = client
    cmd = probe.listen(Float64MultiArray, f"{NS}/effort_commands", LATEST)
    assert probe.spin_until(lambda: len(cmd) > 200)
    d = Data(MODEL)
    g = gravity(MODEL, d, now(states))
    np.testing.assert_allclose(cmd[-1].data, g, atol=0.05 * np.abs(g).max())
    status = probe.listen(String, f"{NS}/rbd_trajectory_controller/status", LATCHED)
    # (a clamp of an earlier test's motion is said for a second after the last)
    assert probe.spin_until(lambda: bool(status) and status[-1].data == "ok"), status[-1].data


def test_ros2_action_send_goal_drives_it(client: tuple[Probe, Any, list[JointState]]) -> None:
    """`ros2 action send_goal` (ros2cli at Jazzy, where it is installed beside the package: the
    pip set-up has no ros2cli wheel) sends a goal from YAML and gets the result."""
    import os
    import shutil
    import subprocess
    import sys

    ros2 = shutil.which("ros2", path=str(Path(sys.executable).parent))
    if ros2 is None:
        pytest.skip("no ros2 CLI beside this Python (ros2cli, ros2action, rosidl_runtime_py)")
    start = at_rest(client)
    target = start + 0.05
    goal_yaml = ("{trajectory: {joint_names: [" + ", ".join(NAMES) + "], points: [{positions: ["
                 + ", ".join(f"{x:.6f}" for x in target) + "], time_from_start: {sec: 1}}]}}")
    env = {**os.environ, "AMENT_PREFIX_PATH": sys.prefix}
    r = subprocess.run([ros2, "action", "send_goal", "--feedback", ACTION,
                        "control_msgs/action/FollowJointTrajectory", goal_yaml],
                       capture_output=True, text=True, timeout=PATIENCE_S, env=env)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "Goal accepted" in r.stdout and "error_code: 0" in r.stdout, r.stdout
    assert "Goal finished with status: SUCCEEDED" in r.stdout, r.stdout
    # the arm at rest after the stamp of the last feedback the CLI printed
    sec, nanosec = re.findall(r"stamp:\s+sec: (\d+)\s+nanosec: (\d+)", r.stdout)[-1]
    last = int(sec) * 10**9 + int(nanosec)
    assert np.abs(at_rest(client, since=last) - target).max() < 0.01
