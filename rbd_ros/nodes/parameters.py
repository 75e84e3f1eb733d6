"""The nodes' parameters as tables, a row each: name, default, description, range, read-only,
and the check a value must pass. A node declares its table (``declare``) and refuses a value
with the row's reason (``refusal``), at start-up and when one is set; ``ros2 param describe``
and the generated reference (doc/_ext/generated_reference.py) show what the rows say."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from rcl_interfaces.msg import FloatingPointRange, ParameterDescriptor
from rclpy.node import Node
from rclpy.parameter import Parameter

from ..dynamics import RbdError
from ..dynamics.algorithm.rnea import SLIDING_SPEED
from ..dynamics.estimation.contact_estimation import (
    DEFAULT_GAIN as CONTACT_GAIN,
)
from ..dynamics.estimation.contact_estimation import (
    DEFAULT_MAX_SPEED,
    DEFAULT_RELEASE,
    DEFAULT_THRESHOLD,
)
from ..dynamics.estimation.legged import (
    DEFAULT_FRICTION,
    DEFAULT_TIMEOUT,
    WORLD_FRAME,
)
from ..dynamics.estimation.observer import (
    COLLISION_RELEASE,
    DEFAULT_GAIN,
    EXTERNAL_GAIN,
    MOVING_SPEED,
    THRESHOLD_PARAMETERS,
    thresholds_problem,
)
from ..dynamics.multibody.model import check_gravity
from .common import QOS_CHOICES, REPLAY_DEPTH, SENSOR, input_qos

STRINGS, NUMBERS = Parameter.Type.STRING_ARRAY, Parameter.Type.DOUBLE_ARRAY  # unset by default


@dataclass(frozen=True)
class Param:
    name: str
    default: Any  # the value; a Parameter.Type: unset, of that type
    description: str
    span: tuple[float, float] | None = None  # floating_point_range: rclpy refuses the rest
    read_only: bool = False
    check: Callable[[Any], str] | None = None  # why a (set) value is refused, or ''

    def descriptor(self) -> ParameterDescriptor:
        kind = (self.default if isinstance(self.default, Parameter.Type)
                else Parameter.Type.from_parameter_value(self.default))
        span = ([] if self.span is None else
                [FloatingPointRange(from_value=self.span[0], to_value=self.span[1], step=0.0)])
        return ParameterDescriptor(type=kind.value, description=self.description,
                                   read_only=self.read_only, floating_point_range=span)

    def refusal(self, value: Any) -> str:
        """Why ``value`` cannot be this parameter's, by its check ('' if it can or is unset)."""
        return "" if self.check is None or value is None else self.check(value)


def declare(node: Node, table: Sequence[Param]) -> None:
    for p in table:
        node.declare_parameter(p.name, p.default, p.descriptor())


def check_declared(param: Callable[[str], Any], table: Sequence[Param]) -> None:
    """ValueError naming the first parameter of ``table`` whose value at start-up
    (``param(name)``: a node's, None where unset) its row refuses: a node that cannot work
    with it does not start."""
    for p in table:
        reason = p.refusal(param(p.name))
        if reason:
            raise ValueError(f"parameter {p.name}: {reason}")


def refusal(table: Sequence[Param], name: str, value: Any) -> str:
    """Why ``value`` cannot be parameter ``name`` of ``table``, by its row's check ('' if it
    can, is unset, or the row has none)."""
    row = next((p for p in table if p.name == name), None)
    return "" if row is None else row.refusal(value)


def _said(check: Callable[[Any], object]) -> Callable[[Any], str]:
    """A check that raises what it refuses (RbdError, ValueError) as one that says why."""
    def reason(value: Any) -> str:
        try:
            check(value)
        except (RbdError, ValueError) as e:
            return str(e)
        return ""

    return reason


def _thresholds(name: str) -> Callable[[Any], str]:
    return lambda value: thresholds_problem(name, list(value))


def _urdf(text: str) -> Param:
    return Param("robot_description", "", text)


