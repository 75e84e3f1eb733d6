"""A URDF whose links' masses and inertias are off, as a real robot's CAD model is: for the
tests and benches that check a result holds on a model 10-30 % wrong."""

from __future__ import annotations

import re
from collections.abc import Iterator

import numpy as np


def scaled_inertials(urdf: str, factors: Iterator[float]) -> str:
    """``urdf`` with each ``<inertial>`` block's mass and inertia times the next factor."""
    def link(match: re.Match[str]) -> str:
        k = next(factors)
        return re.sub(r'(mass value|ixx|ixy|ixz|iyy|iyz|izz)="([-0-9.e+]+)"',
                      lambda m: f'{m.group(1)}="{float(m.group(2)) * k!r}"', match.group(0))

    return re.sub(r"<inertial>.*?</inertial>", link, urdf, flags=re.S)


def perturbed(urdf: str, seed: int) -> str:
    """``urdf`` with each link's mass and inertia 10-30 % off, a random sign per link."""
    rng = np.random.default_rng(seed)

    def factors() -> Iterator[float]:
        while True:
            yield 1.0 + float(rng.choice([-1.0, 1.0]) * rng.uniform(0.1, 0.3))

    return scaled_inertials(urdf, factors())
