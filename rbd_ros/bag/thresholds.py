"""Collision thresholds from a recording of free motion: the envelope of the observer's residual
over the joints' speeds (the dynamics node's ``collision_thresholds``,
``collision_thresholds_moving`` and ``collision_thresholds_per_speed``). Loads scipy."""

from __future__ import annotations

import numpy as np

from ..dynamics.estimation.observer import MOVING_SPEED, SPEED_EDGES, THRESHOLD_MARGIN
from ..dynamics.multibody.model import F64


def envelope(binned: F64, margin: float = THRESHOLD_MARGIN) -> F64:
    """Per joint (rows), the thresholds ``rest + moving tanh(s / MOVING_SPEED) + per_speed s``
    (columns: ``THRESHOLD_PARAMETERS``) at its speed ``s`` that lie on or above every peak of
    ``binned`` (per joint and ``SPEED_EDGES`` bin: the residual's largest magnitude, 0 where
    none) at the bin's lowest speed, and lowest on average over the bins that hold a peak, but
    nowhere within them above the largest (a linear program; none negative); times
    ``margin``.

    Where the model is wrong in proportion to speed (unmodelled friction, damping), a joint
    that is slow gets a threshold below its fastest motion's peak. (A part that grows with
    acceleration as well did no better on a real arm's recordings nor on simulated mass
    errors, and worse from positions alone, whose acceleration is noisy: bench/collisions.py.)"""
    from scipy.optimize import linprog

    s = SPEED_EDGES
    features = np.stack([np.ones_like(s), np.tanh(s / MOVING_SPEED), s], axis=-1)
    out = np.zeros((binned.shape[0], features.shape[-1]))
    for j, peaks in enumerate(binned):
        seen = peaks > 0
        if not seen.any():
            continue
        A, y = features[seen], peaks[seen]
        # the parts the bins vary in, each scaled to its largest value: the program's numbers
        # of one size
        scale = A.max(axis=0)
        used = scale > 0
        B = A[:, used] / scale[used]
        # and nowhere it was seen above the one threshold the largest peak gives: never
        # higher than it at a speed of the recording
        top = B[np.argmax(SPEED_EDGES[seen])]
        fit = linprog(B.sum(axis=0), A_ub=np.vstack([-B, top]), b_ub=np.r_[-y, y.max()],
                      bounds=(0, None), method="highs")
        if fit.success:
            out[j, used] = margin * np.maximum(fit.x, 0.0) / scale[used]
        else:  # (not seen: the rest alone is always a solution)
            out[j, 0] = margin * y.max()
    return out
