"""A small rigid-body simulator: integrates our ABA at a fixed step (1 kHz by default; the
URDF's joint friction taken at the new velocity, :func:`~rbd_ros.dynamics.euler_step`),
publishes ``joint_states`` and applies the efforts it receives.

Simulated time is the simulator's own: step ``k`` is stamped ``t0 + k * dt`` (integer ns, ``t0``
the wall clock at start-up). It never catches up: a slow process slows simulated time down
instead of integrating a burst of steps with one stale torque.

- ``lockstep: false`` (default): one step per tick of a ``1 / rate`` wall timer, as a robot's
  driver publishes; efforts hold until the next command, and a command older than
  ``command_timeout`` (simulated seconds) drops to zero, as a driver would.
- ``lockstep: true``: the simulator waits for the controller. Every effort command steps it
  once; a stamped ``effort_command_states`` message answers the state of its stamp, and one
  for an older state is ignored. While it waits, it publishes the current state again every
  0.1 s (wall), so that a controller that starts late, or a lost message, never stalls the
  loop. A controller that answers each joint state sees exactly one step of delay, whatever the
  load on the machine.

Sensor noise (``position_noise``, ``velocity_noise``, ``effort_noise``: standard deviations of
white noise, zero by default; ``noise_seed``) is added to what ``joint_states`` says, as a real
driver's encoders and current sensors add it, never to the simulated state.

External wrenches (a push, a collision, a payload) come on ``external_wrench``
(geometry_msgs/WrenchStamped): ``header.frame_id`` names the link, and the wrench acts at that
link's origin, expressed in its frame. It holds from the next step until another message for the
same link replaces it; a zero wrench removes it. The efforts published in ``joint_states`` stay
the applied motor torques: the external ones are for an observer to find.
"""

from __future__ import annotations

import math
import sys
from typing import Any

import numpy as np
from geometry_msgs.msg import WrenchStamped
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray

from ..dynamics import Data, RbdError, euler_step, load_urdf_string
from ..wire.errors import InputError
from ..wire.joint_states import JointIndex
from .common import NodeBase, run
from .messages import float_values, stamp_ns, wrench_array
from .parameters import SIMULATOR, declare

REPUBLISH_S = 0.1  # lockstep: the current state again after this long without a command


