"""The floating-base node: contact reactions, centre of pressure, consistent joint torques
and, in flight, base and joint accelerations of a legged robot or humanoid.

Inputs (relative names): ``joint_states`` (sensor_msgs/JointState), ``odom``
(nav_msgs/Odometry: base pose in the world, twist in the base frame), optionally ``imu``
(sensor_msgs/Imu in the base frame: its specific force gives the base's linear acceleration;
the angular acceleration is taken as zero), ``desired_accelerations``
(trajectory_msgs/JointTrajectory, one point: joint accelerations; zero until one arrives),
``active_contacts`` (rbd_ros_interfaces/ActiveContacts; until one arrives every contact link
is in contact; an empty list: flight) and ``robot_description``. With ``estimate_contacts``
the node finds which contact links touch from the measured joint efforts instead (a
floating-base momentum observer, rbd_ros/dynamics/estimation/contact_estimation.py), ignores
``active_contacts``, and publishes its estimate on ``~/estimated_contacts`` (ActiveContacts)
and each link's estimated force on ``~/contact/<link>/estimated_force`` (WrenchStamped, world
axes, at the contact point). Without an IMU the base
acceleration is zero: the reaction of the robot's current posture and velocities.

Each joint state is paired with the odometry (and, once an IMU has spoken, the IMU) of its own
stamp: interpolated between the messages before and after it (the pose along the shortest
arc). A state newer than the newest odometry waits for the next one, at most
``input_timeout``; then the nearest odometry is used if it is at most ``input_timeout`` from
the state's stamp (``~/status`` says "ok; odometry held from ... ms before ..."), else the
state is not answered and ``~/status`` says which input is stale.

Contacts: ``contact_links``, each described by ``contacts.<link>.*`` (see
config/floating_base.yaml and rbd_ros/dynamics/contact/contacts.py): a contact frame (offset, rpy),
a round foot's radius, a point's surface normal, a flat sole's half sizes, normal-force bounds.

Outputs, stamped with the joint state's stamp:
``~/base_wrench`` (geometry_msgs/WrenchStamped, base frame): the wrench the base needs,
which the contacts supply; ``~/com_wrench`` (WrenchStamped, world axes, about the centre of
mass ``~/center_of_mass``, PointStamped); per contact, from the moment the contact set is known,
``~/contact/<link>/wrench`` (WrenchStamped in the link's frame, about its origin) and
``~/contact/<link>/center_of_pressure`` (PointStamped, world); ``~/joint_torques``
(sensor_msgs/JointState, effort); ``~/status`` (std_msgs/String: "ok" or "flight", with a note
when an input was held; else why there is no answer: an impossible motion, naming the
constraint and contact that fail, or a stale input); in flight ``~/flight/base_acceleration``
(geometry_msgs/AccelStamped, base frame) and ``~/flight/joint_accelerations``
(JointTrajectory, one point), from the measured efforts. ``~/balance``
(rbd_ros_interfaces/Balance, world axes) with each answered state in contact: the centroidal
momentum and its rate, the ZMP, the capture point, the support polygon and the margins
(rbd_ros/dynamics/contact/balance.py), and for RViz ``~/balance/zmp``,
``~/balance/capture_point`` (PointStamped) and ``~/balance/support_polygon``
(PolygonStamped); while one of them is subscribed and the capture point is outside the
polygon, ``~/status`` says "ok; the capture point is outside the support polygon: a step or a fall
follows". Services ``~/floating_base_dynamics`` and ``~/centroidal_dynamics`` (the centroidal
momentum matrix for any state).
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np
from diagnostic_msgs.msg import DiagnosticStatus
from geometry_msgs.msg import AccelStamped, Point32, PointStamped, PolygonStamped, WrenchStamped
from nav_msgs.msg import Odometry
from rcl_interfaces.msg import ParameterDescriptor, SetParametersResult
from rclpy.parameter import Parameter
from rclpy.serialization import serialize_message
from sensor_msgs.msg import Imu, JointState
from std_msgs.msg import String
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

from ..dynamics import Model, RbdError, centroidal, load_urdf_string
from ..dynamics.algorithm.floating import inverse_dynamics
from ..dynamics.contact.balance import Balance as BalanceOf
from ..dynamics.contact.contacts import Contact, Reaction, solve
from ..dynamics.estimation.contact_estimation import ContactEstimate, ThresholdProposal
from ..dynamics.estimation.legged import Answer, Legged, Pending
from ..wire.errors import InputError
from ..wire.joint_names import NameMap
from ..wire.joint_states import JointStateMerger
from ..wire.stamped import BalanceBytes, JointStateBytes, StampedBytes
from .common import (
    LATCHED,
    NodeBase,
    input_qos,
    run,
)
from .interfaces import ActiveContacts, Balance, CentroidalDynamics, FloatingBaseDynamics
from .messages import (
    accel,
    accel_array,
    imu_specific_force,
    joint_state_reader,
    odometry_state,
    point,
    pose_twist_state,
    stamp_msg,
    vector3,
    wrench,
)
from .parameters import CONTACT_KEYS, FLOATING_BASE, declare, refusal

#: what a set of a parameter rebuilds the model for (the others are read-only)
MODEL_PARAMETERS = {p.name for p in FLOATING_BASE if not p.read_only}
#: the centroidal momentum matrix's first columns: the base twist's, as in nav_msgs/Odometry
BASE_VELOCITIES = [f"base_{part}_{axis}" for part in ("linear", "angular") for axis in "xyz"]


class Live(Legged):
    """Everything that depends on the model and the contact set, with the node's parts (the
    joint-state merger, the outputs' bytes); replaced whole."""

    def __init__(self, model: Model, contacts: list[Contact], mu: float, names: NameMap,
                 timeout: float, world: str, estimator: dict[str, float] | None) -> None:
        super().__init__(model, contacts, mu, timeout, estimator)
        self.proposal: ThresholdProposal | None = None
        self.world = world
        self.merger = JointStateMerger(model, names)
        self.base_link = model.body_names[0]
        self.torques = JointStateBytes(self.names)  # ~/joint_torques, as bytes
        self.balance_out = BalanceBytes(world)  # ~/balance, as bytes
        self._stamped: dict[tuple[str, int], StampedBytes] = {}

    def stamped(self, frame: str, count: int) -> StampedBytes:
        """The stamped output in ``frame`` with ``count`` numbers, as bytes (one per frame and
        size: each is filled and published before the next)."""
        out = self._stamped.get((frame, count))
        if out is None:
            out = self._stamped[(frame, count)] = StampedBytes(frame, count)
        return out


