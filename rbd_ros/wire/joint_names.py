"""A driver's joint states to the model's: renaming rules, joints held at a fixed position,
and efforts in another unit.

A real recording often names the joints otherwise than the URDF at hand (``fer_joint1`` for
``panda_joint1``) and lacks some of them (a gripper). Rules ``OLD=NEW`` rename one joint; a
trailing ``*`` on both sides renames a prefix (``fer_*=panda_*``). Held joints stay at the
given position, at rest, as long as nothing names them. Many drivers report motor currents as
efforts (Universal Robots' puts them in ``JointState.effort``): a joint's effort scale turns
them into torques (effort x scale, N m per A at the joint, by the model's joint name).

:func:`merge` puts one message's values into the model's arrays, at a driver's rate: one
compiled call where numpy's dozen small operations a message cost ~15 us.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from numba import njit


class NameMap:
    def __init__(self, rules: Sequence[str] = (), held: dict[str, float] | None = None,
                 effort_scale: dict[str, float] | None = None) -> None:
        self.exact: dict[str, str] = {}
        self.prefixes: list[tuple[str, str]] = []
        for rule in rules:
            old, sep, new = rule.partition("=")
            if not sep or not old or not new or old.endswith("*") != new.endswith("*"):
                raise ValueError(f"joint rename rule '{rule}': write OLD=NEW, or OLD_*=NEW_* "
                                 "to rename a prefix")
            if old.endswith("*"):
                self.prefixes.append((old[:-1], new[:-1]))
            else:
                self.exact[old] = new
        self.held = dict(held or {})
        bad = {k: v for k, v in self.held.items() if not math.isfinite(v)}
        if bad:
            raise ValueError(f"held joint positions must be finite: {bad}")
        self.effort_scale = dict(effort_scale or {})
        bad = {k: v for k, v in self.effort_scale.items() if not (math.isfinite(v) and v)}
        if bad:
            raise ValueError(f"effort scales must be finite and not zero: {bad}")

    def __call__(self, name: str) -> str:
        if name in self.exact:
            return self.exact[name]
        for old, new in self.prefixes:
            if name.startswith(old):
                return new + name[len(old):]
        return name

    def names(self, names: Sequence[str]) -> tuple[str, ...]:
        return tuple(self(n) for n in names) if self.exact or self.prefixes else tuple(names)

    def scales(self, col: dict[str, int]) -> list[float] | None:
        """The effort scales at the places ``col`` gives the joints (1 elsewhere); None when
        no joint has one."""
        if not self.effort_scale:
            return None
        unknown = sorted(set(self.effort_scale) - set(col))
        if unknown:
            raise ValueError(f"effort scales for {unknown}, which are not joints of the model "
                             f"{sorted(col)}")
        out = [1.0] * (max(col.values()) + 1)
        for name, k in self.effort_scale.items():
            out[col[name]] = k
        return out

    @staticmethod
    def parse_values(items: Sequence[str], option: str) -> dict[str, float]:
        """``NAME=NUMBER`` items (the command line's --hold NAME=POSITION, --effort-scale
        NAME=K) as a dict; ``option`` names the option in the error."""
        out = {}
        for item in items:
            name, sep, value = item.partition("=")
            try:
                out[name] = float(value)
            except ValueError:
                sep = ""
            if not sep or not name:
                raise ValueError(f"{option} {item}: write {option} NAME=NUMBER") from None
        return out


@njit(cache=True, nogil=True)
def merge(rows, cols, qcols, pos, vel, eff, stamp, q, v, a, effort, stamps, seen, scale,
          limit):  # pragma: no cover (compiled)
    """One joint-state message into the model's arrays, all or nothing.

    The message's entry ``rows[j]`` is the joint at velocity index ``cols[j]`` and position
    index ``qcols[j]``; ``pos``, ``vel`` and ``eff`` are its arrays (empty where it has none).
    Returns 0, 1 or 2, and changes nothing, when that array holds a value that is not finite
    or beyond ``limit``; else -1, with, per joint: the position (and ``seen``), the effort
    times ``scale``, the velocity (the message's, else the backward difference of positions
    over the stamps, else unchanged), the acceleration (the backward difference of
    velocities; 0 where there is no earlier state) and the joint's stamp (integer ns)."""
    fields = (pos, vel, eff)
    for f in range(3):
        x = fields[f]
        for k in range(x.shape[0]):
            if not abs(x[k]) <= limit:  # False for NaN too
                return f
    for j in range(rows.shape[0]):
        r, i = rows[j], cols[j]
        dt = stamp - stamps[i]
        prev = seen[i] and dt > 0
        step = dt * 1e-9 if prev else 1e-9
        if vel.shape[0]:
            vn = vel[r]
        elif pos.shape[0]:
            vn = (pos[r] - q[qcols[j]]) / step if prev else 0.0
        else:
            vn = v[i]
        a[i] = (vn - v[i]) / step if prev else 0.0
        v[i] = vn
        if pos.shape[0]:
            q[qcols[j]] = pos[r]
            seen[i] = True
        if eff.shape[0]:
            effort[i] = eff[r] * scale[i]
        stamps[i] = stamp
    return -1
