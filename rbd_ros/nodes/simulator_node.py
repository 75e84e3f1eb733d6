"""A small rigid-body simulator: integrates our ABA at a fixed step (1 kHz by default),
publishes ``joint_states`` and applies the efforts it receives on ``effort_commands``.

It is the robot of the demo and of the benchmarks: semi-implicit Euler at ``1 / rate``
seconds per step, stepped on a wall timer that catches up (several steps per tick) when the
timer runs late, so simulated time keeps pace with the clock. Efforts hold until the next
command; a command older than ``command_timeout`` is dropped to zero, as a driver would.
"""

from __future__ import annotations

import math
import sys
from typing import Any

import numpy as np
from rcl_interfaces.msg import ParameterDescriptor, ParameterType
from rclpy.parameter import Parameter
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray

from ..dynamics import Data, RbdError, aba, integrate, load_urdf_string
from .common import NodeBase, run
from .joint_states import JointIndex

MAX_CATCH_UP = 50  # steps per tick at most; beyond that the simulation slows down instead


class SimulatorNode(NodeBase):
    def __init__(self, **kwargs: Any) -> None:
        super().__init__("rbd_simulator", **kwargs)
        d = self.declare_parameter
        d("robot_description", "", ParameterDescriptor(
            type=ParameterType.PARAMETER_STRING, read_only=True, description="URDF"))
        d("rate", 1000.0, ParameterDescriptor(
            type=ParameterType.PARAMETER_DOUBLE, read_only=True, description="steps per second"))
        d("initial_positions", Parameter.Type.DOUBLE_ARRAY, ParameterDescriptor(
            type=ParameterType.PARAMETER_DOUBLE_ARRAY, read_only=True,
            description="in the order of `joints`; unset: zero"))
        d("joints", Parameter.Type.STRING_ARRAY, ParameterDescriptor(
            type=ParameterType.PARAMETER_STRING_ARRAY, read_only=True,
            description="order of effort_commands; unset: the model's joints"))
        d("command_timeout", 0.1, ParameterDescriptor(
            type=ParameterType.PARAMETER_DOUBLE, read_only=True,
            description="seconds after which an effort command is dropped to zero"))
        self.model = load_urdf_string(self.param("robot_description"))
        if self.model.has_free_flyer:
            raise RbdError("the simulator handles fixed-base robots only")
        self.data = Data(self.model)
        index = JointIndex(self.model)
        self.names = index.names
        self.joints = list(self.param("joints") or self.names)
        self.joints_v = index.order(self.joints)
        self.q = self.model.neutral()
        init = self.param("initial_positions")
        if init:
            if len(init) != len(self.joints) or not all(math.isfinite(x) for x in init):
                raise RbdError(f"initial_positions needs {len(self.joints)} finite values")
            self.q[self.joints_v] = init
        self.q0 = self.q.copy()
        self.v = np.zeros(self.model.nv)
        self.tau = np.zeros(self.model.nv)
        self.dt = 1.0 / float(self.param("rate"))
        self.timeout = float(self.param("command_timeout"))
        self.t_sim = self._now()
        self.t_command = -math.inf
        self.pub = self.create_publisher(JointState, "joint_states", 10)
        self.create_subscription(Float64MultiArray, "effort_commands", self._on_command, 10)
        self.create_timer(self.dt, self._tick)

    def _now(self) -> float:
        return self.get_clock().now().nanoseconds * 1e-9

    def _on_command(self, msg: Float64MultiArray) -> None:
        data = np.asarray(msg.data, dtype=np.float64)
        if data.shape != (len(self.joints),) or not np.all(np.isfinite(data)):
            self.get_logger().warning(
                f"dropped effort_commands: expected {len(self.joints)} finite efforts in the "
                f"order {self.joints}", throttle_duration_sec=5.0)
            return
        self.tau[:] = 0.0
        self.tau[self.joints_v] = data
        self.t_command = self._now()

    def _tick(self) -> None:
        now = self._now()
        steps = min(int((now - self.t_sim) / self.dt), MAX_CATCH_UP)
        if steps <= 0:
            return
        tau = self.tau if now - self.t_command < self.timeout else np.zeros(self.model.nv)
        try:
            for _ in range(steps):  # semi-implicit Euler
                self.v += self.dt * aba(self.model, self.data, self.q, self.v, tau,
                                        friction=True)
                self.q = integrate(self.model, self.q, self.v, self.dt)
        except RbdError as e:  # blown up (efforts too large for the step): start again
            self.get_logger().error(f"simulation reset: {e}", throttle_duration_sec=5.0)
            self.q, self.v = self.q0.copy(), np.zeros(self.model.nv)
        self.t_sim = max(self.t_sim + steps * self.dt, now - MAX_CATCH_UP * self.dt)
        msg = JointState(name=self.names, position=self.q[: len(self.names)].tolist(),
                         velocity=self.v.tolist(), effort=tau.tolist())
        msg.header.stamp = self.get_clock().now().to_msg()
        self.pub.publish(msg)


def main(args: list[str] | None = None) -> int:
    return run(SimulatorNode, args)


if __name__ == "__main__":
    sys.exit(main())
