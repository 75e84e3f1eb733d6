"""Joint states by name: messages in, model-ordered arrays out. No ROS types in here.

``/joint_states`` may come in pieces from several publishers, in any order, and may carry
mimic joints (derived, so ignored) and joints the model does not know (ignored, reported).
A message with a NaN or inf, repeated names, or arrays whose lengths do not match its names is
rejected whole: nothing of it is kept.

Velocities: when a message carries none, each joint's velocity is estimated as the backward
difference of its last two positions over their stamps (zero until there are two). The
measured acceleration used for external-torque estimates is the backward difference of
velocities in the same way. Stamps are integer nanoseconds: only their differences become
seconds, so a 1 ms step keeps its precision at any time since 1970.
"""

from __future__ import annotations

import math
from array import array
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ..dynamics import Model
from ..dynamics.multibody.model import F64
from .errors import LIMIT, InputError, usable
from .joint_names import NameMap, merge

#: names seen, the message's rows of known joints, their v and q indices, and whether it sets
#: every joint that messages set
Plan = tuple["Update", NDArray[np.int64], NDArray[np.int64], NDArray[np.int64], bool]


@dataclass
class Update:
    """What a message changed: the joints it set and the names it did not use."""

    updated: list[int]
    unknown: list[str]
    mimic: list[str]


def _repeated(names: Sequence[str]) -> list[str]:
    return sorted(n for n, count in Counter(names).items() if count > 1)


#: a field a message does not carry (read-only, as the arrays merge() is compiled for)
_NONE = np.empty(0)
_NONE.flags.writeable = False


def _values(name: str, values: Sequence[float], n: int) -> F64:
    """A message's field as a read-only float64 vector (empty if it has none)."""
    if len(values) == 0:
        return _NONE
    if len(values) != n:
        raise InputError(f"{name} has {len(values)} entries for {n} joint names; "
                         f"give one per name or none")
    if isinstance(values, np.ndarray) and not values.flags.writeable \
            and values.dtype == np.float64:
        return values  # viewed in a message's bytes (JointStateReader)
    # message arrays arrive as array('d'): viewed, not copied
    x = (np.frombuffer(values, dtype=np.float64) if isinstance(values, array)
         else np.array(values, dtype=np.float64))
    x.flags.writeable = False
    return x


class JointIndex:
    """Maps joint names to the model's velocity indices (1-DOF independent joints)."""

    def __init__(self, model: Model) -> None:
        self.model = model
        self.index = {name: model.joint(name).idx_v for name in model.state_joint_names}
        self._v2q = np.full(model.nv, -1, dtype=np.int64)  # q index of a 1-DOF joint's v
        for name in model.state_joint_names:
            j = model.joint(name)
            self._v2q[j.idx_v] = j.idx_q
        self.mimic = {j.name for j in model.joints if j.mimic is not None}
        self.names = list(self.index)

    def _unknown(self, names: Sequence[str]) -> str:
        """Why ``names`` (not among the 1-DOF independent joints) cannot be given by name."""
        kinds = {j.name: j.kind for j in self.model.joints}
        other = [n for n in names if n in kinds and n not in self.mimic]
        if other:
            return (f"joints {other} are {', '.join(sorted({kinds[n] for n in other}))} "
                    f"joints: they have several coordinates and cannot be given by name; "
                    f"the 1-DOF joints are {self.names}")
        return (f"unknown joints {list(names)}; the model's joints are {self.names}"
                + (f" (mimic joints {sorted(self.mimic)} follow their source)" if self.mimic
                   else ""))

    def order(self, names: Sequence[str]) -> list[int]:
        """Velocity indices of ``names``, which must be known and distinct."""
        unknown = [n for n in names if n not in self.index]
        if unknown:
            raise InputError(self._unknown(unknown))
        if len(set(names)) != len(names):
            raise InputError(f"joint names repeat: {_repeated(names)}")
        return [self.index[n] for n in names]

    def efforts(self, names: Sequence[str], efforts: Sequence[float]) -> tuple[list[int], F64]:
        """Commanded efforts by name (effort_command_states): velocity indices and values."""
        idx = self.order(names)
        if len(efforts) != len(idx):
            raise InputError(f"{len(efforts)} efforts for {len(idx)} names")
        return idx, usable(np.asarray(efforts, dtype=np.float64), "effort")

    def full_state(self, names: Sequence[str], positions: Sequence[float],
                   **arrays: Sequence[float]) -> tuple[list[str], list[int], F64, list[F64]]:
        """A service request's per-name arrays in model order: (the independent joints it
        names, their velocity indices, q (the model's neutral configuration where a joint has
        several coordinates), and ``arrays`` as vectors of length nv).

        Every independent joint must be named and given a position; another array is one
        value per name, or empty for zeros. Mimic joints may be named, as in /joint_states:
        their values are not used (they follow their source) and they are not answered for.
        """
        unknown = [n for n in names if n not in self.index and n not in self.mimic]
        if unknown:
            raise InputError(self._unknown(unknown))
        if len(set(names)) != len(names):
            raise InputError(f"joint names repeat: {_repeated(names)}")
        missing = [n for n in self.names if n not in set(names)]
        if missing:
            raise InputError(f"missing joints {missing}: give every independent joint")
        if len(positions) != len(names):
            raise InputError(f"positions has {len(positions)} entries for {len(names)} "
                             "joint names: a position is required for every joint")
        rows = [k for k, n in enumerate(names) if n in self.index]
        used = [names[k] for k in rows]
        idx = [self.index[n] for n in used]
        pos = usable(_values("positions", positions, len(names)), "positions")
        q = self.model.neutral()
        if pos.size:  # empty only when no joint is named (a model without 1-DOF joints)
            q[self.q_index(np.array(idx, dtype=np.int64))] = pos[rows]
        out = []
        for field, arr in arrays.items():
            vals = usable(_values(field, arr, len(names)), field)
            x = np.zeros(self.model.nv)
            if vals.size:
                x[idx] = vals[rows]
            out.append(x)
        return used, idx, q, out

    def q_index(self, v_index: Any) -> Any:
        """Position index of a 1-DOF joint's velocity index (an int or an index array)."""
        return self._v2q[v_index]


