"""The trajectory controller node: an arm follows a joint trajectory by computed torque, behind
the FollowJointTrajectory action MoveIt and the ros2 CLI send, commanding a ros2_control
effort controller.

Topics, action (relative names: remap them to your driver's; ``~/`` is under the node's name):

- in ``joint_states`` (sensor_msgs/JointState, best effort, 20 deep): the measured state
- in ``robot_description`` (std_msgs/String, transient local): the URDF
- in ``~/joint_trajectory`` (trajectory_msgs/JointTrajectory): a motion to follow now, as
  joint_trajectory_controller takes one (rqt_joint_trajectory_controller sends it): it
  replaces the goal under way (aborted, saying so); an empty one holds where the arm is
- action ``~/follow_joint_trajectory`` (control_msgs/FollowJointTrajectory): a motion with its
  tolerances; feedback (desired, actual, error) at ``action_monitor_rate``
- out ``commands`` (std_msgs/Float64MultiArray): the efforts, in the order of ``joints`` or of
  the effort controller's own ``joints`` parameter when this topic is remapped to
  ``/<controller>/commands`` (read from the controller, as the dynamics node reads it)
- out ``~/status`` (std_msgs/String, latched): "ok", or what stops the commands now
- out ``/diagnostics`` (diagnostic_msgs/DiagnosticArray): the node's health once a second

Each joint state is answered with one command: the efforts of computed torque at its stamp
(``rbd_ros.dynamics.control``): tau = M(q) (qdd_d + Kd (qd_d - qd) + Kp (q_d - q) + Ki
integral) + C(q, qd) qd + g(q), plus the URDF's friction (``friction``) and the payload, clamped
to the URDF's effort limits (each clamp counted on ``~/status``). The desired motion is the
goal's points joined as joint_trajectory_controller joins them (linear with positions only,
cubic with velocities, quintic with accelerations), from the desired state when the goal came
(a preempted goal's motion goes on from where it was, smoothly); a header stamp of zero starts
it at the last joint state's stamp. Between goals every joint holds: the last goal's final
point, at the start the position first measured, after a cancel or an abort where the arm was.

What differs from joint_trajectory_controller: a goal it cannot follow is accepted and then
aborted with its error code and the reason in ``error_string`` (the controller rejects it,
which tells a client nothing); a trajectory outside the URDF's position or velocity limits is
such a goal (INVALID_GOAL).

Stale or silent joint states abort the goal under way (PATH_TOLERANCE_VIOLATED, saying so)
and stop the commands after one last one: the gravity torques at the last measured posture,
which the effort controller then keeps (it holds its last command). With no feedback a PD term
would push on a stale error, zero efforts would drop the arm; gravity alone holds an arm at
rest where it was. When fresh states come back every joint holds where it is then.
"""

from __future__ import annotations

import sys
import time
from array import array
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from control_msgs.action import FollowJointTrajectory
from diagnostic_msgs.msg import DiagnosticStatus
from rcl_interfaces.msg import SetParametersResult
from rclpy.action import ActionServer, CancelResponse, GoalResponse
from rclpy.action.server import ServerGoalHandle
from rclpy.parameter import Parameter
from rclpy.task import Future
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray, String
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

from ..dynamics import Data, Model, RbdError, gravity, load_urdf_string
from ..dynamics.control import ComputedTorque, Goal, Outcome, Reference, Spline, Tolerances
from ..dynamics.control import gains as pd_gains
from ..dynamics.control.computed_torque import position_error
from ..dynamics.control.limits import check_limits
from ..dynamics.control.spline import beyond_limits
from ..wire.errors import InputError
from ..wire.joint_states import JointStateMerger, format_stamp
from ..wire.trajectory import trajectory_points
from .common import LATCHED, NodeBase, input_qos, run
from .controllers import Controllers
from .messages import joint_state_reader, stamp_msg, stamp_ns
from .parameters import TRAJECTORY_CONTROLLER, check_declared, declare, refusal

