"""The dynamics node: live gravity, feed-forward and external torques and predicted
accelerations from ``/joint_states``, and dynamics services on the live model.

Topics (relative names: remap them to your driver's; ``~/`` is under the node's name):

- in ``joint_states`` (sensor_msgs/JointState, best effort, 20 deep): the measured state, by
  name
- in ``robot_description`` (std_msgs/String, transient local): the URDF
- in ``effort_commands`` (std_msgs/Float64MultiArray): commanded efforts in ``joints`` order,
  as a ros2_control JointGroupEffortController takes them
- in ``effort_command_states`` (sensor_msgs/JointState): commanded efforts by name
- in ``desired_trajectory`` (trajectory_msgs/JointTrajectory): the motion to feed forward
- out ``~/gravity_torques`` (sensor_msgs/JointState, effort): g(q)
- out ``~/gravity_command`` (std_msgs/Float64MultiArray): g(q) in ``joints`` order
- out ``~/feedforward_torques`` (sensor_msgs/JointState, effort): RNEA at the desired state
- out ``~/feedforward_command`` (std_msgs/Float64MultiArray): the same in ``joints`` order
- out ``~/predicted_accelerations`` (trajectory_msgs/JointTrajectory, one point): ABA for the
  last commanded efforts, with the positions and velocities it was computed at
- out ``~/external_torques`` (sensor_msgs/JointState, effort): the external joint torques
  by the generalized-momentum observer (De Luca & Mattone 2005) from the measured positions,
  velocities (or, without them, a fit to the positions) and efforts: no acceleration, each
  joint's residual following its external torque through two first-order lags of time
  constant ``1 / external_torques_gain``. It restarts from zero after a gap in the stamps (over
  ``observer.GAP_S``, 0.5 s), when they go back, and when the model, ``observer_gain`` or
  ``friction`` changes (``external_torques_gain`` restarts it alone; new collision thresholds
  apply from the next state, the observer going on).
- out ``~/external_torques_from_acceleration`` (sensor_msgs/JointState, effort): the same
  quantity as the model's torque at the measured motion minus the measured effort, the
  acceleration differenced from the velocities: no lag, but the differences' noise

- out ``~/collision`` (diagnostic_msgs/DiagnosticArray), when ``collision_thresholds`` is set:
  a status for the whole robot (level ERROR while any joint is flagged; the likely contact
  links and the flagged joints in its message and values) and one per joint (its residual and
  threshold), for the joints ``collision_joints`` names (else ``joints``, else the model's).
  A joint is flagged when its residual (the same observer's at ``observer_gain``: sooner
  than ``~/external_torques``, and noisier) exceeds its threshold and cleared when it falls
  below ``collision_release`` times it. The threshold grows with the joint's speed ``s``
  (through the residual's lags) as the model's error does: ``collision_thresholds +
  collision_thresholds_moving tanh(s / observer.MOVING_SPEED) + collision_thresholds_per_speed
  s`` (0.02 rad/s; ``rbd-ros analyze`` of free motion proposes all three). No joint is flagged
  in the first ``observer.SETTLE / observer_gain`` s after the observer (re)starts. Published
  when a flag changes, and at least once a second of joint-state stamps; when a gap in the
  stamps restarts the observer, at once, with every flag cleared.

- out ``~/status`` (std_msgs/String, latched): "ok", or what stops an output now (stale joint
  states, no command order, clamped commands, no model), when it changes
- out ``/diagnostics`` (diagnostic_msgs/DiagnosticArray): the node's health once a second

Both external-torque outputs are the torque the environment applies at each joint
(``M(q) qdd + h(q, v) = effort + tau_ext``): a hand pushing a joint forward is positive.
Every output is stamped with the stamp of the joint state it was computed from.
"""

from __future__ import annotations

import math
import sys
import time
from array import array
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import rclpy
from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus, KeyValue
from rcl_interfaces.msg import SetParametersResult
from rclpy.parameter import Parameter
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray, String
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

from ..dynamics import Data, Model, RbdError, aba, crba, gravity, load_urdf_string, rnea
from ..dynamics.control import Spline
from ..dynamics.control.limits import check_limits
from ..dynamics.estimation.observer import (
    GAP_S,
    SETTLE,
    THRESHOLD_PARAMETERS,
    CollisionDetector,
    MomentumObserver,
    external_torques,
    likely_links,
)
from ..dynamics.multibody.model import payload_parts
from ..wire.errors import InputError
from ..wire.joint_names import NameMap
from ..wire.joint_states import JointStateMerger, format_stamp
from ..wire.stamped import JointStateBytes
from ..wire.trajectory import trajectory_points
from .common import (
    LATCHED,
    NodeBase,
    input_qos,
    run,
)
from .controllers import Controllers
from .interfaces import ForwardDynamics, GravityTorques, InverseDynamics, MassMatrix
from .messages import (
    float_values,
    joint_state_reader,
    stamp_msg,
    stamp_ns,
    wrench_array,
)
from .parameters import DYNAMICS, check_declared, declare, refusal

