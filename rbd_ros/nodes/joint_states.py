"""Joint states by name: messages in, model-ordered arrays out. No ROS types in here.

``/joint_states`` may come in pieces from several publishers, in any order, and may carry
mimic joints (derived, so ignored) and joints the model does not know (ignored, reported).
A message with a NaN or inf, repeated names, or arrays whose lengths do not match its names is
rejected whole: nothing of it is kept.

Velocities: when a message carries none, each joint's velocity is estimated as the backward
difference of its last two positions over their stamps (zero until there are two). The
measured acceleration used for external-torque estimates is the backward difference of
velocities in the same way.
"""

from __future__ import annotations

import math
from array import array
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..dynamics import Model
from ..dynamics.model import F64

#: names seen, message rows, v indices, q indices (index arrays, or slices when the message
#: names every joint in model order)
Plan = tuple["Update", Any, Any, Any]


class JointStateError(ValueError):
    """A joint-state message or request that cannot be used; the text says why."""


@dataclass
class Update:
    """What a message changed: the joints it set and the names it did not use."""

    updated: list[int]
    unknown: list[str]
    mimic: list[str]


def _repeated(names: Sequence[str]) -> list[str]:
    return sorted(n for n, count in Counter(names).items() if count > 1)


def _values(name: str, values: Sequence[float], n: int) -> F64 | None:
    if len(values) == 0:
        return None
    if len(values) != n:
        raise JointStateError(f"{name} has {len(values)} entries for {n} joint names; "
                              f"give one per name or none")
    # message arrays arrive as array('d'): viewed, not copied
    a = (np.frombuffer(values, dtype=np.float64) if isinstance(values, array)
         else np.asarray(values, dtype=np.float64))
    if not np.isfinite(a).all():
        raise JointStateError(f"{name} contains NaN or inf")
    return a


class JointIndex:
    """Maps joint names to the model's velocity indices (1-DOF independent joints)."""

    def __init__(self, model: Model) -> None:
        self.model = model
        self.index = {name: model.joint(name).idx_v for name in model.state_joint_names}
        self.offset = 6 if model.has_free_flyer else 0  # q index = v index + 1 with a base
        self.mimic = {j.name for j in model.joints if j.mimic is not None}
        self.names = list(self.index)

    def order(self, names: Sequence[str]) -> list[int]:
        """Velocity indices of ``names``, which must be known and distinct."""
        unknown = [n for n in names if n not in self.index]
        if unknown:
            raise JointStateError(
                f"unknown joints {unknown}; the model's joints are {self.names}"
                + (f" (mimic joints {sorted(self.mimic)} follow their source)" if self.mimic
                   else ""))
        if len(set(names)) != len(names):
            raise JointStateError(f"joint names repeat: {_repeated(names)}")
        return [self.index[n] for n in names]

    def full_state(self, names: Sequence[str], **arrays: Sequence[float]) -> list[F64]:
        """Arrays given per name (a service request's fields, by field name) as model-ordered
        vectors of length nv. Every independent joint must be named; an empty array means
        zeros."""
        missing = [n for n in self.names if n not in set(names)]
        idx = self.order(names)
        if missing:
            raise JointStateError(f"missing joints {missing}: give every independent joint")
        out = []
        for field, arr in arrays.items():
            vals = _values(field, arr, len(names))
            x = np.zeros(self.model.nv)
            if vals is not None:
                x[idx] = vals
            out.append(x)
        return out

    def q_index(self, v_index: Any) -> Any:
        """Position index of a 1-DOF joint's velocity index (int, array or slice)."""
        shift = 1 if self.model.has_free_flyer else 0  # the quaternion's fourth number
        if isinstance(v_index, slice):
            return slice(v_index.start + shift, v_index.stop + shift)
        return v_index + shift