#: what maps a driver's joint names to the model's, read once at start-up
JOINT_NAMES = (
    Param("joint_rename", STRINGS,
          "joint_states names -> the model's: OLD=NEW, or OLD_*=NEW_* for a prefix",
          read_only=True),
    Param("held_joints", STRINGS, "joints no joint_states message carries, held at "
          "held_positions", read_only=True),
    Param("held_positions", NUMBERS, "one per held joint", read_only=True),
    Param("effort_scale_joints", STRINGS, "joints whose joint_states efforts are not torques "
          "(motor currents), by the model's names", read_only=True),
    Param("effort_scales", NUMBERS, "one per effort_scale_joints joint: effort x scale = "
          "torque (N m per A at the joint)", read_only=True),
)

DYNAMICS = (
    _urdf("URDF of the robot; empty: wait for the robot_description topic"),
    Param("floating_base", False, "add a free-flyer root (base at the origin, at rest); a "
          "URDF whose root is a floating joint from a massless link has it already",
          read_only=True),
    Param("joints", STRINGS, "order of the Float64MultiArray topics (effort_commands, "
          "*_command) and of collision_thresholds unless collision_joints is set; empty: the "
          "controller's `joints`, read from the node /C when a topic is remapped to "
          "/C/commands (else those topics stay silent), and the model's order for the "
          "thresholds"),
    Param("joint_state_timeout", 0.05, "s: a joint whose last joint_states stamp is this far "
          "from the newest one's, or joint_states silent this long, stops every output "
          "computed from them (~/status says which joints) until fresh again",
          span=(0.001, 60.0)),
    Param("clamp_to_effort_limits", True, "clamp the *_command outputs to the URDF's <limit "
          "effort> (each clamp counted on ~/status); false: send them as computed"),
    Param("gravity", [0.0, 0.0, -9.81], "gravity in the root frame, m/s^2",
          check=_said(check_gravity)),
    Param("payload_link", "", "the link that holds `payload`; empty: no payload"),
    Param("payload", NUMBERS, "a held tool or object on `payload_link`: mass (kg), centre of "
          "mass x y z (m, link frame), inertia about it ixx ixy ixz iyy iyz izz (kg m^2, link "
          "axes), as `rbd-ros identify --payload` prints it; every torque and the observer "
          "include it; unset or empty: none"),
    Param("publish_rate", 0.0, "Hz; 0 publishes once per joint-state message",
          span=(0.0, 1e4)),
    Param("joint_states_qos", "sensor_data", "QoS of joint_states: sensor_data (best effort, "
          f"{SENSOR.depth} deep) or reliable ({REPLAY_DEPTH} deep, for a lossless replay)",
          read_only=True, check=_said(input_qos)),
    Param("friction", False, "add the URDF's joint friction to every torque the node computes "
          "and remove it from the measured efforts in external_torques: viscous, and Coulomb "
          f"through tanh(v / {SLIDING_SPEED:g}), whole above about {2.5 * SLIDING_SPEED:g} rad/s"),
    Param("observer_gain", DEFAULT_GAIN, "1/s: bandwidth of the momentum observer whose "
          "residual the collision flags and collision_thresholds* are on", span=(0.01, 1e4)),
    Param("external_torques_gain", EXTERNAL_GAIN, "1/s: bandwidth of the momentum observer "
          "behind external_torques (the collision flags are on its residual at observer_gain; "
          "lower: less noise, later)", span=(0.01, 1e4)),
    Param("collision_joints", STRINGS, "the joints collision_thresholds* are for, in their "
          "order (others are never flagged); empty: `joints`, else the model's order"),
    Param(THRESHOLD_PARAMETERS[0], NUMBERS, "N m (N): external torque that flags a collision, "
          "one for all joints or one per collision_joints joint; unset or empty: no collision "
          "output", check=_thresholds(THRESHOLD_PARAMETERS[0])),
    Param(THRESHOLD_PARAMETERS[1], NUMBERS, "N m (N): added to collision_thresholds once a "
          f"joint moves (the friction of a joint that slides), times tanh(speed / "
          f"{MOVING_SPEED} rad/s); one for all joints or one per collision_joints joint; "
          "unset: 0", check=_thresholds(THRESHOLD_PARAMETERS[1])),
    Param(THRESHOLD_PARAMETERS[2], NUMBERS, "N m s/rad (N s/m): added to collision_thresholds "
          "per unit of the joint's speed; one for all joints or one per collision_joints "
          "joint; unset: 0", check=_thresholds(THRESHOLD_PARAMETERS[2])),
    Param("collision_release", COLLISION_RELEASE, "a flagged joint clears below this fraction "
          "of its threshold", span=(0.01, 1.0)),
    *JOINT_NAMES,
)