COLLISION_HEARTBEAT_NS = 1_000_000_000
WATCHDOG_S = 0.02  # how often silent inputs, subscribers and controllers are looked at


@dataclass
class FeedForward:
    """The desired trajectory: its joints' velocity indices, its points as
    :func:`~..wire.trajectory.trajectory_points` reads them, the stamp it starts at (ns; 0: the next
    joint state's) and its motion, made from the measured state when the first joint state
    after it comes."""

    v_index: np.ndarray
    points: tuple[list[int], np.ndarray, np.ndarray | None, np.ndarray | None]
    start_ns: int
    spline: Spline | None = None


def _same_points(a: tuple[Any, ...], b: tuple[Any, ...]) -> bool:
    """Whether two trajectories' points (:func:`~..wire.trajectory.trajectory_points`) are
    the same."""
    return a[0] == b[0] and all(
        (x is None and y is None) or (x is not None and y is not None
                                      and np.array_equal(x, y, equal_nan=True))
        for x, y in zip(a[1:], b[1:], strict=True))


class Live:
    """Everything that depends on the model; replaced whole when the model changes."""

    def __init__(self, model: Model, joints: Sequence[str], names: NameMap,
                 order: Sequence[str] | None) -> None:
        self.model = model
        self.data = Data(model)
        self.merger = JointStateMerger(model, names)
        self.index = self.merger.joints
        self.names = list(self.index.names)  # output order of the JointState topics
        self.out_v = np.array([self.index.index[n] for n in self.names], dtype=np.int64)
        self.joints = list(joints) or self.names
        # the joints collision_thresholds* are for, in their order (set with the detector)
        self.watched: list[str] = []
        self.watched_v = np.zeros(0, dtype=np.int64)
        self.watched_cols = self.watched_v  # in the observer's last state (-1: held)
        # order of the Float64MultiArray topics: `joints`, or the controller's; None: unknown,
        # and nothing is read or published on them
        self.order = list(order or [])
        self.order_v = (None if order is None
                        else np.array(self.index.order(self.order), dtype=np.int64))
        limits = np.array([model.joint(n).effort for n in self.order], dtype=np.float64)
        self.limits = np.where(limits > 0, limits, np.inf)  # effort 0 in a URDF: none given
        self.command = np.full(model.nv, np.nan)
        if model.has_free_flyer:
            self.command[:6] = 0.0  # an unactuated base
        self.trajectory: FeedForward | None = None
        self.messages: dict[int, Any] = {}  # output message per publisher, names filled in
        held = np.array([self.index.index[n] for n in names.held if n in self.index.index],
                        dtype=np.int64)
        self.held_v = np.intersect1d(self.out_v, held)  # no effort: their residual is NaN
        self.measured = np.setdiff1d(self.out_v, held)
        self.tau = np.zeros(model.nv)  # the observer's efforts: none for the base, held joints
        self.efforts_given = False  # whether the merger has had every measured joint's effort
        self.observer: MomentumObserver | None = None
        self.observed_ns = 0  # stamp of the observer's last state (ns); its start: t0_ns
        self.t0_ns = 0
        self.detector: CollisionDetector | None = None
        self.reported_ns = -COLLISION_HEARTBEAT_NS  # stamp of the last ~/collision message

    def prepare(self, *publishers: Any) -> None:
        for pub in publishers:
            if pub.msg_type is JointState:
                self.messages[id(pub)] = JointStateBytes(self.names)
            else:
                self.messages[id(pub)] = pub.msg_type()