class SimulatorNode(NodeBase):
    def __init__(self, **kwargs: Any) -> None:
        super().__init__("rbd_simulator", **kwargs)
        declare(self, SIMULATOR)
        rate = float(self.param("rate"))
        if not (math.isfinite(rate) and 1.0 <= rate <= 100_000.0):
            raise ValueError(f"rate must be 1 to 100000 steps per second, got {rate}")
        if not self.param("robot_description"):
            raise ValueError("set the robot_description parameter to the robot's URDF "
                             "(-p robot_description:=... or a --params-file)")
        with self.core_log():
            self.model = load_urdf_string(self.param("robot_description"))
        if self.model.has_free_flyer:
            raise RbdError("the simulator handles fixed-base robots only")
        self.data = Data(self.model)
        self.index = JointIndex(self.model)
        self.names = self.index.names
        self.joints = list(self.param("joints") or self.names)
        self.joints_v = self.index.order(self.joints)
        self.q = self.model.neutral()
        init = self.param("initial_positions")
        if init:
            if len(init) != len(self.joints) or not all(math.isfinite(x) for x in init):
                raise ValueError(f"initial_positions needs {len(self.joints)} finite values")
            self.q[self.index.q_index(np.array(self.joints_v))] = init
        self.q0 = self.q.copy()
        self.v = np.zeros(self.model.nv)
        self.tau = np.zeros(self.model.nv)
        self.wrenches: dict[str, np.ndarray] = {}  # link -> [force; torque] in its frame
        self.f_ext: np.ndarray | None = None  # the wrenches as the algorithms take them
        self.dt_ns = round(1e9 / rate)
        self.dt = self.dt_ns * 1e-9
        self.timeout_ns = round(float(self.param("command_timeout")) * 1e9)
        self.t0 = self.get_clock().now().nanoseconds
        self.k = 0  # steps taken
        self.k_command = -(1 << 62)  # step of the last command
        self.resets = 0
        self.lockstep = bool(self.param("lockstep"))
        self.waiting = 0  # lockstep: republish ticks since the last step
        self.noise = np.array([float(self.param(f"{x}_noise"))
                               for x in ("position", "velocity", "effort")])
        self.rng = np.random.default_rng(int(self.param("noise_seed")))
        self.pub = self.create_publisher(JointState, "joint_states", 10)
        self.msg = JointState(name=self.names)
        self.create_subscription(Float64MultiArray, "effort_commands", self._on_command, 10)
        self.create_subscription(JointState, "effort_command_states", self._on_command_states,
                                 10)
        self.create_subscription(WrenchStamped, "external_wrench", self._on_wrench, 10)
        if self.lockstep:
            self.create_timer(REPUBLISH_S, self._republish)
            self._publish()
        else:
            self.create_timer(self.dt, self._step)

    @property
    def stamp(self) -> int:
        return int(self.t0 + self.k * self.dt_ns)

    def _on_command(self, msg: Float64MultiArray) -> None:
        try:
            efforts = float_values(msg.data, self.joints, "efforts")
        except InputError as e:
            self.warn("bad_command", f"dropped effort_commands: {e}")
            return
        self._apply(self.joints_v, efforts)

    def _on_command_states(self, msg: JointState) -> None:
        try:
            idx, eff = self.index.efforts(msg.name, msg.effort)
        except InputError as e:
            self.warn("bad_command", f"dropped effort_command_states: {e}")
            return
        stamp = stamp_ns(msg.header.stamp)
        if self.lockstep and stamp and stamp != self.stamp:
            return  # the answer to a state already stepped past
        self._apply(idx, eff)

    def _on_wrench(self, msg: WrenchStamped) -> None:
        w = wrench_array(msg.wrench)
        wrenches = dict(self.wrenches)
        wrenches[msg.header.frame_id] = w
        if not np.any(w):
            del wrenches[msg.header.frame_id]
        try:
            f_ext = self.model.link_wrenches(wrenches) if wrenches else None
        except RbdError as e:  # an unknown link, a NaN
            self.warn("bad_wrench", f"dropped external_wrench (header.frame_id names the link "
                                    f"it acts on): {e}")
            return
        self.wrenches, self.f_ext = wrenches, f_ext

    def _apply(self, idx: Any, efforts: np.ndarray) -> None:
        self.tau[:] = 0.0
        self.tau[idx] = efforts
        self.k_command = self.k
        if self.lockstep:
            self._step()

    def _republish(self) -> None:
        self.waiting += 1
        if self.waiting > 1:  # a whole period without a step: the controller has not answered
            self._publish()

    def _step(self) -> None:
        """One semi-implicit Euler step, then publish the new state."""
        if (self.k - self.k_command) * self.dt_ns > self.timeout_ns:
            self.tau[:] = 0.0
        try:
            self.q, self.v = euler_step(self.model, self.data, self.q, self.v, self.tau,
                                        self.dt, self.f_ext)
            if not (np.all(np.isfinite(self.q)) and np.all(np.isfinite(self.v))):
                raise RbdError("the state is no longer finite")
        except RbdError as e:  # blown up (efforts too large for the step): start again
            self.resets += 1
            self.get_logger().error(f"simulation reset ({self.resets} so far): {e}",
                                    throttle_duration_sec=5.0)
            self.q, self.v = self.q0.copy(), np.zeros(self.model.nv)
        self.k += 1
        self.waiting = 0
        self._publish()

    def _publish(self) -> None:
        msg = self.msg
        msg.header.stamp.sec, msg.header.stamp.nanosec = divmod(self.stamp, 1_000_000_000)
        q, v, e = self.q[self.index.q_index(np.arange(self.model.nv))], self.v, self.tau
        if np.any(self.noise):
            q, v, e = (x + self.rng.normal(0.0, s, x.shape)
                       for x, s in zip((q, v, e), self.noise, strict=True))
        msg.position, msg.velocity, msg.effort = q.tolist(), v.tolist(), e.tolist()
        self.pub.publish(msg)


def main(args: list[str] | None = None) -> int:
    return run(SimulatorNode, args)


if __name__ == "__main__":
    sys.exit(main())
