"""The floating-base node: contact reactions, centre of pressure, consistent joint torques
and, in flight, base and joint accelerations of a legged robot or humanoid.

Inputs (relative names): ``joint_states`` (sensor_msgs/JointState), ``odom``
(nav_msgs/Odometry: base pose in the world, twist in the base frame), optionally ``imu``
(sensor_msgs/Imu in the base frame: its specific force gives the base's linear acceleration;
the angular acceleration is taken as zero), ``desired_accelerations``
(trajectory_msgs/JointTrajectory, one point: joint accelerations; zero until one arrives),
``active_contacts`` (rbd_ros_interfaces/ActiveContacts; until one arrives every contact link
is in contact) and ``robot_description``. Without an IMU the base acceleration is zero: the
reaction of the robot's current posture and velocities (quasi-static in the base).

Outputs, stamped with the joint state's stamp:
``~/base_wrench`` (geometry_msgs/WrenchStamped, base frame): the wrench the base needs,
which the contacts supply; ``~/com_wrench`` (WrenchStamped, world axes, about the centre of
mass ``~/center_of_mass``, PointStamped); per contact ``~/contact/<link>/wrench``
(WrenchStamped in the link's frame) and ``~/contact/<link>/center_of_pressure`` (PointStamped,
world); ``~/joint_torques`` (sensor_msgs/JointState, effort); ``~/status`` (std_msgs/String:
"ok", or why the motion is impossible with these contacts, in which case no wrench or torque
is published for that state); in flight ``~/flight/base_acceleration``
(geometry_msgs/AccelStamped, base frame) and ``~/flight/joint_accelerations``
(JointTrajectory, one point). Service ``~/floating_base_dynamics``.
"""

from __future__ import annotations

import contextlib
import math
from typing import Any

import numpy as np
from geometry_msgs.msg import AccelStamped, Point, PointStamped, Wrench, WrenchStamped
from nav_msgs.msg import Odometry
from rcl_interfaces.msg import ParameterDescriptor, ParameterType, SetParametersResult
from rclpy.parameter import Parameter
from sensor_msgs.msg import Imu, JointState
from std_msgs.msg import String
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

from ..dynamics import Data, Model, RbdError, load_urdf_string
from ..dynamics.contacts import Contact, Reaction, check_contacts, solve
from ..dynamics.floating import base_acceleration_from_imu, forward_dynamics
from ..joint_names import NameMap
from .common import LATCHED, SENSOR, NodeBase, run
from .interfaces import ActiveContacts, FloatingBaseDynamics
from .joint_states import JointStateError, JointStateMerger


class Live:
    """Everything that depends on the model and the contact set; replaced whole."""

    def __init__(self, model: Model, contacts: list[Contact], mu: float,
                 names: NameMap) -> None:
        check_contacts(model, contacts, mu)
        self.model, self.contacts, self.mu = model, contacts, mu
        self.data = Data(model)
        self.merger = JointStateMerger(model, names)
        self.names = self.merger.joints.names
        self.v_index = np.array([self.merger.joints.index[n] for n in self.names])
        self.base_link = model.body_names[0]
        self.active = {c.link for c in contacts}
        self.qdd = np.zeros(model.nv - 6)  # desired joint accelerations
        self.imu: tuple[np.ndarray, np.ndarray] | None = None  # specific force, angular velocity
        self.have_odom = False
        # load the compiled kernels now, not on the first joint state
        solve(model, self.data, model.neutral(), np.zeros(model.nv), np.zeros(model.nv),
              contacts, mu)
        with contextlib.suppress(RbdError):  # a model ABA cannot handle still serves the rest
            forward_dynamics(model, self.data, model.neutral(), np.zeros(model.nv),
                             np.zeros(model.nv - 6))


