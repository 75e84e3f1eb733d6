"""The trajectory controller beside a driver and an effort controller, each a process or node of
its own over DDS, as it meets them on a robot: its commands come in the effort controller's own
``joints`` order, read from that controller (never guessed); and when the joint states stop,
the goal under way is aborted saying why, one last command (gravity at the last measured
posture) is left for the effort controller to keep, none follows until fresh states come, a
goal meanwhile is refused with the reason, and fresh states are answered holding where the arm
is. Judged by what the node sent and in what order, never by how soon anything arrives."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest
from action_msgs.msg import GoalStatus
from builtin_interfaces.msg import Duration, Time
from control_msgs.action import FollowJointTrajectory
from rclpy.action import ActionClient
from rosutil import LATCHED, SENSOR, EffortController, NodeProcess, Probe, Process, params_file
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray, String
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

from rbd_ros.dynamics import Data, gravity, load_urdf
from rbd_ros.robots import ARM

NAMES = [f"joint{k}" for k in range(1, 8)]
CONTROLLER_JOINTS = ["joint3", "joint1", "joint2", "joint7", "joint5", "joint4", "joint6"]
MODEL = load_urdf(ARM)
Q = np.array([0.1, 0.5, -0.2, -1.1, 0.3, 0.8, -0.4])
#: gravity at Q in the effort controller's order: the command holding the arm still at Q
G = gravity(MODEL, Data(MODEL), Q)[[NAMES.index(j) for j in CONTROLLER_JOINTS]]
NS = "/tcs"
NODE = f"{NS}/rbd_trajectory_controller"
COMMANDS = "/effort_controller/commands"
Result = FollowJointTrajectory.Result


@pytest.fixture(scope="module")
def effort_controller(ros: None) -> Iterator[Process]:
    """The effort controller, its joints in CONTROLLER_JOINTS' order."""
    proc = EffortController(CONTROLLER_JOINTS)
    yield proc
    proc.stop()


@pytest.fixture(scope="module")
def controller(effort_controller: Process, tmp_path_factory: pytest.TempPathFactory
               ) -> Iterator[NodeProcess]:
    """The trajectory controller, ``joints`` unset, its commands remapped to the effort
    controller's topic; joint states older than 0.5 s are stale."""
    params = params_file(tmp_path_factory.mktemp("tcs") / "tcs.yaml", NODE,
                         {"robot_description": ARM.read_text(), "joint_state_timeout": 0.5})
    proc = NodeProcess("rbd_ros.nodes.trajectory_controller_node", "-r", f"__ns:={NS}",
                       "-r", f"commands:={COMMANDS}", "--params-file", str(params))
    yield proc
    print(proc.stop())


class Driver:
    """The arm's driver: its joint states at Q (the arm does not move: only what the controller
    sends is judged), stamped now, while the probe spins."""

    def __init__(self, probe: Probe) -> None:
        self.probe = probe
        self.pub = probe.node.create_publisher(JointState, f"{NS}/joint_states", SENSOR)

    def step(self) -> None:
        t = time.time_ns()
        msg = JointState(name=NAMES, position=Q.tolist(), velocity=[0.0] * 7)
        msg.header.stamp = Time(sec=t // 10**9, nanosec=t % 10**9)
        self.pub.publish(msg)
        self.probe.spin_for(0.005)

    def until(self, done: Any) -> bool:
        def stepped() -> bool:
            self.step()
            return bool(done())

        return bool(self.probe.spin_until(stepped))


def test_commands_come_in_the_effort_controllers_order(controller: NodeProcess,
                                                       probe: Probe) -> None:
    """``joints`` unset, commands remapped to /effort_controller/commands: held still at the
    first measured position, the commands are the gravity torques there, in that controller's
    ``joints`` order."""
    cmd = probe.listen(Float64MultiArray, COMMANDS)
    assert Driver(probe).until(lambda: len(cmd) > 5), f"{len(cmd)} commands"
    np.testing.assert_allclose(cmd[-1].data, G, atol=1e-9)
    assert controller.alive()


def test_stale_joint_states_abort_the_goal_and_leave_gravity(controller: NodeProcess,
                                                            probe: Probe) -> None:
    driver = Driver(probe)
    cmd = probe.listen_sent(Float64MultiArray, COMMANDS)
    status = probe.listen(String, f"{NODE}/status", LATCHED)
    action = ActionClient(probe.node, FollowJointTrajectory, f"{NODE}/follow_joint_trajectory")
    try:
        assert driver.until(lambda: action.server_is_ready() and len(cmd) > 5)
        # a slow goal: joint1 0.3 rad further in 10 s, under way when the states stop
        goal = FollowJointTrajectory.Goal(trajectory=JointTrajectory(
            joint_names=["joint1"], points=[JointTrajectoryPoint(
                positions=[float(Q[0]) + 0.3], time_from_start=Duration(sec=10))]))
        sent = action.send_goal_async(goal)
        assert driver.until(sent.done) and sent.result().accepted
        for _ in range(60):  # the goal under way for a while (0.3 s or more)
            driver.step()
        result = sent.result().get_result_async()
        assert probe.spin_until(result.done), "no result once the joint states stopped"
        assert result.result().status == GoalStatus.STATUS_ABORTED
        r = result.result().result
        assert r.error_code == Result.PATH_TOLERANCE_VIOLATED, r
        assert "stale joint_states" in r.error_string, r.error_string
        assert probe.spin_until(lambda: bool(status) and "stale" in status[-1].data)
        assert "gravity compensation of the last posture" in status[-1].data, status[-1].data
        # the last command is gravity at the last measured posture (the effort controller
        # keeps it), and nothing follows it while no state comes (2 s: the states in flight
        # answered, a node that a loaded machine stalls caught up)
        probe.spin_for(2.0)
        count = len(cmd)
        last = max(cmd, key=lambda c: c[0])[1]
        np.testing.assert_allclose(last.data, G, atol=1e-9)
        probe.spin_for(2.0)
        assert len(cmd) == count, f"{len(cmd) - count} commands sent with no joint state"
        # a goal while the states are stale: refused, saying why
        refused = action.send_goal_async(goal)
        assert probe.spin_until(refused.done)
        answer = refused.result().get_result_async()
        assert probe.spin_until(answer.done)
        assert answer.result().status == GoalStatus.STATUS_ABORTED
        assert answer.result().result.error_code == Result.INVALID_GOAL
        assert "stale joint_states" in answer.result().result.error_string
        # fresh states: answered again, holding where the arm is, and ~/status says ok
        assert driver.until(lambda: len(cmd) > count + 20 and status[-1].data == "ok"), \
            status[-1].data
        np.testing.assert_allclose(max(cmd, key=lambda c: c[0])[1].data, G, atol=1e-9)
        assert controller.alive()
    finally:
        action.destroy()
