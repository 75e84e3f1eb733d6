"""Recorded joint names to the model's: renaming rules, and joints held at a fixed position.

A real recording often names the joints otherwise than the URDF at hand (``fer_joint1`` for
``panda_joint1``) and lacks some of them (a gripper). Rules ``OLD=NEW`` rename one joint; a
trailing ``*`` on both sides renames a prefix (``fer_*=panda_*``). Held joints stay at the
given position, at rest, as long as nothing names them.
"""

from __future__ import annotations

import math
from collections.abc import Sequence


class NameMap:
    def __init__(self, rules: Sequence[str] = (), held: dict[str, float] | None = None) -> None:
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

    def __call__(self, name: str) -> str:
        if name in self.exact:
            return self.exact[name]
        for old, new in self.prefixes:
            if name.startswith(old):
                return new + name[len(old):]
        return name

    def names(self, names: Sequence[str]) -> tuple[str, ...]:
        return tuple(self(n) for n in names) if self.exact or self.prefixes else tuple(names)

    @staticmethod
    def parse_held(items: Sequence[str]) -> dict[str, float]:
        """``NAME=POSITION`` items (the command line's --hold) as a dict."""
        held = {}
        for item in items:
            name, sep, value = item.partition("=")
            try:
                held[name] = float(value)
            except ValueError:
                sep = ""
            if not sep or not name:
                raise ValueError(f"held joint '{item}': write NAME=POSITION") from None
        return held