class JointStateMerger:
    """The latest position, velocity and effort of every joint, merged from messages whose
    names ``names`` maps to the model's (joints it holds count as seen, at their position)."""

    def __init__(self, model: Model, names: NameMap | None = None) -> None:
        self.joints = JointIndex(model)
        self.model = model
        self.q = model.neutral()
        self.v = np.zeros(model.nv)
        self.a = np.zeros(model.nv)
        self.effort = np.full(model.nv, np.nan)
        self.stamp = np.zeros(model.nv, dtype=np.int64)  # per joint, ns (valid where seen)
        self.seen = np.zeros(model.nv, dtype=bool)
        self._ready = False
        self.latest = 0  # stamp of the last message merged (ns)
        self.whole = False  # whether it set every joint that messages set
        self._plans: dict[tuple[str, ...], Plan] = {}
        self.differenced = False  # the last message's velocities came from its positions
        # joints with several coordinates (a free flyer, floating and planar joints) are not
        # in /joint_states: the base comes from odometry, the others stay where they are
        self.held = [j.name for j in model.joints if j.idx_v >= 0 and j.nv > 1
                     and not (model.has_free_flyer and j.idx_v == 0)]
        for j in model.joints:
            if j.idx_v >= 0 and j.nv > 1:
                self.seen[j.idx_v : j.idx_v + j.nv] = True
        self.names = names or NameMap()
        unknown = sorted(set(self.names.held) - set(self.joints.index))
        if unknown:
            raise InputError(f"held joints {unknown} are not joints of the model "
                             f"{self.joints.names}")
        for name, position in self.names.held.items():
            i = self.joints.index[name]
            self.q[self.joints.q_index(i)], self.seen[i] = position, True
        try:
            scale = self.names.scales(self.joints.index)
        except ValueError as e:
            raise InputError(str(e)) from None
        self.scale = np.ones(model.nv) if scale is None else np.resize(scale, model.nv)
        # the joints that only messages set: their ages are watched
        self.fed = np.array(sorted(i for n, i in self.joints.index.items()
                                   if n not in self.names.held), dtype=np.int64)

    @property
    def ready(self) -> bool:
        """Whether every joint has been seen (once it has, it stays so)."""
        if not self._ready:
            self._ready = bool(self.seen.all())
        return self._ready

    def missing(self) -> list[str]:
        return [n for n, i in self.joints.index.items() if not self.seen[i]]

    def stale(self, timeout_ns: int) -> bool:
        """Whether a joint that messages set was last set more than ``timeout_ns`` away from
        the last message's stamp, before it or after it (a publisher that died, or one on
        another clock)."""
        if self.whole or not self.fed.size:  # the last message set them all at its stamp
            return False
        age = self.latest - self.stamp[self.fed]
        return bool(age.max() > timeout_ns or -age.min() > timeout_ns)

    def stale_note(self, timeout_ns: int) -> str:
        """What ``stale`` found, for a user: the joints, their last stamps and how old."""
        parts = []
        for n, i in self.joints.index.items():
            age = self.latest - int(self.stamp[i])
            if i in self.fed and abs(age) > timeout_ns:
                parts.append(f"{n} (last at {format_stamp(int(self.stamp[i]))}, "
                             f"{abs(age) * 1e-6:.1f} ms {'before' if age > 0 else 'after'})")
        return (f"stale joint_states: {', '.join(parts)} the joint state at "
                f"{format_stamp(self.latest)} (limit {timeout_ns * 1e-6:g} ms)")

    def plan(self, names: Sequence[str]) -> Plan:
        """How a message with these names maps to the model (cached: drivers repeat them)."""
        cached = self._plans.get(tuple(names))
        if cached is not None:
            return cached
        key = self.names.names(names)
        if len(set(key)) != len(key):
            raise InputError(f"joint names repeat within the message: {_repeated(key)}")
        index, mimic = self.joints.index, self.joints.mimic
        known = [(k, index[n]) for k, n in enumerate(key) if n in index]
        update = Update([i for _, i in known],
                        [n for n in key if n not in index and n not in mimic],
                        [n for n in key if n in mimic])
        rows = np.array([k for k, _ in known], dtype=np.int64)
        cols = np.array([i for _, i in known], dtype=np.int64)
        plan: Plan = (update, rows, cols, self.joints.q_index(cols),
                      bool(np.isin(self.fed, cols).all()))
        if len(self._plans) < 64:
            self._plans[tuple(names)] = plan
        return plan

    def update(self, stamp: int, names: Sequence[str], positions: Sequence[float],
               velocities: Sequence[float], efforts: Sequence[float]) -> Update:
        """Merge one message stamped ``stamp`` (integer ns); raises InputError (and keeps
        nothing) if it is unusable."""
        update, rows, cols, qcols, whole = self.plan(names)
        n = len(names)
        pos, vel, eff = values = (_values("position", positions, n),
                                  _values("velocity", velocities, n),
                                  _values("effort", efforts, n))
        bad = merge(rows, cols, qcols, pos, vel, eff, stamp, self.q, self.v, self.a,
                    self.effort, self.stamp, self.seen, self.scale, LIMIT)
        if bad >= 0:  # nothing was merged
            field = ("position", "velocity", "effort")[bad]
            usable(values[bad], field)  # raises, saying why
            raise InputError(f"{field} is not usable")
        return self.merged(stamp, update, whole, not vel.size and bool(pos.size))

    def merged(self, stamp: int, update: Update, whole: bool, differenced: bool) -> Update:
        """After a message's values went in (here, or read and merged in one compiled call by
        :meth:`rbd_ros.wire.stamped.JointStateReader.merge`): its stamp, whether it set every
        joint and whether its velocities came from its positions."""
        if update.updated:
            self.differenced, self.latest, self.whole = differenced, stamp, whole
        return update