FLOATING_BASE = (
    _urdf("URDF; empty: wait for the robot_description topic"),
    Param("contact_links", STRINGS, "links that can touch the ground; each described by "
          "contacts.<link>.*"),
    Param("friction_coefficient", DEFAULT_FRICTION, "Coulomb friction of the ground",
          span=(0.0, 10.0)),
    Param("gravity", [0.0, 0.0, -9.81], "world frame, m/s^2", check=_said(check_gravity)),
    Param("world_frame", WORLD_FRAME, "frame_id of world outputs"),
    Param("input_timeout", DEFAULT_TIMEOUT, "s: how long a joint state waits for the odometry "
          "(and IMU) of its stamp, and how far from its stamp the nearest one may be when none "
          "brackets it", span=(0.0, 10.0)),
    Param("joint_states_qos", "sensor_data", f"QoS of joint_states, odom and imu: "
          f"{' or '.join(QOS_CHOICES)} (best effort, {SENSOR.depth} deep, for a live robot; "
          f"reliable, {REPLAY_DEPTH} deep, for a lossless replay)", read_only=True,
          check=_said(input_qos)),
    Param("estimate_contacts", False, "estimate which contact links touch from the joint "
          "efforts (and ignore the active_contacts topic)"),
    Param("contact_threshold", DEFAULT_THRESHOLD, "estimate_contacts: a link touches once its "
          "estimated normal force exceeds this fraction of the robot's weight",
          span=(0.0, 1.0)),
    Param("contact_release", DEFAULT_RELEASE, "estimate_contacts: ...and lets go below this "
          "fraction of the threshold", span=(0.0, 1.0)),
    Param("contact_max_speed", DEFAULT_MAX_SPEED, "estimate_contacts: m/s, a link touches down "
          "only while its contact point is this slow, and lets go when it moves three times "
          "faster; below a quarter of it the point is still", span=(0.0, 100.0)),
    Param("contact_observer_gain", CONTACT_GAIN, "estimate_contacts: the momentum observer's "
          "gain, 1/s (its lag: 1/gain)", span=(0.0, 1e5)),
    *JOINT_NAMES,
)

def _per_joint(name: str, least: float) -> Callable[[Any], str]:
    """Values of a per-joint array parameter: each finite and >= ``least``."""
    def check(values: Any) -> str:
        bad = [x for x in values if not (math.isfinite(x) and x >= least)]
        return f"{name} must be finite and >= {least:g}, got {bad}" if bad else ""

    return check