class FloatingBaseNode(NodeBase):
    def __init__(self, **kwargs: Any) -> None:
        super().__init__("rbd_floating_base", **kwargs)
        d = self.declare_parameter
        d("robot_description", "", ParameterDescriptor(
            type=ParameterType.PARAMETER_STRING,
            description="URDF; empty: wait for the robot_description topic"))
        d("contact_links", Parameter.Type.STRING_ARRAY, ParameterDescriptor(
            type=ParameterType.PARAMETER_STRING_ARRAY, description="links that can touch ground"))
        d("sole_half_lengths", Parameter.Type.DOUBLE_ARRAY, ParameterDescriptor(
            type=ParameterType.PARAMETER_DOUBLE_ARRAY,
            description="per contact link, m along its x axis; 0 (or unset): a point contact"))
        d("sole_half_widths", Parameter.Type.DOUBLE_ARRAY, ParameterDescriptor(
            type=ParameterType.PARAMETER_DOUBLE_ARRAY, description="per contact link, along y"))
        d("friction_coefficient", 0.7, ParameterDescriptor(
            type=ParameterType.PARAMETER_DOUBLE, description="Coulomb friction of the ground"))
        d("gravity", [0.0, 0.0, -9.81], ParameterDescriptor(
            type=ParameterType.PARAMETER_DOUBLE_ARRAY, description="world frame, m/s^2"))
        d("world_frame", "odom", ParameterDescriptor(
            type=ParameterType.PARAMETER_STRING, description="frame_id of world outputs"))
        self.declare_joint_names()
        self.live: Live | None = None
        self.urdf: str | None = None
        self.add_on_set_parameters_callback(self._on_set_parameters)
        self.create_subscription(JointState, "joint_states", self._on_joint_states, SENSOR)
        self.create_subscription(Odometry, "odom", self._on_odom, SENSOR)
        self.create_subscription(Imu, "imu", self._on_imu, SENSOR)
        self.quiet_subscription(JointTrajectory, "desired_accelerations", self._on_desired, 10)
        self.quiet_subscription(ActiveContacts, "active_contacts", self._on_active, 10)
        self.quiet_subscription(String, "robot_description", self._on_description, LATCHED)
        self.pub_base = self.quiet_publisher(WrenchStamped, "~/base_wrench", 10)
        self.pub_com_wrench = self.quiet_publisher(WrenchStamped, "~/com_wrench", 10)
        self.pub_com = self.quiet_publisher(PointStamped, "~/center_of_mass", 10)
        self.pub_tau = self.quiet_publisher(JointState, "~/joint_torques", 10)
        self.pub_status = self.quiet_publisher(String, "~/status", 10)
        self.pub_flight_base = self.quiet_publisher(AccelStamped, "~/flight/base_acceleration",
                                                    10)
        self.pub_flight_joints = self.quiet_publisher(JointTrajectory,
                                                      "~/flight/joint_accelerations", 10)
        self.pub_contact: dict[str, tuple[Any, Any]] = {}
        self.create_service(FloatingBaseDynamics, "~/floating_base_dynamics", self._srv)
        if self.param("robot_description"):
            self._install(self.param("robot_description"), "the robot_description parameter")

    # ------------------------------------------------------------------ configuration
    def _contacts(self, overrides: dict[str, Any]) -> tuple[list[Contact], float]:
        def value(name: str) -> Any:
            return overrides[name] if name in overrides else self.param(name)

        links = list(value("contact_links") or [])
        lengths = list(value("sole_half_lengths") or [0.0] * len(links))
        widths = list(value("sole_half_widths") or [0.0] * len(links))
        if not (len(lengths) == len(widths) == len(links)):
            raise RbdError(f"contact_links ({len(links)}), sole_half_lengths ({len(lengths)}) "
                           f"and sole_half_widths ({len(widths)}) must have equal lengths")
        mu = float(value("friction_coefficient"))
        return [Contact(link, half_length=a, half_width=b)
                for link, a, b in zip(links, lengths, widths, strict=True)], mu

    def _build(self, urdf: str, overrides: dict[str, Any]) -> Live:
        gravity = list(overrides.get("gravity", self.param("gravity")))
        if len(gravity) != 3 or not all(math.isfinite(x) for x in gravity):
            raise RbdError(f"gravity must be 3 finite numbers, got {gravity}")
        with self.core_log():
            model = load_urdf_string(urdf, floating_base=True).with_gravity(gravity)
        contacts, mu = self._contacts(overrides)
        try:
            return Live(model, contacts, mu, self.name_map())
        except JointStateError as e:
            raise RbdError(str(e)) from None

    def _install(self, urdf: str, source: str) -> None:
        try:
            live = self._build(urdf, {})
        except RbdError as e:
            self.get_logger().error(f"rejected the model from {source}; keeping "
                                    f"{'the last good one' if self.live else 'none'}: {e}")
            return
        self.urdf, self.live = urdf, live
        self.settle()
        if self.param("robot_description") != urdf:  # the parameter shows the model in use
            self.set_parameters([Parameter("robot_description", value=urdf)])
        self.get_logger().info(f"model from {source}: {live.model.summary().splitlines()[0]}")

    def _on_set_parameters(self, params: list[Parameter[Any]]) -> SetParametersResult:
        changes = {p.name: p.value for p in params}
        if changes.get("robot_description") == self.urdf:  # the model in use, shown
            del changes["robot_description"]
        urdf = changes.get("robot_description") or self.urdf
        keys = {"robot_description", "contact_links", "sole_half_lengths", "sole_half_widths",
                "friction_coefficient", "gravity"}
        if not keys & changes.keys():
            return SetParametersResult(successful=True)
        try:
            if urdf:
                live = self._build(urdf, changes)
            else:  # no model yet: check what can be checked
                self._contacts(changes)
                live = None
        except RbdError as e:
            return SetParametersResult(successful=False, reason=str(e))
        if live is not None:
            self.urdf, self.live = urdf, live
            self.settle()
        return SetParametersResult(successful=True)

    def _on_description(self, msg: String) -> None:
        self._install(msg.data, "the robot_description topic")

    # ------------------------------------------------------------------ inputs
    def _on_odom(self, msg: Odometry) -> None:
        live = self.live
        if live is None:
            return
        p, o, t = msg.pose.pose.position, msg.pose.pose.orientation, msg.twist.twist
        try:
            live.merger.set_base([p.x, p.y, p.z], [o.x, o.y, o.z, o.w],
                                 [t.linear.x, t.linear.y, t.linear.z,
                                  t.angular.x, t.angular.y, t.angular.z])
        except JointStateError as e:
            self.warn("bad_odom", f"dropped an odometry message: {e}")
            return
        live.have_odom = True

    def _on_imu(self, msg: Imu) -> None:
        live = self.live
        if live is None:
            return
        a, w = msg.linear_acceleration, msg.angular_velocity
        f = np.array([a.x, a.y, a.z])
        if not np.all(np.isfinite(f)):
            self.warn("bad_imu", "dropped an IMU message: NaN or inf")
            return
        live.imu = (f, np.array([w.x, w.y, w.z]))

    def _on_desired(self, msg: JointTrajectory) -> None:
        live = self.live
        if live is None:
            return
        try:
            idx = live.merger.joints.order(msg.joint_names)
            acc = np.asarray(msg.points[0].accelerations if msg.points else [], dtype=float)
            if acc.shape != (len(idx),) or not np.all(np.isfinite(acc)):
                raise JointStateError(f"need one point with {len(idx)} finite accelerations")
        except JointStateError as e:
            self.warn("bad_desired", f"dropped desired_accelerations: {e}")
            return
        live.qdd[np.array(idx) - 6] = acc

    def _on_active(self, msg: ActiveContacts) -> None:
        live = self.live
        if live is None:
            return
        known = {c.link for c in live.contacts}
        unknown = [x for x in msg.links if x not in known]
        if unknown:
            self.warn("bad_active", f"dropped active_contacts: {unknown} are not contact links "
                                    f"{sorted(known)}")
            return
        live.active = set(msg.links)

    def _on_joint_states(self, msg: JointState) -> None:
        live = self.live
        if live is None:
            self.warn("no_model", "ignoring joint_states: no robot_description yet")
            return
        if not self.merge(live.merger, msg) or not live.merger.ready:
            return
        if not live.have_odom:
            self.warn("no_odom", "no odometry yet: the base is taken at the origin, at rest")
        self._publish(live, msg.header.stamp)

    # ------------------------------------------------------------------ outputs
    def _base_acceleration(self, live: Live) -> np.ndarray:
        st = live.merger
        if live.imu is None:
            return np.zeros(6)
        return base_acceleration_from_imu(live.model, st.q, st.v, live.imu[0])

    def _publish(self, live: Live, stamp: Any) -> None:
        st, m = live.merger, live.model
        contacts = [c for c in live.contacts if c.link in live.active]
        if not contacts:  # flight: base and joints move under the measured efforts
            tau = np.nan_to_num(st.effort[6:])
            a_base, qdd = forward_dynamics(m, live.data, st.q, st.v, tau)
            acc = AccelStamped()
            acc.header.stamp, acc.header.frame_id = stamp, live.base_link
            acc.accel.linear.x, acc.accel.linear.y, acc.accel.linear.z = a_base[:3].tolist()
            acc.accel.angular.x, acc.accel.angular.y, acc.accel.angular.z = a_base[3:].tolist()
            self.pub_flight_base.publish(acc)
            msg = JointTrajectory(joint_names=live.names)
            msg.header.stamp = stamp
            msg.points = [JointTrajectoryPoint(accelerations=qdd[live.v_index - 6].tolist())]
            self.pub_flight_joints.publish(msg)
            self.pub_status.publish(String(data="flight"))
            return
        a = np.r_[self._base_acceleration(live), live.qdd]
        r = solve(m, live.data, st.q, st.v, a, contacts, live.mu)
        if not r.feasible:
            self.warn("impossible", f"impossible with contacts {[c.link for c in contacts]}: "
                                    f"{r.reason}")
            self.pub_status.publish(String(data=r.reason))
            return
        self._publish_reaction(live, stamp, r)
        self.pub_status.publish(String(data="ok"))

    def _publish_reaction(self, live: Live, stamp: Any, r: Reaction) -> None:
        world = self.param("world_frame")
        self.pub_base.publish(_wrench_stamped(stamp, live.base_link, r.base_wrench))
        self.pub_com_wrench.publish(_wrench_stamped(stamp, world, r.com_wrench))
        self.pub_com.publish(_point_stamped(stamp, world, r.com))
        for link, w in r.wrenches.items():
            pubs = self.pub_contact.get(link)
            if pubs is None:
                base = f"~/contact/{link}"
                pubs = (self.quiet_publisher(WrenchStamped, f"{base}/wrench", 10),
                        self.quiet_publisher(PointStamped, f"{base}/center_of_pressure", 10))
                self.pub_contact[link] = pubs
            pubs[0].publish(_wrench_stamped(stamp, link, w))
            pubs[1].publish(_point_stamped(stamp, world, r.cop[link]))
        js = JointState(name=live.names, effort=r.tau[live.v_index - 6].tolist())
        js.header.stamp = stamp
        self.pub_tau.publish(js)

    # ------------------------------------------------------------------ service
    def _srv(self, req: Any, res: Any) -> Any:
        live = self.live
        res.success = False
        if live is None:
            res.message = "no model yet: the node has not received a robot_description"
            return res
        try:
            names, idx, q, (vel, acc) = live.merger.joints.full_state(
                req.joint_names, req.positions, velocities=req.velocities,
                accelerations=req.accelerations)
            p, o = req.base_pose.position, req.base_pose.orientation
            t, b = req.base_twist, req.base_acceleration
            base = np.array([p.x, p.y, p.z, o.x, o.y, o.z, o.w])
            twist = np.array([t.linear.x, t.linear.y, t.linear.z,
                              t.angular.x, t.angular.y, t.angular.z])
            accel = np.array([b.linear.x, b.linear.y, b.linear.z,
                              b.angular.x, b.angular.y, b.angular.z])
            n = np.linalg.norm(base[3:])
            if not (np.all(np.isfinite(np.r_[base, twist, accel])) and 0.5 < n < 2.0):
                raise JointStateError("the base pose, twist and acceleration must be finite "
                                      "and the orientation a unit quaternion")
            q[:7] = np.r_[base[:3], base[3:] / n]
            v, a = np.r_[twist, vel[6:]], np.r_[accel, acc[6:]]
            links = list(req.contact_links) or [c.link for c in live.contacts]
            by_link = {c.link: c for c in live.contacts}
            unknown = [x for x in links if x not in by_link]
            if unknown:
                raise JointStateError(f"{unknown} are not contact links {sorted(by_link)}")
            r = solve(live.model, live.data, q, v, a, [by_link[x] for x in links], live.mu)
        except (JointStateError, RbdError) as e:
            res.message = str(e)
            return res
        if not r.feasible:
            res.message = r.reason
            return res
        res.success = True
        res.base_wrench = _wrench(r.base_wrench)
        res.contact_links = links
        res.contact_wrenches = [_wrench(r.wrenches[x]) for x in links]
        res.centers_of_pressure = [Point(x=float(r.cop[x][0]), y=float(r.cop[x][1]),
                                         z=float(r.cop[x][2])) for x in links]
        res.joint_names = names
        res.efforts = r.tau[np.array(idx) - 6].tolist()
        return res


def _wrench(w: np.ndarray) -> Wrench:
    out = Wrench()
    out.force.x, out.force.y, out.force.z = (float(x) for x in w[:3])
    out.torque.x, out.torque.y, out.torque.z = (float(x) for x in w[3:])
    return out


def _wrench_stamped(stamp: Any, frame: str, w: np.ndarray) -> WrenchStamped:
    msg = WrenchStamped(wrench=_wrench(w))
    msg.header.stamp, msg.header.frame_id = stamp, frame
    return msg


def _point_stamped(stamp: Any, frame: str, p: np.ndarray) -> PointStamped:
    msg = PointStamped(point=Point(x=float(p[0]), y=float(p[1]), z=float(p[2])))
    msg.header.stamp, msg.header.frame_id = stamp, frame
    return msg


def main(args: list[str] | None = None) -> int:
    return run(FloatingBaseNode, args)


if __name__ == "__main__":
    raise SystemExit(main())