def format_stamp(ns: int) -> str:
    """A stamp as seconds, to the microsecond, as ``ros2 topic echo`` shows sec and nanosec."""
    sec, rest = divmod(ns, 1_000_000_000)
    return f"{sec}.{rest // 1000:06d} s"


QUATERNION_TOLERANCE = 1e-3  # |norm - 1| accepted (and normalised): float32 rounding, not more


def base_state(position: Sequence[float], quaternion_xyzw: Sequence[float],
               twist_body: Sequence[float]) -> F64:
    """A free flyer's ``[position (world); unit quaternion; twist [v; w] (base frame)]``;
    raises InputError for non-finite values or a quaternion that is not a unit one."""
    x = np.array([*position, *quaternion_xyzw, *twist_body], dtype=np.float64)
    if x.shape != (13,):
        raise InputError(f"the base pose and twist have {x.size} numbers, not 13")
    return unit_base(x)


def unit_base(x: F64) -> F64:
    """``x``, a free flyer's 13 numbers (as :func:`base_state`), checked, its quaternion
    normalised in place."""
    usable(x, "the base pose or twist")
    n = math.sqrt(float(x[3:7] @ x[3:7]))
    if abs(n - 1.0) > QUATERNION_TOLERANCE:
        raise InputError(f"the base orientation quaternion has norm {n:.6g}: it must be "
                         f"a unit quaternion (within {QUATERNION_TOLERANCE:g})")
    x[3:7] /= n
    return x
