"""Whether a trajectory stays within a fixed-base robot's effort and velocity limits, before
anything moves.

The motion is the one a controller follows (:class:`.Spline`: the points joined as
joint_trajectory_controller joins them), sampled every ``step_ns`` and at every point, not the
points alone. At each sample the efforts are the model's inverse dynamics (RNEA, with the
URDF's joint friction unless told not, and whatever payload the model carries) for the
motion's position,
velocity and acceleration; joints the trajectory does not name stay where ``rest`` puts them,
at rest. Each joint's effort is set against its URDF effort limit and its speed against its
velocity limit; a joint the URDF gives no limit is never over it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from ..algorithm.rnea import rnea_batch
from ..errors import ModelError
from ..multibody.model import Model
from .spline import Spline, sample_times

F64 = NDArray[np.float64]
I64 = NDArray[np.int64]

@dataclass(frozen=True)
class LimitCheck:
    """The efforts and speeds along a motion, against the limits. Per sample (rows) and model
    joint (columns, in the order of ``v``)."""

    names: list[str]  # the model's joints
    times_ns: I64
    efforts: F64
    velocities: F64
    effort_limit: F64  # (joints,): inf where the URDF gives none
    velocity_limit: F64

    def used(self) -> tuple[F64, F64]:
        """Each joint's largest fraction of its effort limit and of its velocity limit (0
        where it has none)."""
        return (np.abs(self.efforts).max(axis=0) / self.effort_limit,
                np.abs(self.velocities).max(axis=0) / self.velocity_limit)

    def first_over(self, share: float = 1.0) -> str:
        """'' when every effort and speed is within ``share`` of its limit; else the first
        sample that is not: which joint, when, its effort or speed and the limit."""
        first: tuple[int, int, str] | None = None
        for what, x, limit in (("effort", self.efforts, self.effort_limit),
                               ("velocity", self.velocities, self.velocity_limit)):
            rows, cols = np.nonzero(np.abs(x) > share * limit * (1 + 1e-9))
            if rows.size and (first is None or rows[0] < first[0]):
                first = (int(rows[0]), int(cols[0]), what)
        if first is None:
            return ""
        k, j, what = first
        x, limit, unit = ((self.efforts, self.effort_limit, "N m") if what == "effort"
                          else (self.velocities, self.velocity_limit, "rad/s"))
        of = f"{share:.0%} of " if share != 1.0 else ""
        return (f"{self.names[j]} at {self.times_ns[k] * 1e-9:.3f} s: {what} "
                f"{x[k, j]:.5g} {unit} over {of}its URDF limit {limit[j]:.5g} {unit} "
                f"({abs(x[k, j]) / limit[j]:.1%})")

    def table(self) -> list[str]:
        """One line per joint: the largest effort and speed, as fractions of the limits, and
        when each peaks."""
        effort, speed = self.used()
        te = self.times_ns[np.abs(self.efforts).argmax(axis=0)] * 1e-9
        tv = self.times_ns[np.abs(self.velocities).argmax(axis=0)] * 1e-9
        width = max(len(n) for n in self.names)
        lines = [f"{'joint':<{width}}  {'peak effort':>11} {'limit':>8} {'used':>6} {'at s':>7}"
                 f"  {'peak speed':>10} {'limit':>6} {'used':>6} {'at s':>7}"]
        for j, n in enumerate(self.names):
            peak_e = np.abs(self.efforts[:, j]).max()
            peak_v = np.abs(self.velocities[:, j]).max()
            lines.append(f"{n:<{width}}  {peak_e:11.4g} {self.effort_limit[j]:8.4g} "
                         f"{effort[j]:6.0%} {te[j]:7.3f}  {peak_v:10.4g} "
                         f"{self.velocity_limit[j]:6.4g} {speed[j]:6.0%} {tv[j]:7.3f}")
        return lines


def check_limits(model: Model, spline: Spline, joints: I64, rest: F64,
                 step_ns: int = 1_000_000, friction: bool = True) -> LimitCheck:
    """The efforts and speeds of fixed-base ``model`` following ``spline``, whose columns are
    the joints at velocity indices ``joints``, the others held at ``rest`` (nv,);
    ``friction``: with the URDF's joint friction (as a controller's law that adds it)."""
    if model.has_free_flyer or model.nq != model.nv:
        raise ModelError(f"model '{model.name}' has a floating base or multi-coordinate "
                         "joints: the limit check is for fixed-base arms of revolute, "
                         "continuous and prismatic joints")
    joints = np.asarray(joints, dtype=np.int64)
    t = sample_times(spline, step_ns)
    q = np.tile(np.asarray(rest, dtype=np.float64), (t.size, 1))
    v, a = np.zeros_like(q), np.zeros_like(q)
    q[:, joints], v[:, joints], a[:, joints] = spline.sample_many(t)
    tau = rnea_batch(model, q, v, a, friction=friction)
    by_v = {j.idx_v: j for j in model.joints if j.idx_v >= 0}

    def limit(name: str) -> F64:
        x = np.array([getattr(by_v[r], name) for r in range(model.nv)], dtype=np.float64)
        return np.where((x > 0) & np.isfinite(x), x, np.inf)

    return LimitCheck(model.state_joint_names, t, tau, v, limit("effort"),
                      limit("velocity"))