class FloatingBaseNode(NodeBase):
    FLOATING_BASE = True

    def __init__(self, **kwargs: Any) -> None:
        super().__init__("rbd_floating_base", **kwargs)
        declare(self, FLOATING_BASE)
        self.name_map()  # a bad rule stops the node with its reason
        self._declare_contacts(list(self.param("contact_links") or []))
        self.live: Live | None = None
        self.urdf: str | None = None
        self.add_on_set_parameters_callback(self._on_set_parameters)
        on_live = self.on_live
        qos_in = input_qos(self.param("joint_states_qos"))  # a bad choice stops the node
        self.reader = joint_state_reader(JointState)
        # every input as bytes: rclpy's messages cost more than the dynamics (messages)
        self.create_subscription(JointState, "joint_states", on_live(self._on_joint_states),
                                 qos_in, raw=True)
        self.create_subscription(Odometry, "odom", on_live(self._on_odom), qos_in, raw=True)
        self.create_subscription(Imu, "imu", on_live(self._on_imu), qos_in, raw=True)
        self.quiet_subscription(JointTrajectory, "desired_accelerations",
                                on_live(self._on_desired), 10)
        self.quiet_subscription(ActiveContacts, "active_contacts", on_live(self._on_active), 10)
        self.quiet_subscription(String, "robot_description", self._on_description, LATCHED)
        self.pub_base = self.quiet_publisher(WrenchStamped, "~/base_wrench")
        self.pub_com_wrench = self.quiet_publisher(WrenchStamped, "~/com_wrench")
        self.pub_com = self.quiet_publisher(PointStamped, "~/center_of_mass")
        self.pub_tau = self.quiet_publisher(JointState, "~/joint_torques")
        self.pub_balance = self.quiet_publisher(Balance, "~/balance")
        # the same points for RViz, which shows standard messages only
        self.pub_zmp = self.quiet_publisher(PointStamped, "~/balance/zmp")
        self.pub_capture = self.quiet_publisher(PointStamped, "~/balance/capture_point")
        self.pub_polygon = self.quiet_publisher(PolygonStamped, "~/balance/support_polygon")
        self.balance_outputs = {self.pub_balance, self.pub_zmp, self.pub_capture,
                                self.pub_polygon}
        self.pub_status = self.quiet_publisher(String, "~/status")
        self.last_status = ""  # what ~/status said last
        self._said: tuple[str | None, bytes] = (None, b"")  # the last text sent, as bytes
        self.pub_flight_base = self.quiet_publisher(AccelStamped, "~/flight/base_acceleration")
        self.pub_flight_joints = self.quiet_publisher(JointTrajectory,
                                                      "~/flight/joint_accelerations")
        self.pub_contact: dict[str, tuple[Any, Any]] = {}
        self.pub_estimated = self.quiet_publisher(ActiveContacts, "~/estimated_contacts")
        self.pub_estimated_force: dict[str, Any] = {}
        self.guarded_service(FloatingBaseDynamics, "~/floating_base_dynamics", self._srv)
        self.guarded_service(CentroidalDynamics, "~/centroidal_dynamics", self._srv_centroidal)
        self.outputs = [self.pub_base, self.pub_com_wrench, self.pub_com, self.pub_tau,
                        self.pub_balance, self.pub_zmp, self.pub_capture, self.pub_polygon,
                        self.pub_estimated, self.pub_status]
        # and each contact's, once the model names them
        # a joint state whose odometry never comes is answered (or refused) all the same
        self.create_timer(0.02, self._tick)
        if self.param("robot_description"):
            self._install(self.param("robot_description"), "the robot_description parameter")

    # ------------------------------------------------------------------ configuration
    def _declare_contacts(self, links: list[str]) -> None:
        """contacts.<link>.<key> for each contact link (values from the parameter file)."""
        for link in links:
            for key, (default, text) in CONTACT_KEYS.items():
                name = f"contacts.{link}.{key}"
                if not self.has_parameter(name):
                    self.declare_parameter(name, default, ParameterDescriptor(description=text))

    def _contacts(self, overrides: dict[str, Any]) -> tuple[list[Contact], float]:
        def value(name: str, default: Any = None) -> Any:
            if name in overrides:
                return overrides[name]
            return self.param(name) if self.has_parameter(name) else default

        contacts = []
        for link in list(value("contact_links") or []):
            kw = {key: value(f"contacts.{link}.{key}", default)
                  for key, (default, _) in CONTACT_KEYS.items()}
            for key in ("offset", "rpy", "normal"):
                kw[key] = tuple(float(x) for x in kw[key])
            contacts.append(Contact(link, **kw))
        return contacts, float(value("friction_coefficient"))

    def _build(self, urdf: str, overrides: dict[str, Any]) -> Live:
        gravity = list(overrides.get("gravity", self.param("gravity")))
        timeout = float(overrides.get("input_timeout", self.param("input_timeout")))
        with self.core_log():
            model = load_urdf_string(urdf, floating_base=True).with_gravity(gravity)
        contacts, mu = self._contacts(overrides)
        world = str(overrides.get("world_frame", self.param("world_frame")))

        def value(name: str) -> Any:
            return overrides.get(name, self.param(name))

        estimator = None
        if value("estimate_contacts"):
            estimator = {"gain": float(value("contact_observer_gain")),
                         "threshold": float(value("contact_threshold")),
                         "release": float(value("contact_release")),
                         "max_speed": float(value("contact_max_speed"))}
        try:
            return Live(model, contacts, mu, self.name_map(), timeout, world, estimator)
        except InputError as e:
            raise RbdError(str(e)) from None

    def _go_live(self, urdf: str, live: Live) -> None:
        self.urdf, self.live = urdf, live
        # every contact's topics exist before its first reaction (late joiners miss nothing)
        for c in live.contacts:
            if c.link not in self.pub_contact:
                base = f"~/contact/{c.link}"
                self.pub_contact[c.link] = (
                    self.quiet_publisher(WrenchStamped, f"{base}/wrench"),
                    self.quiet_publisher(PointStamped, f"{base}/center_of_pressure"))
                self.outputs += self.pub_contact[c.link]
            if c.link not in self.pub_estimated_force:
                self.pub_estimated_force[c.link] = self.quiet_publisher(
                    WrenchStamped, f"~/contact/{c.link}/estimated_force")
                self.outputs.append(self.pub_estimated_force[c.link])
        self.settle()
        self.hear()
        self.release_early()

    def _tick(self) -> None:
        self.hear()
        self._drain(time.monotonic())

    def _install(self, urdf: str, source: str) -> None:
        try:
            live = self._build(urdf, {})
        except RbdError as e:
            self.get_logger().error(f"rejected the model from {source}; keeping "
                                    f"{'the last good one' if self.live else 'none'}: {e}")
            return
        self._go_live(urdf, live)
        if self.param("robot_description") != urdf:  # the parameter shows the model in use
            self.set_parameters([Parameter("robot_description", value=urdf)])
        self.get_logger().info(f"model from {source}: {live.model.summary().splitlines()[0]}")

    def _on_set_parameters(self, params: list[Parameter[Any]]) -> SetParametersResult:
        for p in params:
            reason = refusal(FLOATING_BASE, p.name, p.value)
            if reason:
                return SetParametersResult(successful=False, reason=reason)
        changes = {p.name: p.value for p in params}
        if changes.get("robot_description") == self.urdf:  # the model in use, shown
            del changes["robot_description"]
        urdf = changes.get("robot_description") or self.urdf
        if not (MODEL_PARAMETERS & changes.keys()
                or any(k.startswith("contacts.") for k in changes)):
            return SetParametersResult(successful=True)
        try:
            if urdf:
                live = self._build(urdf, changes)
            else:  # no model yet: check what can be checked
                self._contacts(changes)
                live = None
        except (RbdError, TypeError, ValueError) as e:
            return SetParametersResult(successful=False, reason=str(e))
        if live is not None and urdf:
            self._go_live(urdf, live)
        if "contact_links" in changes:  # new links' parameters, once this set is done
            links = list(changes["contact_links"] or [])

            def declare() -> None:
                self.destroy_timer(timer)
                self._declare_contacts(links)

            timer = self.create_timer(0.0, declare)
        return SetParametersResult(successful=True)

    def _on_description(self, msg: String) -> None:
        self._install(msg.data, "the robot_description topic")

    # ------------------------------------------------------------------ inputs
    def _on_odom(self, live: Live, raw: bytes) -> None:
        try:
            t, x = odometry_state(raw, Odometry)
        except InputError as e:
            self.warn("bad_odom", f"dropped an odometry message: {e}")
            return
        note = live.odom.add(t, x)
        if note:
            self.warn("odom_order", note)
        if live.pending:
            self._drain(time.monotonic())

    def _on_imu(self, live: Live, raw: bytes) -> None:
        try:
            t, f = imu_specific_force(raw, Imu)
        except InputError as e:
            self.warn("bad_imu", f"dropped an IMU message: {e}")
            return
        note = live.imu.add(t, f)
        if note:
            self.warn("imu_order", note)
        if live.pending:
            self._drain(time.monotonic())

    def _on_desired(self, live: Live, msg: JointTrajectory) -> None:
        try:
            idx = live.merger.joints.order(msg.joint_names)
            acc = np.asarray(msg.points[0].accelerations if msg.points else [], dtype=float)
            if acc.shape != (len(idx),) or not np.all(np.isfinite(acc)):
                raise InputError(f"need one point with {len(idx)} finite accelerations")
        except InputError as e:
            self.warn("bad_desired", f"dropped desired_accelerations: {e}")
            return
        live.qdd[np.array(idx, dtype=np.int64) - 6] = acc

    def _on_active(self, live: Live, msg: ActiveContacts) -> None:
        refused = live.touching(msg.links)
        if refused is not None:
            self.warn(*refused)

    def _on_joint_states(self, live: Live, raw: bytes) -> None:
        stamp = self.merge(live.merger, self.reader, raw)
        if stamp is None or not live.merger.ready:
            return
        st = live.merger
        if st.stale(live.max_age):  # a joint whose publisher died: as the dynamics node
            note = st.stale_note(live.max_age) + "; no answer until they are fresh"
            self.warn("stale", note)
            self.say(note)
            return
        live.pending.append(Pending(stamp, st.q.copy(),
                                    st.v.copy(), st.effort.copy(), time.monotonic()))
        self._drain(time.monotonic())

    def _drain(self, now: float) -> None:
        """Answer the waiting joint states, in order, whose odometry (and IMU) is known or
        whose wait is over."""
        live = self.live
        if live is None:
            return
        for paired in live.ready(now):
            if isinstance(paired, Answer):  # a stale input
                self._said_of(paired)
                continue
            t0 = time.perf_counter_ns()
            # the balance (~10 us) only for a listener
            self._publish(live, live.answer(*paired, balance=not self.heard.isdisjoint(
                self.balance_outputs)))
            self.health.answer(time.perf_counter_ns() - t0)

    # ------------------------------------------------------------------ outputs
    def say(self, text: str) -> None:
        """``~/status`` for this state ("ok", "flight", or why there is no answer), sent while
        someone listens (the text is kept for /diagnostics); the same text as the last
        state's is published as the bytes already made."""
        self.last_status = text
        if self.pub_status in self.heard:
            if text != self._said[0]:
                self._said = (text, serialize_message(String(data=text)))
            self.pub_status.publish(self._said[1])

    def diagnosis(self) -> tuple[bytes, str, list[tuple[str, str]]]:
        level, message, values = super().diagnosis()
        live = self.live
        if live is not None and live.proposal is not None:
            values.append(("contact_threshold proposed", f"{live.proposal.threshold:.3g}"))
        said = self.last_status
        if said.startswith(("ok", "flight")) or not said:
            return level, message if said else "no joint state answered yet", values
        bad = DiagnosticStatus.ERROR if said.startswith("stale") else DiagnosticStatus.WARN
        return max(level, bad), said, values

    def _said_of(self, a: Answer) -> None:
        """An answer's warning (throttled) and ``~/status``."""
        if a.warning is not None:
            self.warn(*a.warning)
        self.say(a.status)

    def _publish(self, live: Live, a: Answer) -> None:
        if a.estimate is not None:
            self._publish_estimate(live, a.t, a.estimate)
        if a.proposal is not None and live.estimator is not None:
            live.proposal = a.proposal
            self.get_logger().info(f"{a.proposal.summary()}, from the first second the robot "
                                   f"stood; in use: {live.estimator.threshold:g}")
        if a.flight is not None:  # flight: base and joints move under the measured efforts
            a_base, qdd = a.flight
            acc = AccelStamped(accel=accel(a_base))
            acc.header.stamp, acc.header.frame_id = stamp_msg(a.t), live.base_link
            self.pub_flight_base.publish(acc)
            msg = JointTrajectory(joint_names=live.names)
            msg.header.stamp = stamp_msg(a.t)
            msg.points = [JointTrajectoryPoint(accelerations=qdd[live.v_index - 6].tolist())]
            self.pub_flight_joints.publish(msg)
        if a.reaction is not None:
            self._publish_reaction(live, a.t, a.reaction)
        if a.balance is not None:
            self._publish_balance(live, a.t, a.balance, a.contacts)
        self._said_of(a)

    def _publish_estimate(self, live: Live, stamp: int, est: ContactEstimate) -> None:
        heard = self.heard
        if self.pub_estimated in heard:
            msg = ActiveContacts(links=[c.link for c in live.contacts if c.link in live.active])
            msg.header.stamp = stamp_msg(stamp)
            self.pub_estimated.publish(msg)
        for link, f in est.forces.items():
            pub = self.pub_estimated_force[link]
            if pub in heard:
                pub.publish(live.stamped(live.world, 6).fill(stamp, np.r_[f, 0.0, 0.0, 0.0]))

    def _publish_balance(self, live: Live, stamp: int, b: BalanceOf, links: list[str]) -> None:
        heard, world = self.heard, live.world
        if self.pub_balance in heard:
            self.pub_balance.publish(live.balance_out.fill(stamp, b, links))
        for pub, x in ((self.pub_zmp, b.zmp), (self.pub_capture, b.capture_point)):
            if pub in heard and x is not None:
                pub.publish(live.stamped(world, 3).fill(stamp, x))
        if self.pub_polygon in heard:
            msg = PolygonStamped()
            msg.header.stamp, msg.header.frame_id = stamp_msg(stamp), world
            msg.polygon.points = [Point32(x=float(x), y=float(y), z=float(z))
                                  for x, y, z in b.support_polygon]
            self.pub_polygon.publish(msg)

    def _publish_reaction(self, live: Live, stamp: int, r: Reaction) -> None:
        # only what someone subscribes to is built and sent (hear)
        world, out, heard = live.world, live.stamped, self.heard
        if self.pub_base in heard:
            self.pub_base.publish(out(live.base_link, 6).fill(stamp, r.base_wrench))
        if self.pub_com_wrench in heard:
            self.pub_com_wrench.publish(out(world, 6).fill(stamp, r.com_wrench))
        if self.pub_com in heard:
            self.pub_com.publish(out(world, 3).fill(stamp, r.com))
        for link, w in r.wrenches.items():
            pub, cop = self.pub_contact[link]
            if pub in heard:
                pub.publish(out(link, 6).fill(stamp, w))
            if cop in heard:
                cop.publish(out(world, 3).fill(stamp, r.cop[link]))
        if self.pub_tau in heard:
            self.pub_tau.publish(live.torques.fill(stamp, r.tau[live.v_index - 6]))

    # ------------------------------------------------------------------ service
    def _request_state(self, req: Any, **arrays: Any
                       ) -> tuple[Live, list[str], list[int], np.ndarray, np.ndarray, list[Any]]:
        """The live model and a service request's state: the joints it names, their velocity
        indices, ``q`` and ``v`` with the base's pose and twist, and ``arrays`` (nv each);
        InputError, saying what is wrong, without a model or with a bad request."""
        live = self.live
        if live is None:
            raise InputError("no model yet: the node has not received a robot_description")
        names, idx, q, (vel, *rest) = live.merger.joints.full_state(
            req.joint_names, req.positions, velocities=req.velocities, **arrays)
        x = pose_twist_state(req.base_pose, req.base_twist)
        q[:7] = x[:7]
        return live, names, idx, q, np.r_[x[7:], vel[6:]], rest

    def _srv(self, req: Any, res: Any) -> Any:
        res.success = False
        try:
            live, names, idx, q, v, (acc,) = self._request_state(
                req, accelerations=req.accelerations)
            a_base = accel_array(req.base_acceleration)
            by_link = {c.link: c for c in live.contacts}
            links = list(req.contact_links)
            unknown = [x for x in links if x not in by_link]
            if unknown:
                raise InputError(f"{unknown} are not contact links {sorted(by_link)}")
            if not links:  # flight: the base moves as the joint accelerations make it
                if np.any(a_base):
                    raise InputError(
                        "no contact links given, so the robot is in flight and its base "
                        "acceleration follows from the joint accelerations: leave "
                        "base_acceleration zero (or name the contacts)")
                a_flight, tau = inverse_dynamics(live.model, live.data, q, v, acc[6:])
                res.success, res.message = True, "flight"
                res.base_acceleration = accel(a_flight)
                res.joint_names = names
                res.efforts = tau[np.array(idx, dtype=np.int64) - 6].tolist()
                return res
            r = solve(live.model, live.data, q, v, np.r_[a_base, acc[6:]],
                      [by_link[x] for x in links], live.mu)
        except (InputError, RbdError) as e:
            res.message = str(e)
            return res
        if not r.feasible:
            res.message = r.reason
            return res
        res.success = True
        res.base_wrench = wrench(r.base_wrench)
        res.base_acceleration = accel(a_base)
        res.contact_links = links
        res.contact_wrenches = [wrench(r.wrenches[x]) for x in links]
        res.centers_of_pressure = [point(r.cop[x]) for x in links]
        res.joint_names = names
        res.efforts = r.tau[np.array(idx, dtype=np.int64) - 6].tolist()
        return res

    def _srv_centroidal(self, req: Any, res: Any) -> Any:
        res.success = False
        try:
            live, names, idx, q, v, _ = self._request_state(req)
        except InputError as e:
            res.message = str(e)
            return res
        c = centroidal(live.model, live.data, q, v)
        res.success = True
        res.center_of_mass = point(c.com)
        res.center_of_mass_velocity = vector3(c.com_velocity)
        res.linear_momentum = vector3(c.momentum[:3])
        res.angular_momentum = vector3(c.momentum[3:])
        res.velocity_names = BASE_VELOCITIES + names
        res.matrix = c.matrix[:, np.r_[0:6, np.array(idx, dtype=np.int64)]].ravel().tolist()
        return res


def main(args: list[str] | None = None) -> int:
    return run(FloatingBaseNode, args)


if __name__ == "__main__":
    raise SystemExit(main())
