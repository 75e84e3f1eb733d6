"""Following a joint trajectory: the points joined as joint_trajectory_controller joins them
(``spline``), what the joints should do now and whether a goal is met (``follow``), and the
computed-torque law that makes them do it (``computed_torque``)."""

from .computed_torque import ComputedTorque, gains
from .follow import Goal, Outcome, Reference, Tolerances
from .spline import Spline

__all__ = ["ComputedTorque", "Goal", "Outcome", "Reference", "Spline", "Tolerances", "gains"]