class DynamicsNode(NodeBase):
    def __init__(self, **kwargs: Any) -> None:
        super().__init__("rbd_dynamics", **kwargs)
        self.live: Live | None = None
        self.bare: Model | None = None  # the model in use without its payload
        declare(self, DYNAMICS)
        self.name_map()  # a bad rule stops the node with its reason
        self._check_startup()
        self.friction = bool(self.param("friction"))
        self.timeout_ns = round(self.param("joint_state_timeout") * 1e9)
        self.clamp = bool(self.param("clamp_to_effort_limits"))
        self.add_on_set_parameters_callback(self._on_set_parameters)

        qos_in = input_qos(self.param("joint_states_qos"))
        on_live = self.on_live
        self.reader = joint_state_reader(JointState)
        self.create_subscription(JointState, "joint_states", on_live(self._on_joint_states),
                                 qos_in, raw=True)
        self.quiet_subscription(String, "robot_description", self._on_description, LATCHED)
        self.sub_commands = self.quiet_subscription(Float64MultiArray, "effort_commands",
                                                    on_live(self._on_command_array), 10)
        self.quiet_subscription(JointState, "effort_command_states",
                                on_live(self._on_command_states), 10)
        self.quiet_subscription(JointTrajectory, "desired_trajectory",
                                on_live(self._on_trajectory), 10)
        self.pub_gravity = self.quiet_publisher(JointState, "~/gravity_torques")
        self.pub_gravity_cmd = self.quiet_publisher(Float64MultiArray, "~/gravity_command")
        self.pub_ff = self.quiet_publisher(JointState, "~/feedforward_torques")
        self.pub_ff_cmd = self.quiet_publisher(Float64MultiArray, "~/feedforward_command")
        self.pub_accel = self.quiet_publisher(JointTrajectory, "~/predicted_accelerations")
        self.pub_external = self.quiet_publisher(JointState, "~/external_torques")
        self.pub_external_acc = self.quiet_publisher(JointState,
                                                     "~/external_torques_from_acceleration")
        self.pub_collision = self.quiet_publisher(DiagnosticArray, "~/collision")
        self.pub_status = self.quiet_publisher(String, "~/status", LATCHED)
        self.outputs = [self.pub_gravity, self.pub_gravity_cmd, self.pub_ff, self.pub_ff_cmd,
                        self.pub_accel, self.pub_external, self.pub_external_acc]
        self.guarded_service(InverseDynamics, "~/inverse_dynamics", self._srv_inverse)
        self.guarded_service(ForwardDynamics, "~/forward_dynamics", self._srv_forward)
        self.guarded_service(MassMatrix, "~/mass_matrix", self._srv_mass_matrix)
        self.guarded_service(GravityTorques, "~/gravity_torques", self._srv_gravity)
        self.timer: rclpy.timer.Timer | None = None
        self._set_rate(self.param("publish_rate"))
        self._last_stamp: int | None = None  # ns
        self._arrived = 0.0  # time.monotonic() of the last joint_states message
        self.saturations = 0  # *_command values clamped to their limits, since the start
        self._saturated = 0.0  # time.monotonic() of the last clamp
        self.controllers = Controllers(self, self._reorder)
        self.create_timer(WATCHDOG_S, self._watchdog)
        if self.param("robot_description"):
            self._install(self.param("robot_description"), "the robot_description parameter",
                          from_parameter=True)

    # ------------------------------------------------------------------ parameters
    def _check_startup(self) -> None:
        check_declared(self.param, DYNAMICS)
        reason = self._payload_invalid({})
        if reason:
            raise ValueError(reason)

    def _payload_invalid(self, changed: dict[str, Any]) -> str:
        """Why ``payload_link`` and ``payload`` (``changed`` ones set) cannot be carried by the
        model in use, or ''. Without a model yet, only the payload itself is checked."""
        link, values = self._payload(changed)
        if not values:
            return ""
        try:
            if self.bare is None or not link:
                payload_parts(values)
            else:
                self.bare.with_payload(link, values)
        except RbdError as e:
            return str(e)
        return ""

    def _payload(self, changed: dict[str, Any]) -> tuple[str, list[float]]:
        """``payload_link`` and ``payload``, those in ``changed`` as they are being set."""
        return (changed.get("payload_link", self.param("payload_link")) or "",
                list(changed.get("payload", self.param("payload")) or []))

    def _carrying(self, bare: Model, changed: dict[str, Any] | None = None) -> Model:
        """``bare`` with the payload of the parameters (``changed`` ones being set), if any; a
        payload it cannot carry (a link it lacks) is left off, said in an error."""
        link, values = self._payload(changed or {})
        if values and not link:
            self.get_logger().warning("a payload is set but no payload_link: it is carried once "
                                      "payload_link names the link that holds it")
        if not (link and values):
            return bare
        try:
            return bare.with_payload(link, values)
        except RbdError as e:
            self.get_logger().error(f"no payload: {e}; set payload_link and payload again")
            return bare

    def _invalid(self, p: Parameter[Any]) -> str:
        """Why parameter ``p`` cannot be set, or '' if it can (ranges: their descriptors; the
        rest: its row of DYNAMICS, then what the model in use allows)."""
        v = p.value
        reason = refusal(DYNAMICS, p.name, v)
        if reason or self.live is None or v is None:
            return reason
        if p.name in THRESHOLD_PARAMETERS:
            watched = self._watched(self.live)
            if v and watched and len(v) not in (1, len(watched)):
                return (f"{p.name} has {len(v)} values: give one for all joints or "
                        f"one per joint in the order {watched} (collision_joints)")
        elif p.name in ("joints", "collision_joints"):
            try:
                self.live.index.order(list(v))
            except InputError as e:
                return f"{p.name}: {e}"
        return ""

    def _on_set_parameters(self, params: list[Parameter[Any]]) -> SetParametersResult:
        for p in params:
            reason = self._invalid(p)
            if reason:
                return SetParametersResult(successful=False, reason=reason)
        payload = {p.name: p.value for p in params if p.name in ("payload", "payload_link")}
        reason = self._payload_invalid(payload) if payload else ""
        if reason:
            return SetParametersResult(successful=False, reason=reason)
        for p in params:
            if p.name == "robot_description" and p.value and p.value != self.urdf:
                try:
                    self._install(p.value, "the robot_description parameter",
                                  from_parameter=True)
                except RbdError as e:
                    return SetParametersResult(successful=False, reason=f"rejected URDF: {e}")
            elif p.name == "gravity" and self.bare is not None:
                self.bare = self.bare.with_gravity(list(p.value))
                self._swap(self._carrying(self.bare))
            elif p.name == "joints" and self.live is not None:
                self._swap(self.live.model, list(p.value or []))
            elif p.name == "publish_rate":
                self._set_rate(p.value)
            elif p.name == "friction":
                self.friction = bool(p.value)
            elif p.name == "joint_state_timeout":
                self.timeout_ns = round(p.value * 1e9)
            elif p.name == "clamp_to_effort_limits":
                self.clamp = bool(p.value)
        if payload and self.bare is not None:
            self._swap(self._carrying(self.bare, payload))
        changed = {p.name: p.value for p in params}
        live, flags = self.live, {"collision_release", "collision_joints", *THRESHOLD_PARAMETERS}
        if live is not None and {"friction", "observer_gain"} & changed.keys():
            self._observe_with(live, changed)  # the observer and its flags start again
        elif live is not None and live.observer is not None:
            if flags & changed.keys():  # new flags from the next state, the observer going on
                self._observe_with(live, changed, restart=False)
            if "external_torques_gain" in changed:  # the published estimate alone restarts
                live.observer.set_external_gain(changed["external_torques_gain"])
        return SetParametersResult(successful=True)

    def _observe_with(self, live: Live, changed: dict[str, Any] | None = None,
                      restart: bool = True) -> None:
        """(Re)start ``live``'s observer (``restart``) and its collision detector from the
        parameters (those in ``changed`` being set)."""
        def value(name: str) -> Any:
            return changed[name] if changed and name in changed else self.param(name)

        if restart:
            live.observer = MomentumObserver(live.model, value("observer_gain"),
                                             bool(value("friction")),
                                             value("external_torques_gain"))
            live.observed_ns = 0
        parts = [list(value(name) or []) for name in THRESHOLD_PARAMETERS]
        live.detector = None
        watched = self._watched(live, value("collision_joints"))
        try:
            live.watched_v = np.array(live.index.order(watched), dtype=np.int64)
            # a held joint has no effort, so no residual: never flagged
            live.watched_cols = np.where(np.isin(live.watched_v, live.held_v), -1,
                                         live.watched_v)
        except InputError as e:
            self.get_logger().warning(f"collision_joints: {e}: no collision output until it "
                                      "is set again")
            return
        live.watched = watched
        for name, values in zip(THRESHOLD_PARAMETERS, parts, strict=True):
            if len(values) not in (0, 1, len(watched)):
                self.get_logger().warning(
                    f"{name} has {len(values)} values for the joints {watched}: no "
                    f"collision output until it is set again")
                return
        if parts[0]:
            rest, *motion = (np.resize(x or [0.0], len(watched)) for x in parts)
            live.detector = CollisionDetector(rest, value("collision_release"), *motion)

    def _watched(self, live: Live, names: Any = None) -> list[str]:
        """The joints the collision thresholds are for: ``names`` (collision_joints being set;
        None: as it is), else ``joints``, else the model's."""
        given = self.param("collision_joints") if names is None else names
        return list(given or []) or live.joints

    def _set_rate(self, hz: float) -> None:
        if self.timer is not None:
            self.destroy_timer(self.timer)
            self.timer = None
        if hz > 0:
            self.timer = self.create_timer(1.0 / hz, self._on_timer)

    # ------------------------------------------------------------------ the model
    def _install(self, urdf: str, source: str, from_parameter: bool = False) -> None:
        """Load a new model; a bad one is rejected and the last good model stays. The
        ``robot_description`` parameter then shows the model in use, wherever it came from."""
        try:
            with self.core_log():
                model = load_urdf_string(urdf, floating_base=self.param("floating_base"))
            model = model.with_gravity(list(self.param("gravity")))
            self._swap(self._carrying(model))
            self.bare = model  # without the payload
        except (RbdError, InputError) as e:
            if from_parameter:
                raise
            self.refused_model(source, e)
            return
        self.model_in_use(urdf, source, model, from_parameter)
        held = self.live.merger.held if self.live else []
        if held:
            self.get_logger().warning(
                f"joints {held} have several coordinates, which /joint_states cannot carry: "
                "they are held at their neutral pose (identity), at rest")
        self.hear()
        self.release_early()

    def _positional_topics(self) -> list[str]:
        """The resolved names of the Float64MultiArray topics, in and out."""
        return [self.pub_gravity_cmd.topic_name, self.pub_ff_cmd.topic_name,
                self.sub_commands.topic_name]

    def _order(self, model: Model, wanted: list[str]) -> list[str] | None:
        """The Float64MultiArray topics' joint order: ``wanted`` (the ``joints`` parameter),
        else the joints of the controller those topics go to; None (and ``~/status`` says
        what to set) when neither gives one the model can follow."""
        order, why = self.controllers.order(model.state_joint_names, wanted,
                                            self._positional_topics(), self.name_map().names)
        if order is not None:
            self.report("order", None)
            return order
        self.report("order", f"effort_commands and the *_command outputs are off: {why}; set "
                             f"the joints parameter to the controller's order (the model's "
                             f"joints: {model.state_joint_names})")
        return None

    def _reorder(self) -> None:
        """A controller answered: the Float64MultiArray topics follow its order."""
        if self.live is not None:
            self._swap(self.live.model)

    def _swap(self, model: Model, joints: list[str] | None = None) -> None:
        """Make everything for ``model`` and put it in use; ``joints``: the ``joints``
        parameter as it is being set (None: as it is)."""
        old = self.live
        wanted = list(joints if joints is not None else self.param("joints") or [])
        order = self._order(model, wanted)
        live = Live(model, wanted if order is not None else [], self.name_map(), order)
        if old is not None and old.model.nv == model.nv and old.names == live.names:
            live.merger = old.merger  # keep the measured state across a gravity change
            live.command, live.trajectory = old.command, old.trajectory
        live.prepare(self.pub_gravity, self.pub_gravity_cmd, self.pub_ff, self.pub_ff_cmd,
                     self.pub_external, self.pub_external_acc)
        self._observe_with(live)
        self.live = live  # one assignment: callbacks see the old or the new model, whole
        self.settle()

    def _on_description(self, msg: String) -> None:
        self._install(msg.data, "the robot_description topic")

    # ------------------------------------------------------------------ inputs
    def _on_joint_states(self, live: Live, raw: bytes) -> None:
        stamp = self.merge(live.merger, self.reader, raw)
        if stamp is None:
            return
        self._arrived = time.monotonic()
        self._last_stamp = stamp
        if self.timer is None:
            self._publish(live, stamp)

    def _on_timer(self) -> None:
        if self.live is not None and self._last_stamp is not None and not self._silent():
            self._publish(self.live, self._last_stamp)

    def _silent(self) -> bool:
        """Whether joint_states have been silent for over ``joint_state_timeout`` (said on
        ``~/status``)."""
        quiet = time.monotonic() - self._arrived
        if self._last_stamp is None or quiet <= self.timeout_ns * 1e-9:
            self.report("silent", None)
            return False
        self.report("silent", f"stale joint_states: none for {quiet:.3f} s, the last at "
                              f"{format_stamp(self._last_stamp)} (limit "
                              f"{self.timeout_ns * 1e-6:g} ms); no output until they come")
        return True

    def _watchdog(self) -> None:
        """Inputs that stopped, controllers to ask, saturations that ended: on ``~/status``."""
        self.hear()
        live = self.live
        if live is None:
            self.report("model", "no model yet: waiting for robot_description (the parameter "
                                 "or the topic)", log=False)
            return
        self.report("model", None)
        self._silent()
        if live.order_v is None and not self.param("joints"):
            self.controllers.ask(self._positional_topics())
        if self.saturations and time.monotonic() - self._saturated > 1.0:
            self.report("clamped", None)
        self.publish_status(force=False)

    def _on_command_array(self, live: Live, msg: Float64MultiArray) -> None:
        if live.order_v is None:
            self.warn("bad_command", "dropped effort_commands: " + self.problems.get("order", ""))
            return
        try:
            live.command[live.order_v] = float_values(msg.data, live.order, "efforts")
        except InputError as e:
            self.warn("bad_command", f"dropped effort_commands: {e}")

    def _on_command_states(self, live: Live, msg: JointState) -> None:
        try:
            idx, eff = live.index.efforts(msg.name, msg.effort)
        except InputError as e:
            self.warn("bad_command", f"dropped effort_command_states: {e}")
            return
        live.command[idx] = eff

    def _on_trajectory(self, live: Live, msg: JointTrajectory) -> None:
        """The desired motion: its points joined as the trajectory controller joins them,
        from the state measured at the first joint state after it; a header stamp of zero
        starts it at that state's stamp. The same stamped motion sent again goes on as it
        is (joining 400 points takes milliseconds, which a client that re-sends it while it
        waits would otherwise cost again each time)."""
        try:
            idx = live.index.order(msg.joint_names)
            if not msg.points:
                live.trajectory = None  # an empty trajectory stops the feed-forward
                self.report("desired", None)
                return
            points = trajectory_points(msg.points, len(idx))
        except InputError as e:
            self.warn("bad_trajectory", f"dropped desired_trajectory: {e}")
            return
        start, old = stamp_ns(msg.header.stamp), live.trajectory
        if start and old is not None and old.start_ns == start and \
                np.array_equal(old.v_index, idx) and _same_points(old.points, points):
            return  # the same motion sent again (a client that repeats it): it goes on
        live.trajectory = FeedForward(np.array(idx, dtype=np.int64), points, start)

    # ------------------------------------------------------------------ outputs
    def _publish(self, live: Live, stamp: int) -> None:
        """Compute and publish what someone subscribes to (each output costs time at 1 kHz),
        stamped ``stamp`` (ns)."""
        st = live.merger
        if not st.ready:
            return  # merge() says which joints are missing
        if st.stale(self.timeout_ns):
            self.report("stale", st.stale_note(self.timeout_ns) + "; no output until they "
                        "are fresh (a joint no publisher sends: held_joints)")
            live.observed_ns = 0  # the observer starts afresh once they are
            return
        if "stale" in self.problems:
            self.report("stale", None)
        t0 = time.perf_counter_ns()
        m, d = live.model, live.data
        fric = self.friction
        heard = self.heard
        if self.pub_gravity in heard or self.pub_gravity_cmd in heard:
            self._emit(live, stamp, self.pub_gravity, self.pub_gravity_cmd, gravity(m, d, st.q))
        if self.pub_accel in heard and np.all(np.isfinite(live.command)):
            qdd = aba(m, d, st.q, st.v, live.command, friction=fric)
            msg = JointTrajectory(joint_names=live.names)
            msg.header.stamp = stamp_msg(stamp)
            msg.points = [JointTrajectoryPoint(
                positions=st.q[live.index.q_index(live.out_v)].tolist(),
                velocities=st.v[live.out_v].tolist(), accelerations=qdd[live.out_v].tolist())]
            self.pub_accel.publish(msg)
        if self.pub_external_acc in heard and np.all(np.isfinite(st.effort[live.out_v])):
            ext = np.zeros(m.nv)
            ext[live.out_v] = external_torques(m, d, st.q, st.v, st.a, st.effort,
                                               fric)[live.out_v]
            self._emit(live, stamp, self.pub_external_acc, None, ext)
        if live.detector is not None or self.pub_external in heard:
            self._observe(live, stamp)
        else:
            live.observed_ns = 0  # not observed: it starts afresh when someone listens
        if live.trajectory is not None and (self.pub_ff in heard or self.pub_ff_cmd in heard):
            ff, idx = live.trajectory, live.trajectory.v_index
            if ff.spline is None:
                ff.spline = Spline(*ff.points, (st.q[live.index.q_index(idx)], st.v[idx],
                                                np.zeros(idx.size)))
                ff.start_ns = ff.start_ns or stamp
                self._check_desired(live, ff.spline, idx)
            pd, vd, ad = ff.spline.sample(stamp - ff.start_ns)
            q, v, a = st.q.copy(), np.zeros(m.nv), np.zeros(m.nv)
            q[live.index.q_index(idx)] = pd
            v[idx], a[idx] = vd, ad
            self._emit(live, stamp, self.pub_ff, self.pub_ff_cmd, rnea(m, d, q, v, a,
                                                                        friction=fric))
        self.health.answer(time.perf_counter_ns() - t0)

    def _check_desired(self, live: Live, spline: Spline, idx: np.ndarray) -> None:
        """``~/status`` says so while the desired trajectory asks beyond the URDF's effort or
        velocity limits (its feed-forward is then clamped where it does)."""
        m = live.model
        if m.has_free_flyer or m.nq != m.nv:
            return  # (the check is for fixed-base arms)
        over = check_limits(m, spline, idx, live.merger.q, friction=self.friction).first_over()
        self.report("desired", f"the desired_trajectory asks beyond the URDF's limits: {over}"
                    if over else None)

    def diagnosis(self) -> tuple[bytes, str, list[tuple[str, str]]]:
        level, message, values = super().diagnosis()
        live = self.live
        if live is None:
            return level, message, values
        flagged = ([j for j, f in zip(live.watched, live.detector.flags, strict=True) if f]
                   if live.detector is not None else [])
        if flagged and level == DiagnosticStatus.OK:
            level, message = DiagnosticStatus.WARN, f"collision flagged on {flagged}"
        return level, message, [
            *values,
            ("command order", ", ".join(live.order) if live.order_v is not None
             else "none: effort_commands and *_command are off"),
            ("efforts clamped since start", str(self.saturations)),
            ("observer", f"running since {format_stamp(live.t0_ns)}" if live.observed_ns
             else "idle (nobody subscribes to external_torques, no collision_thresholds)"),
            ("collision flags", self._flags_said(live, flagged))]

    @staticmethod
    def _flags_said(live: Live, flagged: list[str]) -> str:
        if live.detector is None:
            return "off (no collision_thresholds)"
        if flagged:
            return ", ".join(flagged)
        if live.observed_ns and live.observer is not None and not live.observer.settled.all():
            return (f"none yet: the observer settles for {SETTLE:g} / observer_gain s after it "
                    "starts (no joint is flagged meanwhile)")
        return "none"

    def _observe(self, live: Live, ns: int) -> None:
        """One step of the momentum observer: ``~/external_torques`` and ``~/collision``."""
        st, observer = live.merger, live.observer
        assert observer is not None
        tau = live.tau
        tau[live.measured] = st.effort[live.measured]
        if not live.efforts_given:  # NaN until a message gives one, then finite for good
            if not np.isfinite(tau).all():
                self.warn("no_effort", "external_torques and collision need the measured "
                          f"efforts: joint_states carries none for {self._no_effort(live)}")
                return
            live.efforts_given = True
        gap = (ns - live.observed_ns) * 1e-9
        if ns != live.observed_ns:  # pieces of one state from several drivers share a stamp
            if live.observed_ns == 0 or not 0 < gap <= GAP_S:
                if live.observed_ns:
                    self.warn("observer_restart", f"external_torques restarts from zero: the "
                              f"joint states' stamps {'jumped by' if gap > 0 else 'went back'} "
                              f"{abs(gap):.3f} s (it integrates over at most {GAP_S} s)")
                observer.reset()
                live.t0_ns = ns
                if live.detector is not None:  # a new stretch: ~/collision says it at once
                    live.detector.clear()
                    live.reported_ns = 0
            live.observed_ns = ns
            observer.update((ns - live.t0_ns) * 1e-9, st.q, st.v, tau, st.differenced)
        external = observer.external_torques
        if live.held_v.size:
            external[live.held_v] = np.nan
        self._emit(live, ns, self.pub_external, None, external)
        detector = live.detector
        if detector is not None and (detector.update_from(observer.last, live.watched_cols)
                                     or ns - live.reported_ns >= COLLISION_HEARTBEAT_NS):
            live.reported_ns = ns
            residual = observer.residual  # the one the flags are on: at observer_gain
            residual[live.held_v] = np.nan
            self.pub_collision.publish(self._collision(live, ns, residual))

    def _collision(self, live: Live, ns: int, residual: np.ndarray) -> DiagnosticArray:
        detector = live.detector
        assert detector is not None
        loaded = np.zeros(live.model.nv, dtype=bool)
        loaded[live.watched_v] = detector.loaded
        links = likely_links(live.model, loaded)
        joints = [j for j, f in zip(live.watched, detector.flags, strict=True) if f]
        node, robot = self.get_name(), live.model.name
        ok, error = DiagnosticStatus.OK, DiagnosticStatus.ERROR
        whole = DiagnosticStatus(
            level=error if joints else ok, name=f"{node}: collision", hardware_id=robot,
            message=(f"collision, likely on {' or '.join(links)} (joints {', '.join(joints)})"
                     if joints else "no collision"),
            values=[KeyValue(key="links", value=",".join(links)),
                    KeyValue(key="joints", value=",".join(joints))])
        msg = DiagnosticArray(status=[whole] + [
            DiagnosticStatus(level=error if f else ok, name=f"{node}: collision: {j}",
                             hardware_id=robot, message="collision" if f else "ok",
                             values=[KeyValue(key="residual", value=f"{r:.6g}"),
                                     KeyValue(key="threshold", value=f"{t:.6g}")])
            for j, f, r, t in zip(live.watched, detector.flags, residual[live.watched_v],
                                  detector.level, strict=True)])
        msg.header.stamp = stamp_msg(ns)
        return msg

    @staticmethod
    def _no_effort(live: Live) -> list[str]:
        return [n for n, i in live.index.index.items()
                if i in live.measured and not math.isfinite(live.merger.effort[i])]

    def _emit(self, live: Live, stamp: int, pub: Any, pub_cmd: Any, tau: np.ndarray) -> None:
        if pub in self.heard:
            pub.publish(live.messages[id(pub)].fill(stamp, tau[live.out_v]))
        if pub_cmd is not None and live.order_v is not None and pub_cmd in self.heard:
            cmd = live.messages[id(pub_cmd)]
            out = tau[live.order_v]
            if self.clamp and np.any(np.abs(out) > live.limits):
                self._clamped(live, pub_cmd, out)
                out = np.clip(out, -live.limits, live.limits)
            cmd.data = array("d", out.tobytes())
            pub_cmd.publish(cmd)

    def _clamped(self, live: Live, pub: Any, out: np.ndarray) -> None:
        over = np.flatnonzero(np.abs(out) > live.limits)
        self.saturations += over.size
        self._saturated = time.monotonic()
        worst = int(over[np.argmax(np.abs(out[over]) / live.limits[over])])
        name = live.order[worst]
        self.report("clamped", f"clamped {self.saturations} efforts to the URDF's <limit "
                               f"effort> so far; the last on {pub.topic_name}: {name} asked "
                               f"{out[worst]:.4g}, limit {live.limits[worst]:.4g}")

    # ------------------------------------------------------------------ services
    def _request_state(self, live: Live, req: Any, res: Any, *fields: str
                       ) -> tuple[np.ndarray, list[np.ndarray], list[int]]:
        """q, the request's other per-joint ``fields`` in model order, and the velocity
        indices of the joints answered for (set as ``res.joint_names``: the request's, less
        its mimic joints). A free-flyer base stays at the origin, at rest."""
        names, idx, q, others = live.index.full_state(
            req.joint_names, req.positions, **{f: getattr(req, f) for f in fields})
        res.joint_names = names
        return q, others, idx

    def _serve(self, response: Any, compute: Callable[[Live, Any], None]) -> Any:
        live = self.live
        if live is None:
            response.success, response.message = False, "no model yet: the node has not " \
                "received a robot_description"
            return response
        try:
            compute(live, response)
        except (InputError, RbdError) as e:
            response.success, response.message = False, str(e)
            return response
        response.success, response.message = True, ""
        return response

    def _srv_inverse(self, req: Any, res: Any) -> Any:
        def compute(live: Live, res: Any) -> None:
            q, (v, a), idx = self._request_state(live, req, res, "velocities",
                                                 "accelerations")
            if len(req.wrench_links) != len(req.wrenches):
                raise InputError(f"{len(req.wrench_links)} wrench_links for "
                                 f"{len(req.wrenches)} wrenches")
            f_ext = live.model.link_wrenches({
                link: wrench_array(w) for link, w in zip(req.wrench_links, req.wrenches,
                                                         strict=True)}) if req.wrenches else None
            tau = rnea(live.model, live.data, q, v, a, f_ext, friction=req.include_friction)
            res.efforts = tau[idx].tolist()
        return self._serve(res, compute)

    def _srv_forward(self, req: Any, res: Any) -> Any:
        def compute(live: Live, res: Any) -> None:
            q, (v, tau), idx = self._request_state(live, req, res, "velocities", "efforts")
            qdd = aba(live.model, live.data, q, v, tau, friction=req.include_friction)
            res.accelerations = qdd[idx].tolist()
        return self._serve(res, compute)

    def _srv_mass_matrix(self, req: Any, res: Any) -> Any:
        def compute(live: Live, res: Any) -> None:
            q, _, idx = self._request_state(live, req, res)
            M = crba(live.model, live.data, q)
            res.mass_matrix = M[np.ix_(idx, idx)].reshape(-1).tolist()
        return self._serve(res, compute)

    def _srv_gravity(self, req: Any, res: Any) -> Any:
        def compute(live: Live, res: Any) -> None:
            q, _, idx = self._request_state(live, req, res)
            res.efforts = gravity(live.model, live.data, q)[idx].tolist()
        return self._serve(res, compute)


def main(args: list[str] | None = None) -> int:
    return run(DynamicsNode, args)


if __name__ == "__main__":
    sys.exit(main())