class JointStateMerger:
    """The latest position, velocity and effort of every joint, merged from messages."""

    def __init__(self, model: Model) -> None:
        self.joints = JointIndex(model)
        self.model = model
        self.q = model.neutral()
        self.v = np.zeros(model.nv)
        self.a = np.zeros(model.nv)
        self.effort = np.full(model.nv, np.nan)
        self.stamp = np.full(model.nv, np.nan)  # per joint, seconds
        self.seen = np.zeros(model.nv, dtype=bool)
        self._plans: dict[tuple[str, ...], Plan] = {}
        if model.has_free_flyer:
            self.seen[:6] = True  # the base comes from elsewhere (odometry)

    @property
    def ready(self) -> bool:
        return bool(self.seen.all())

    def missing(self) -> list[str]:
        return [n for n, i in self.joints.index.items() if not self.seen[i]]

    def _plan(self, names: Sequence[str]) -> Plan:
        """How a message with these names maps to the model (cached: drivers repeat them)."""
        key = tuple(names)
        cached = self._plans.get(key)
        if cached is not None:
            return cached
        if len(set(key)) != len(key):
            raise JointStateError(f"joint names repeat within the message: {_repeated(key)}")
        index, mimic = self.joints.index, self.joints.mimic
        known = [(k, index[n]) for k, n in enumerate(key) if n in index]
        update = Update([i for _, i in known],
                        [n for n in key if n not in index and n not in mimic],
                        [n for n in key if n in mimic])
        ks = np.array([k for k, _ in known], dtype=np.int64)
        idx = np.array([i for _, i in known], dtype=np.int64)
        rows: Any = ks
        cols: Any = idx
        qi: Any = self.joints.q_index(idx)
        base = self.joints.offset  # a free flyer's 6 velocities come first
        n = idx.size
        if n and np.array_equal(ks, np.arange(len(key))) and \
                np.array_equal(idx, np.arange(base, base + n)):
            # every joint in model order, as one driver sends them: slices, not index arrays
            rows, cols, qi = slice(0, n), slice(base, base + n), self.joints.q_index(
                slice(base, base + n))
        plan: Plan = (update, rows, cols, qi)
        if len(self._plans) < 64:
            self._plans[key] = plan
        return plan

    def update(self, stamp: float, names: Sequence[str], positions: Sequence[float],
               velocities: Sequence[float], efforts: Sequence[float]) -> Update:
        """Merge one message; raises JointStateError (and keeps nothing) if it is unusable."""
        update, ks, idx, qi = self._plan(names)
        n = len(names)
        pos = _values("position", positions, n)
        vel = _values("velocity", velocities, n)
        eff = _values("effort", efforts, n)
        if not math.isfinite(stamp):
            raise JointStateError("the stamp is not a finite time")
        if not update.updated:
            return update
        dt = stamp - self.stamp[idx]
        prev = self.seen[idx] & (dt > 0)  # NaN stamps (never seen) compare False
        step = np.where(prev, dt, 1.0)
        if vel is not None:
            v_new = vel[ks]
        elif pos is not None:
            v_new = np.where(prev, (pos[ks] - self.q[qi]) / step, 0.0)
        else:
            v_new = self.v[idx]
        self.a[idx] = np.where(prev, (v_new - self.v[idx]) / step, 0.0)
        self.v[idx] = v_new
        if pos is not None:
            self.q[qi] = pos[ks]
            self.seen[idx] = True
        if eff is not None:
            self.effort[idx] = eff[ks]
        self.stamp[idx] = stamp
        return update

    def set_base(self, position: Sequence[float], quaternion_xyzw: Sequence[float],
                 twist_body: Sequence[float]) -> None:
        """Free-flyer pose (world) and twist ``[v; w]`` in the base frame."""
        x = np.r_[position, quaternion_xyzw, twist_body].astype(np.float64)
        if x.shape != (13,) or not np.all(np.isfinite(x)):
            raise JointStateError("the base pose and twist must be finite")
        n = np.linalg.norm(x[3:7])
        if not 0.5 < n < 2.0:
            raise JointStateError(f"the base orientation quaternion has norm {n:.3g}, not 1")
        self.q[:3] = x[:3]
        self.q[3:7] = x[3:7] / n
        self.v[:6] = x[7:]
