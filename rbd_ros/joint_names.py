"""A driver's joint states to the model's: renaming rules, joints held at a fixed position,
and efforts in another unit.

A real recording often names the joints otherwise than the URDF at hand (``fer_joint1`` for
``panda_joint1``) and lacks some of them (a gripper). Rules ``OLD=NEW`` rename one joint; a
trailing ``*`` on both sides renames a prefix (``fer_*=panda_*``). Held joints stay at the
given position, at rest, as long as nothing names them. Many drivers report motor currents as
efforts (Universal Robots' puts them in ``JointState.effort``): a joint's effort scale turns
them into torques (effort x scale, N m per A at the joint, by the model's joint name).
"""

from __future__ import annotations

import math
from collections.abc import Sequence


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