WATCHDOG_S = 0.02  # how often stale inputs, cancels and controllers are looked at
Result = FollowJointTrajectory.Result


class Live:
    """Everything that depends on the model and the command order; replaced whole."""

    def __init__(self, model: Model, merger: JointStateMerger, order: Sequence[str],
                 law: ComputedTorque) -> None:
        self.model, self.data, self.merger = model, Data(model), merger
        self.index = merger.joints
        self.names = list(model.state_joint_names)  # for /diagnostics
        self.order = list(order)  # the controlled joints, in the commands' order
        self.v = np.array(self.index.order(self.order), dtype=np.int64)
        self.q = self.index.q_index(self.v)
        joints = [model.joint(n) for n in self.order]
        limits = np.array([j.effort for j in joints], dtype=np.float64)
        self.limits = np.where(limits > 0, limits, np.inf)  # effort 0 in a URDF: none given
        self.lower = np.array([j.lower for j in joints])
        self.upper = np.array([j.upper for j in joints])
        self.speed = np.array([j.velocity if j.velocity > 0 else np.inf for j in joints])
        self.law = law
        self.reference: Reference | None = None  # once a state is measured: hold it
        self.command = Float64MultiArray()


@dataclass
class Active:
    """A goal under way: its handle (None: a topic's trajectory), what judges it, and the
    future its execution waits on."""

    handle: ServerGoalHandle | None
    goal: Goal | None
    done: Future | None
    feedback_ns: int = 0  # stamp of the last feedback