TRAJECTORY_CONTROLLER = (
    _urdf("URDF of the arm (fixed base); empty: wait for the robot_description topic"),
    Param("joints", STRINGS, "the controlled joints, in the order of the commands topic; "
          "empty: the effort controller's `joints`, read from the node /C when commands is "
          "remapped to /C/commands (until then: no commands)"),
    Param("natural_frequency", 20.0, "rad/s: every joint's error settles as a second-order "
          "system of this natural frequency (kp = w^2, kd = 2 zeta w) where kp and kd are "
          "unset", span=(0.01, 1e4)),
    Param("damping_ratio", 1.0, "zeta of that system: 1 critically damped",
          span=(0.0, 100.0)),
    Param("kp", NUMBERS, "1/s^2 per joint (or one for all): the commanded acceleration per "
          "rad of position error; unset: natural_frequency^2", check=_per_joint("kp", 0.0)),
    Param("kd", NUMBERS, "1/s per joint (or one for all): ...per rad/s of velocity error; "
          "unset: 2 damping_ratio natural_frequency", check=_per_joint("kd", 0.0)),
    Param("ki", NUMBERS, "1/s^3 per joint (or one for all): ...per rad s of integrated "
          "position error; unset: 0 (no integral)", check=_per_joint("ki", 0.0)),
    Param("integral_limit", [10.0], "rad/s^2 per joint (or one for all): the most commanded "
          "acceleration the integral may add (it also stops growing while a joint's effort is "
          "clamped)", check=_per_joint("integral_limit", 0.0)),
    Param("path_tolerance", NUMBERS, "rad (m) per joint (or one for all): a goal aborts "
          "(PATH_TOLERANCE_VIOLATED) when a joint's position error exceeds it while the "
          "motion runs (a goal's path_tolerance overrides it); unset or 0: none",
          check=_per_joint("path_tolerance", 0.0)),
    Param("goal_tolerance", NUMBERS, "rad (m) per joint (or one for all): a goal succeeds once "
          "every joint is this close to its final position after the motion's end (and "
          "slower than stopped_velocity_tolerance); unset or 0: any position",
          check=_per_joint("goal_tolerance", 0.0)),
    Param("stopped_velocity_tolerance", 0.01, "rad/s: ...and every joint this slow; 0: any "
          "speed", span=(0.0, 1e3)),
    Param("goal_time", 0.0, "s: a goal that is not within its goal tolerance this long after "
          "its motion's end aborts (GOAL_TOLERANCE_VIOLATED; a goal's goal_time_tolerance "
          "overrides it); 0: it waits", span=(0.0, 1e6)),
    Param("action_monitor_rate", 20.0, "Hz of the goal's feedback (by joint-state stamps)",
          span=(0.01, 1e4)),
    Param("joint_state_timeout", 0.05, "s: a joint whose last joint_states stamp is this far "
          "from the newest one's, or joint_states silent this long, aborts the goal and stops "
          "the commands after one last at gravity compensation", span=(0.001, 60.0)),
    Param("friction", False, "add the URDF's joint friction (viscous, and Coulomb through "
          f"tanh(v / {SLIDING_SPEED:g})) to the efforts"),
    Param("gravity", [0.0, 0.0, -9.81], "gravity in the root frame, m/s^2",
          check=_said(check_gravity)),
    Param("payload_link", "", "the link that holds `payload`; empty: no payload"),
    Param("payload", NUMBERS, "a held tool or object on `payload_link`: mass (kg), centre of "
          "mass x y z (m, link frame), inertia about it ixx ixy ixz iyy iyz izz (kg m^2), as "
          "`rbd-ros identify --payload` prints it; unset or empty: none"),
    Param("joint_states_qos", "sensor_data", "QoS of joint_states: sensor_data (best effort, "
          f"{SENSOR.depth} deep) or reliable ({REPLAY_DEPTH} deep)", read_only=True,
          check=_said(input_qos)),
    *JOINT_NAMES,
)

SIMULATOR = (
    Param("robot_description", "", "URDF", read_only=True),
    Param("rate", 1000.0, "steps per second", read_only=True),
    Param("initial_positions", NUMBERS, "in the order of `joints`; unset: zero",
          read_only=True),
    Param("joints", STRINGS, "order of effort_commands; unset: the model's joints",
          read_only=True),
    Param("command_timeout", 0.1, "simulated seconds after which an effort command drops to "
          "zero", read_only=True),
    Param("lockstep", False, "step once per effort command instead of on a wall timer",
          read_only=True),
    *(Param(f"{what}_noise", 0.0, f"standard deviation of the white noise on each published "
            f"{what}, {unit}", span=(0.0, 1e6), read_only=True)
      for what, unit in (("position", "rad or m"), ("velocity", "rad/s or m/s"),
                         ("effort", "N m or N"))),
    Param("noise_seed", 0, "seed of the sensor noise (the same seed, the same noise)",
          read_only=True),
)

#: FLOATING_BASE's contacts.<link>.<key> for each link of contact_links: key -> (default,
#: description)
CONTACT_KEYS: dict[str, tuple[Any, str]] = {
    "offset": ([0.0, 0.0, 0.0], "contact frame origin in the link's frame, m"),
    "rpy": ([0.0, 0.0, 0.0], "contact frame axes in the link's frame (roll, pitch, yaw)"),
    "radius": (0.0, "a round foot's radius, m: the force acts where the sphere touches"),
    "half_length": (0.0, "a flat sole's half length along the contact frame's x, m (0: a point)"),
    "half_width": (0.0, "a flat sole's half width along y, m"),
    "normal": ([0.0, 0.0, 1.0], "a point contact's surface normal in the world (a sole's is "
                                "its z axis)"),
    "min_force": (0.0, "least normal force, N"),
    "max_force": (math.inf, "largest normal force, N"),
}