class TrajectoryControllerNode(NodeBase):
    def __init__(self, **kwargs: Any) -> None:
        super().__init__("rbd_trajectory_controller", **kwargs)
        self.live: Live | None = None
        self.bare: Model | None = None
        declare(self, TRAJECTORY_CONTROLLER)
        self.name_map()
        check_declared(self.param, TRAJECTORY_CONTROLLER)
        self.timeout_ns = round(self.param("joint_state_timeout") * 1e9)
        self.add_on_set_parameters_callback(self._on_set_parameters)
        self.reader = joint_state_reader(JointState)
        self.create_subscription(JointState, "joint_states", self.on_live(self._on_joint_states),
                                 input_qos(self.param("joint_states_qos")), raw=True)
        self.quiet_subscription(String, "robot_description", self._on_description, LATCHED)
        self.quiet_subscription(JointTrajectory, "~/joint_trajectory",
                                self.on_live(self._on_trajectory), 10)
        self.pub_command = self.quiet_publisher(Float64MultiArray, "commands", 10)
        self.pub_status = self.quiet_publisher(String, "~/status", LATCHED)
        self.active: Active | None = None
        self.stamp = 0  # ns of the last joint state answered
        self.arrived = 0.0  # time.monotonic() of the last joint state
        self.stopped = False  # commands stopped for stale joint states
        self.saturations = 0
        self.clamped_at = 0.0
        self.server = ActionServer(self, FollowJointTrajectory, "~/follow_joint_trajectory",
                                   self._execute, goal_callback=lambda _: GoalResponse.ACCEPT,
                                   cancel_callback=self._on_cancel)
        self.controllers = Controllers(self, self._rebuild)
        self.create_timer(WATCHDOG_S, self._watchdog)
        if self.param("robot_description"):
            self._install(self.param("robot_description"), "the robot_description parameter",
                          from_parameter=True)

    def destroy_node(self) -> None:
        """The action server too: rclpy's destroy_node leaves it, and with it the node's
        handle, alive (in a process that goes on, as a test's or a component container's, the
        graph then shows a node of this name with only the action's topics)."""
        self.server.destroy()
        super().destroy_node()

    def hold_early(self, callback: Any, msg: Any) -> None:
        """Inputs before a model and a command order are dropped, not held: a controller acts
        on the present (``~/status`` says what it waits for)."""

    # ------------------------------------------------------------------ parameters, model
    def _on_set_parameters(self, params: list[Parameter[Any]]) -> SetParametersResult:
        for p in params:
            reason = refusal(TRAJECTORY_CONTROLLER, p.name, p.value)
            if reason:
                return SetParametersResult(successful=False, reason=reason)
        changed = {p.name: p.value for p in params}
        if "robot_description" in changed and changed["robot_description"] and \
                changed["robot_description"] != self.urdf:
            try:
                self._install(changed["robot_description"], "the robot_description parameter",
                              from_parameter=True, changed=changed)
            except (RbdError, InputError) as e:
                return SetParametersResult(successful=False, reason=f"rejected URDF: {e}")
        elif self.bare is not None and changed.keys() - {"robot_description"}:
            try:
                self._rebuild(changed)
            except (RbdError, InputError, ValueError) as e:
                return SetParametersResult(successful=False, reason=str(e))
        if "joint_state_timeout" in changed:
            self.timeout_ns = round(changed["joint_state_timeout"] * 1e9)
        return SetParametersResult(successful=True)

    def value(self, name: str, changed: dict[str, Any] | None) -> Any:
        return changed[name] if changed and name in changed else self.param(name)

    def _install(self, urdf: str, source: str, from_parameter: bool = False,
                 changed: dict[str, Any] | None = None) -> None:
        """A new model; a bad one is refused and the last good one stays."""
        try:
            with self.core_log():
                bare = load_urdf_string(urdf)
            self._rebuild(changed, bare)
        except (RbdError, InputError, ValueError) as e:
            if from_parameter:
                raise
            self.refused_model(source, e)
            return
        self.model_in_use(urdf, source, bare, from_parameter)

    def _rebuild(self, changed: dict[str, Any] | None = None, bare: Model | None = None
                 ) -> None:
        """Make everything for the model (``bare``, or the one in use) and the parameters
        (``changed`` ones being set) and put it in use; ValueError (RbdError, InputError) says
        why it cannot be, and nothing changes. Called again when a controller answers."""
        bare = bare if bare is not None else self.bare
        if bare is None:
            return
        model = bare.with_gravity(list(self.value("gravity", changed)))
        link, payload = self.value("payload_link", changed), self.value("payload", changed)
        if link and payload:
            model = model.with_payload(link, list(payload))
        old = self.live
        merger = old.merger if old is not None and old.model.nv == model.nv and \
            old.names == list(model.state_joint_names) else JointStateMerger(model,
                                                                            self.name_map())
        order, why = self.controllers.order(model.state_joint_names,
                                            list(self.value("joints", changed) or []),
                                            [self.pub_command.topic_name],
                                            self.name_map().names)
        self.bare = bare
        if order is None:
            self.report("order", f"no commands: {why}; set the joints parameter to the effort "
                                 f"controller's order (the model's joints: "
                                 f"{list(model.state_joint_names)})")
            self._finish(Outcome.PATH_TOLERANCE_VIOLATED, "the command order is gone: " + why,
                         hold=False)
            self.live = None
            return
        self.report("order", None)
        kp, kd, ki, limit = self._gains(len(order), changed)
        law = ComputedTorque(model, np.array(merger.joints.order(order), dtype=np.int64),
                             kp, kd, ki, limit, friction=bool(self.value("friction", changed)))
        live = Live(model, merger, order, law)
        if old is not None and old.order == live.order and old.reference is not None:
            live.reference = old.reference  # the motion goes on in the new model
        elif old is not None and self.active is not None:
            self._finish(Outcome.PATH_TOLERANCE_VIOLATED,
                         "the controlled joints changed: the goal's motion ends", hold=False)
        self.live = live
        self.settle()

    def _gains(self, n: int, changed: dict[str, Any] | None) -> list[np.ndarray]:
        """Kp, Kd, Ki and the integral's limit for ``n`` joints: ``kp`` and ``kd`` where set,
        else from natural_frequency and damping_ratio."""
        kp, kd = pd_gains(self.value("natural_frequency", changed),
                          self.value("damping_ratio", changed))
        out = []
        for name, default in (("kp", kp), ("kd", kd), ("ki", 0.0), ("integral_limit", None)):
            given = list(self.value(name, changed) or [])
            if len(given) not in (0, 1, n):
                raise ValueError(f"{name} has {len(given)} values: give one for all joints or "
                                 f"one per joint ({n})")
            out.append(np.resize(np.array(given or [default], dtype=np.float64), n))
        return out

    def _on_description(self, msg: String) -> None:
        if msg.data != self.urdf:
            self._install(msg.data, "the robot_description topic")

    # ------------------------------------------------------------------ goals
    def _on_cancel(self, handle: ServerGoalHandle) -> CancelResponse:
        active = self.active
        if active is None or active.handle is not handle:
            return CancelResponse.REJECT
        return CancelResponse.ACCEPT  # the next look (a state or the watchdog) ends it

    async def _execute(self, handle: ServerGoalHandle) -> Any:
        """A FollowJointTrajectory goal: started, or aborted at once with the reason; the
        result once it ends."""
        goal = handle.request
        live = self.live
        code, why = Result.INVALID_GOAL, ""
        if live is None or live.reference is None:
            why = ("no model yet" if self.live is None and self.bare is None else
                   "no command order: " + self.problems.get("order", "") if live is None else
                   "no joint state yet")
        elif self.stopped:
            why = "stale joint_states: " + self.problems.get("stale", "")
        elif goal.multi_dof_trajectory.points or goal.component_path_tolerance or \
                goal.component_goal_tolerance:
            why = "multi-DOF trajectories and component tolerances are not supported"
        else:
            try:
                active = self._start(live, goal.trajectory, handle, goal)
            except _RefusedError as e:
                code, why = e.code, str(e)
            except Exception as e:  # a bug of ours: said, and the node goes on
                self.warn("internal", f"internal error on a goal (please report it): {e!r}")
                code, why = Result.INVALID_GOAL, f"internal error (please report it): {e!r}"
            else:
                done = active.done
                assert done is not None
                return await done
        handle.abort()
        self.get_logger().warning(f"goal aborted: {why}")
        return Result(error_code=code, error_string=why)

    def _on_trajectory(self, live: Live, msg: JointTrajectory) -> None:
        """A trajectory on ``~/joint_trajectory``: followed at once, no tolerances."""
        if live.reference is None or self.stopped:
            self.warn("bad_trajectory", "dropped a joint_trajectory: no fresh joint state yet")
            return
        if not msg.points:
            self._finish(Outcome.PATH_TOLERANCE_VIOLATED, "an empty joint_trajectory came: "
                         "holding where the arm is", hold=True)
            self._hold_measured(live)
            return
        try:
            self._start(live, msg, None, None)
        except _RefusedError as e:
            self.warn("bad_trajectory", f"dropped a joint_trajectory: {e}")

    def _start(self, live: Live, traj: JointTrajectory, handle: ServerGoalHandle | None,
               goal: Any) -> Active:
        """Check a trajectory, put it in the reference from the desired state now and make it
        the active goal (ending the one under way); _RefusedError says why it cannot be."""
        reference = live.reference
        assert reference is not None
        names = list(traj.joint_names)
        unknown = [n for n in names if n not in live.order]
        if unknown or not names or len(set(names)) != len(names):
            raise _RefusedError(Result.INVALID_JOINTS, (
                f"joints {unknown} are not controlled (the controlled joints: {live.order})"
                if unknown else "no joint_names" if not names else
                f"joint_names repeat: {names}"))
        joints = np.array([live.order.index(n) for n in names], dtype=np.int64)
        if not traj.points:
            raise _RefusedError(Result.INVALID_GOAL, "the trajectory has no points")
        try:
            times, q, v, a = trajectory_points(traj.points, len(names))
        except InputError as e:
            raise _RefusedError(Result.INVALID_GOAL, str(e)) from e
        for given, what in ((v, "velocities"), (a, "accelerations")):
            if given is not None and np.nan_to_num(given[-1]).any():
                raise _RefusedError(Result.INVALID_GOAL, f"the last point's {what} are not zero: "
                                    "a trajectory ends at rest")
        now = self.stamp
        start = stamp_ns(traj.header.stamp) or now
        if start + times[-1] < now:
            raise _RefusedError(Result.OLD_HEADER_TIMESTAMP, (
                f"the trajectory ends at {format_stamp(start + times[-1])}, before the last "
                f"joint state's stamp {format_stamp(now)}"))
        qd, vd, ad = reference.sample(now)
        state = (qd[joints], vd[joints], ad[joints]) if start <= now else \
            (qd[joints], np.zeros(len(joints)), np.zeros(len(joints)))
        spline = Spline(times, q, v, a, state)
        why = beyond_limits(spline, names, live.lower[joints], live.upper[joints],
                            live.speed[joints])
        if why:
            raise _RefusedError(Result.INVALID_GOAL, "outside the URDF's limits: " + why)
        rest = live.merger.q.copy()  # the other joints where they are, the held ones held
        rest[live.q] = qd
        over = check_limits(live.law.model, spline, live.v[joints], rest,
                            friction=live.law.friction).first_over()
        if over:
            raise _RefusedError(Result.INVALID_GOAL, "beyond the URDF's effort limits: " + over)
        judged = None
        if goal is not None:
            judged = Goal(spline, joints, names, start, *self._tolerances(live, joints, goal))
        self._finish(Outcome.PATH_TOLERANCE_VIOLATED, "preempted by a newer goal", hold=False,
                     code=Result.INVALID_GOAL)
        reference.follow(spline, joints, start, hold=qd)
        self.active = Active(handle, judged, Future() if handle is not None else None)
        return self.active

    def _tolerances(self, live: Live, joints: np.ndarray, goal: Any
                    ) -> tuple[Tolerances, Tolerances, int]:
        """The goal's path and goal tolerances for ``joints``, over the parameters' defaults,
        and its goal time (ns); _RefusedError for a tolerance of a joint the goal does not move."""
        names = [live.order[k] for k in joints]
        n = len(names)

        def defaults(name: str) -> np.ndarray:
            given = np.resize(np.array(list(self.param(name) or [0.0]), dtype=np.float64),
                              len(live.order))[joints]
            return np.where(given > 0, given, np.inf)

        stopped = self.param("stopped_velocity_tolerance")
        path = Tolerances(defaults("path_tolerance"), np.full(n, np.inf), np.full(n, np.inf))
        final = Tolerances(defaults("goal_tolerance"),
                           np.full(n, stopped if stopped > 0 else np.inf), np.full(n, np.inf))
        rows = []
        for given in (goal.path_tolerance, goal.goal_tolerance):
            lacking = [t.name for t in given if t.name not in names]
            if lacking:
                raise _RefusedError(Result.INVALID_JOINTS, f"tolerances for joints {lacking}, "
                                                      f"which the goal does not move ({names})")
            rows.append([(names.index(t.name), t.position, t.velocity, t.acceleration)
                         for t in given])
        goal_time = stamp_ns(goal.goal_time_tolerance) or round(self.param("goal_time") * 1e9)
        return path.given(rows[0]), final.given(rows[1]), goal_time

    def _finish(self, outcome: Outcome, why: str, hold: bool,
                code: int = Result.PATH_TOLERANCE_VIOLATED) -> None:
        """End the goal under way (if any): succeeded, canceled (``why`` empty: its cancel was
        asked) or aborted with ``code`` (GOAL_TOLERANCE_VIOLATED for that outcome) and ``why``;
        ``hold``: every joint then holds where the arm is."""
        active, self.active = self.active, None
        if active is None:
            return
        handle, result = active.handle, Result()
        if handle is not None and outcome == Outcome.SUCCEEDED:
            handle.succeed()
            result.error_string = "the goal is reached"
        elif handle is not None and not why:
            handle.canceled()
            result.error_string = "canceled: holding where the arm is"
        elif handle is not None:
            result.error_code = (Result.GOAL_TOLERANCE_VIOLATED
                                 if outcome == Outcome.GOAL_TOLERANCE_VIOLATED else code)
            result.error_string = why
            handle.abort()
            self.get_logger().warning(f"goal aborted: {why}")
        if active.done is not None:
            active.done.set_result(result)
        live = self.live
        if hold and live is not None:
            self._hold_measured(live)

    def _hold_measured(self, live: Live) -> None:
        if live.reference is not None:
            live.reference.hold_at(live.merger.q[live.q])
            live.law.reset()

    # ------------------------------------------------------------------ the loop
    def _on_joint_states(self, live: Live, raw: bytes) -> None:
        stamp = self.merge(live.merger, self.reader, raw)
        if stamp is None or not live.merger.ready:
            return
        self.arrived = time.monotonic()
        st = live.merger
        if st.stale(self.timeout_ns):
            self._stale(live, st.stale_note(self.timeout_ns))
            return
        dt = (stamp - self.stamp) * 1e-9 if self.stamp and not self.stopped else 0.0
        if self.stopped or live.reference is None:
            self.stopped = False
            self.report("stale", None)
            if live.reference is None:
                live.reference = Reference(st.q[live.q])
            else:
                self._hold_measured(live)
        self.stamp = stamp
        t0 = time.perf_counter_ns()
        desired = live.reference.sample(stamp)
        tau = live.law.efforts(st.q, st.v, desired, dt if 0 < dt <= self.timeout_ns * 1e-9
                               else 0.0)[live.v]
        over = np.abs(tau) > live.limits
        if over.any():
            live.law.saturated[:] = np.where(over, np.sign(tau), 0)
            self._clamped(live, tau, over)
            tau = np.clip(tau, -live.limits, live.limits)
        elif live.law.saturated.any():
            live.law.saturated[:] = 0
        live.command.data = array("d", tau.tobytes())
        self.pub_command.publish(live.command)
        self.health.answer(time.perf_counter_ns() - t0)
        active = self.active
        if active is not None:
            self._judge(live, active, stamp, desired)

    def _judge(self, live: Live, active: Active, stamp: int,
               desired: tuple[np.ndarray, np.ndarray, np.ndarray]) -> None:
        st = live.merger
        qd, vd, ad = desired
        error = (position_error(qd, st.q[live.q], live.law.wrap), vd - st.v[live.v],
                 ad - st.a[live.v])
        handle = active.handle
        if handle is not None and handle.is_cancel_requested:
            self._finish(Outcome.PATH_TOLERANCE_VIOLATED, "", hold=True)
            return
        if handle is not None and stamp - active.feedback_ns >= 1e9 / max(
                self.param("action_monitor_rate"), 1e-3):
            active.feedback_ns = stamp
            handle.publish_feedback(self._feedback(live, stamp, desired, error))
        if active.goal is None:
            if live.reference is not None and live.reference.spline is not None and \
                    stamp >= live.reference.start_ns + live.reference.spline.duration_ns:
                self.active = None  # a topic's trajectory: done, its last point held
            return
        j = active.goal.joints
        outcome, why = active.goal.judge(stamp, [e[j] for e in error])
        if outcome == Outcome.SUCCEEDED:
            self._finish(outcome, "", hold=False)
        elif outcome != Outcome.RUNNING:
            self._finish(outcome, why, hold=True)

    def _feedback(self, live: Live, stamp: int, desired: tuple[np.ndarray, ...],
                  error: tuple[np.ndarray, ...]) -> Any:
        st = live.merger
        fb = FollowJointTrajectory.Feedback(joint_names=live.order)
        fb.header.stamp = stamp_msg(stamp)
        fb.desired = JointTrajectoryPoint(positions=desired[0].tolist(),
                                          velocities=desired[1].tolist(),
                                          accelerations=desired[2].tolist())
        fb.actual = JointTrajectoryPoint(positions=st.q[live.q].tolist(),
                                         velocities=st.v[live.v].tolist())
        fb.error = JointTrajectoryPoint(positions=error[0].tolist(),
                                        velocities=error[1].tolist())
        return fb

    def _clamped(self, live: Live, tau: np.ndarray, over: np.ndarray) -> None:
        self.saturations += int(over.sum())
        self.clamped_at = time.monotonic()
        worst = int(np.argmax(np.where(over, np.abs(tau) / live.limits, 0)))
        self.report("clamped", f"clamped {self.saturations} efforts to the URDF's <limit "
                               f"effort> so far; the last: {live.order[worst]} asked "
                               f"{tau[worst]:.4g}, limit {live.limits[worst]:.4g}")

    def _stale(self, live: Live, note: str) -> None:
        """Stale or silent joint states: the goal aborted, one last command (gravity at the
        last measured posture), then none until they are fresh."""
        if self.stopped:
            return
        self.stopped = True
        why = f"{note}: commands stopped at gravity compensation of the last posture"
        self.report("stale", why)
        self._finish(Outcome.PATH_TOLERANCE_VIOLATED, "stale joint_states: " + note,
                     hold=False)
        if live.reference is not None:
            g = gravity(live.model, live.data, live.merger.q)[live.v]
            live.command.data = array("d", np.clip(g, -live.limits, live.limits).tobytes())
            self.pub_command.publish(live.command)

    def _watchdog(self) -> None:
        """Silent joint states, cancels asked while no state comes, controllers to ask."""
        live = self.live
        if self.bare is None:
            self.report("model", "no model yet: waiting for robot_description (the parameter "
                                 "or the topic)", log=False)
            return
        self.report("model", None)
        if live is None:  # no command order yet: the controller is asked again (its answer
            self.controllers.ask([self.pub_command.topic_name])  # rebuilds)
            return
        quiet = time.monotonic() - self.arrived
        if live.reference is not None and not self.stopped and quiet > self.timeout_ns * 1e-9:
            self._stale(live, f"stale joint_states: none for {quiet:.3f} s, the last at "
                              f"{format_stamp(self.stamp)} (limit {self.timeout_ns * 1e-6:g} "
                              "ms)")
        active = self.active
        if self.stopped and active is not None and active.handle is not None and \
                active.handle.is_cancel_requested:
            self._finish(Outcome.PATH_TOLERANCE_VIOLATED, "", hold=False)
        if self.saturations and time.monotonic() - self.clamped_at > 1.0:
            self.report("clamped", None)
        self.publish_status(force=False)

    def diagnosis(self) -> tuple[bytes, str, list[tuple[str, str]]]:
        level, message, values = super().diagnosis()
        live, active = self.live, self.active
        if active is not None and level == DiagnosticStatus.OK:
            message = "following a goal" if active.handle is not None else \
                "following a joint_trajectory"
        return level, message, [
            *values,
            ("controlled joints", ", ".join(live.order) if live else "none"),
            ("efforts clamped since start", str(self.saturations)),
            ("goal", "none: holding" if active is None else "under way")]


class _RefusedError(Exception):
    """A trajectory that cannot be followed: the action's error code and the reason."""

    def __init__(self, code: int, why: str) -> None:
        super().__init__(why)
        self.code = code


def main(args: list[str] | None = None) -> int:
    return run(TrajectoryControllerNode, args)


if __name__ == "__main__":
    sys.exit(main())
