"""``rbd-ros identify``: a robot's inertial and friction parameters from a recording of it
moving (an exciting trajectory), with its measured joint efforts.

The joint states are first put on a regular time base: real drivers stamp them with jitter
(0.8-1.6 ms apart at a nominal 1 kHz) and drop some, and a difference over a late stamp would
turn into a spike of acceleration. Each stretch without a pause is resampled (linearly) onto a
grid at the recording's median period. Positions, efforts and recorded velocities are then
low-pass filtered alike, forwards and backwards (zero phase, so that no delay separates a torque
from the motion that caused it); accelerations are differences of the filtered velocities
(recorded ones where the recording has them, else differences of the filtered positions), and
the samples are thinned to a few per period of the cut-off. The first part of the recording
identifies, the rest (or a second recording) validates: the report gives each joint's torque
RMS there for the URDF's parameters, the least-squares ones and the physically consistent ones
written into ``identified.urdf``, all judged on the same filtered signals.
"""

from __future__ import annotations

import itertools
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

from ..bag.errors import BagError
from ..bag.outputs import output_set
from ..dynamics import Model
from ..dynamics.algorithm.rnea import SLIDING_SPEED
from ..dynamics.multibody.model import F64
from .fit import (
    MASS_RANGE,
    BaseParameters,
    Fit,
    NormalEquations,
    Pull,
    TooFewStatesError,
    actuated,
    base_parameters,
    consistent,
    nominal,
    offsets,
    predict,
    pulled,
    rotors,
    solve,
)
from .urdf_out import identified_urdf

BLOCK = 20_000  # samples reduced into the normal equations at a time
FOLDS = 5  # consecutive parts of the identifying samples, for the pull's cross-validation


@dataclass(frozen=True)
class IdentifyOptions:
    urdf: Path | None = None  # None: the recording's /robot_description
    joint_states_topic: str = "/joint_states"
    rename: tuple[str, ...] = ()  # recorded joint names -> the model's, as for analyze
    hold: dict[str, float] = field(default_factory=dict)  # joints not recorded: held here
    effort_scale: dict[str, float] = field(default_factory=dict)  # recorded effort x k: torque
    cutoff: float = 10.0  # Hz, of the zero-phase low-pass filter
    holdout: float = 0.25  # the last part of the recording kept for validation
    start: float = 0.0  # s after the recording's first joint state: the part identified on...
    end: float | None = None  # ...and up to when (None: its end)
    drive: bool = False  # fit each joint's effort scale (relative to the first measured) and offset
    ignore_efforts: tuple[str, ...] = ()  # joints whose recorded efforts are not torques


@dataclass(frozen=True)
class Samples:
    """Filtered, differentiated and thinned joint states with their efforts."""

    ns: NDArray[np.int64]
    q: F64
    v: F64
    a: F64
    tau: F64  # measured efforts, filtered as the positions are
    signals: str = ""  # which signals, on what time base, for the report
    jitter: float = 0.0  # the stamps' steps, 1st to 99th percentile, over their median

    def __len__(self) -> int:
        return len(self.ns)

    def cut(self, k: slice | NDArray[np.intp]) -> Samples:
        return Samples(self.ns[k], self.q[k], self.v[k], self.a[k], self.tau[k], self.signals,
                       self.jitter)


@dataclass
class Report:
    text: str
    rms: dict[str, F64]  # "urdf", "least squares", "identified": held-out RMS per joint
    seconds: dict[str, float]  # time taken by each stage


class Stopwatch:
    def __init__(self) -> None:
        self.seconds: dict[str, float] = {}
        self.last = time.perf_counter()

    def lap(self, stage: str) -> None:
        now = time.perf_counter()
        self.seconds[stage] = self.seconds.get(stage, 0.0) + now - self.last
        self.last = now


def read(paths: list[Path], opts: IdentifyOptions
         ) -> tuple[str, Model, NDArray[np.int64], F64, F64, F64]:
    """The URDF, its model, and the recording's stamps, positions, velocities and efforts in
    the model's joint order (a joint a message leaves out keeps its last value; NaN where none
    came yet)."""
    from ..bag.decode import decode, without
    from ..bag.readers import batches
    from ..bag.recording import Reading, joint_values, open_recording, recorded_description

    reading = Reading(urdf=opts.urdf, joint_states_topic=opts.joint_states_topic,
                      rename=opts.rename, hold=opts.hold, effort_scale=opts.effort_scale)
    rec = open_recording(paths, reading)
    reader, js, model = rec.reader, rec.joint_states, rec.model
    try:
        urdf = opts.urdf.read_text() if opts.urdf else recorded_description(reader)
        names = model.state_joint_names
        if model.has_free_flyer or len(names) != model.nv:
            raise BagError("identify needs a fixed-base robot whose joints all have one "
                           "coordinate")
        col = {n: i for i, n in enumerate(names)}
        last = reading.carried(col)
        ns, q, v, e = [], [], [], []
        for batch in batches(reader, js, BLOCK):
            bad: list[int] = []  # unreadable messages: left out
            groups = without(decode(batch.data, batch.offsets, bad), bad, len(batch))
            if len(batch) > len(bad):
                t, vals = joint_values(groups, len(batch) - len(bad), reading.names, col, last)
                ns.append(t)
                q.append(vals[0])
                v.append(vals[1])
                e.append(vals[2])
    finally:
        rec.close()
    if not ns:
        raise BagError(f"no joint states in {', '.join(map(str, paths))}")
    return (urdf, model, np.concatenate(ns), np.concatenate(q), np.concatenate(v),
            np.concatenate(e))


def window(ns: NDArray[np.int64], q: F64, v: F64, e: F64, opts: IdentifyOptions
           ) -> tuple[NDArray[np.int64], F64, F64, F64]:
    """The joint states from ``opts.start`` to ``opts.end`` s after the first one."""
    if opts.start == 0.0 and opts.end is None:
        return ns, q, v, e
    span = 1e-9 * float(ns[-1] - ns[0])
    end = span if opts.end is None else opts.end
    if opts.start < 0.0 or (opts.end is not None and opts.end <= opts.start):
        raise BagError(f"--start {opts.start:g} and --end {end:g}: the start must be at least "
                       f"0 and before the end (s after the recording's first joint state)")
    t = 1e-9 * (ns - ns[0])
    keep = (t >= opts.start) & (t <= end)
    if keep.sum() < 2:
        raise BagError(f"--start {opts.start:g} --end {end:g}: no joint states there (the "
                       f"recording spans {span:.3g} s)")
    return ns[keep], q[keep], v[keep], e[keep]


def measured_joints(model: Model, e: F64, ignore: tuple[str, ...]) -> NDArray[np.bool_]:
    """Which joints' efforts identify: those recorded, less ``ignore`` (efforts that are not
    torques: unmeasured, or in a unit nobody knows). BagError if none is left."""
    names = model.state_joint_names
    unknown = sorted(set(ignore) - set(names))
    if unknown:
        raise BagError(f"--ignore-efforts {' '.join(unknown)}: not joints of the model "
                       f"{names}")
    measured: NDArray[np.bool_] = np.isfinite(e).any(axis=0) & ~np.isin(names, ignore)
    if not measured.any():
        raise BagError("the recording has no joint state with every joint's position and "
                       "effort: identify needs measured efforts")
    return measured


def prepare(ns: NDArray[np.int64], q: F64, v: F64, e: F64, cutoff: float,
            measured: NDArray[np.bool_]) -> Samples:
    """Joint states on a regular time base, zero-phase low-pass filtered, differentiated, the
    filter's start and end transients dropped, thinned to four samples per cut-off period
    (the module's text says how). Velocities are the recorded ones when every state has them.
    A pause in the recording (a gap of five periods) starts a new stretch, filtered on its
    own. Joints whose efforts are not ``measured`` get efforts of NaN, and a joint state needs
    only the measured ones."""
    from scipy.signal import butter, filtfilt

    from ..bag.recording import one_per_stamp

    ok = np.isfinite(q).all(axis=1) & np.isfinite(e[:, measured]).all(axis=1)
    ns, q, v, e = ns[ok], q[ok], v[ok], np.where(measured, e[ok], 0.0)
    if len(ns) < 2:
        raise BagError("the recording has no joint state with every joint's position and "
                       "effort: identify needs measured efforts")
    order = np.argsort(ns, kind="stable")
    ns, q, v, e = ns[order], q[order], v[order], e[order]
    last = one_per_stamp(ns)  # messages of one stamp: one joint state
    ns, q, v, e = ns[last], q[last], v[last], e[last]
    steps = np.diff(ns)
    dt = float(np.median(steps)) * 1e-9 if steps.size else 0.0
    if not dt > 0:
        raise BagError("the joint states' stamps do not advance")
    rate = 1.0 / dt
    if not 0 < cutoff < 0.4 * rate:
        raise BagError(f"--cutoff {cutoff:g} Hz must be below 40 % of the recording's "
                       f"{rate:.1f} Hz")
    recorded = bool(np.isfinite(v).all())
    b, a = butter(4, cutoff / (0.5 * rate))
    edge = int(np.ceil(2.0 * rate / cutoff))  # the filter's transients
    step = max(1, int(rate / (4.0 * cutoff)))
    cuts = np.flatnonzero(steps > 5 * dt * 1e9) + 1
    parts = []
    for lo, hi in zip(np.r_[0, cuts], np.r_[cuts, len(ns)], strict=True):
        t = (ns[lo:hi] - ns[lo]) * 1e-9
        grid = np.arange(int(t[-1] / dt + 0.5) + 1) * dt
        if grid.size <= 2 * edge + 2:
            continue
        on_grid = [np.column_stack([np.interp(grid, t, x[lo:hi, j]) for j in range(x.shape[1])])
                   for x in ((q, v, e) if recorded else (q, e))]
        qf, ef = filtfilt(b, a, on_grid[0], axis=0), filtfilt(b, a, on_grid[-1], axis=0)
        vf = filtfilt(b, a, on_grid[1], axis=0) if recorded else np.gradient(qf, dt, axis=0)
        k = slice(edge, grid.size - edge, step)
        parts.append(Samples(ns[lo] + np.round(grid[k] * 1e9).astype(np.int64), qf[k], vf[k],
                             np.gradient(vf, dt, axis=0)[k], np.where(measured, ef[k], np.nan)))
    if not parts:
        raise BagError(f"the recording is too short to filter at {cutoff:g} Hz (each "
                       f"stretch without a pause needs {2 * edge + 3} joint states)")
    lo_step, hi_step = np.percentile(steps, [1, 99]) * 1e-6
    how = "as recorded" if recorded else "differenced from the positions (none recorded)"
    signals = (f"velocities {how}, accelerations differenced from them; stamps "
               f"{lo_step:.3g}-{hi_step:.3g} ms apart (1st-99th percentile), resampled every "
               f"{dt * 1e3:.4g} ms"
               + (f"; {cuts.size} pauses over {5 * dt * 1e3:.3g} ms split the recording"
                  if cuts.size else ""))
    ns_, q_, v_, a_, tau_ = (np.concatenate([getattr(p, f) for p in parts])
                             for f in ("ns", "q", "v", "a", "tau"))
    return Samples(ns_, q_, v_, a_, tau_, signals, (hi_step - lo_step) / (dt * 1e3))


def identify(paths: list[Path], out_dir: Path, opts: IdentifyOptions,
             validate: list[Path] | None = None) -> Report:
    """Identify on ``paths`` (validate on their last ``opts.holdout``, or on ``validate``);
    write ``identified.urdf``, ``report.txt`` and ``torques.png`` into ``out_dir``."""
    import scipy  # noqa: F401  (the filter and the solvers: missing, said before any reading)

    clock = Stopwatch()
    urdf, model, ns, q, v, e = read(paths, opts)
    _no_mimic_rotors(model)
    ns, q, v, e = window(ns, q, v, e, opts)
    clock.lap("reading")
    measured = measured_joints(model, e, opts.ignore_efforts)
    data = prepare(ns, q, v, e, opts.cutoff, measured)
    clock.lap("filtering")
    if validate:
        _, other, ns2, q2, v2, e2 = read(validate, opts)
        if other.state_joint_names != model.state_joint_names:
            raise BagError("the validation recording's joints differ from the model's")
        clock.lap("reading")
        train, test = data, prepare(ns2, q2, v2, e2, opts.cutoff, measured)
        clock.lap("filtering")
    else:
        if not 0 < opts.holdout < 1:
            raise BagError("--holdout must be between 0 and 1")
        cut = int(len(data) * (1.0 - opts.holdout))
        train, test = data.cut(slice(0, cut)), data.cut(slice(cut, None))
    base = base_parameters(model, drive=opts.drive)
    normal = NormalEquations(model, base, measured, FOLDS)
    edges = np.linspace(0, len(train), FOLDS + 1).astype(int)
    for fold, (lo, hi) in enumerate(itertools.pairwise(edges)):
        for k in range(lo, hi, BLOCK):
            s = train.cut(slice(k, min(k + BLOCK, hi)))
            normal.add(s.q, s.v, s.a, s.tau, fold)
    try:
        fit = solve(normal)
    except TooFewStatesError as e:
        raise BagError(f"{e}: record longer, or lower --cutoff (fewer, wider samples are "
                       "kept at a higher one)") from None
    clock.lap("least squares")
    prior = nominal(model, opts.drive)
    pull = pulled(normal, fit, base.of(prior))
    phi = consistent(model, base, pull, normal, prior)
    clock.lap("consistent fit")
    rows = actuated(model)
    pred = {"urdf": _predict(model, base, base.of(prior), test, 1.0),
            "least squares": _predict(model, base, fit.phi_b, test, fit.scale),
            "identified": _predict(model, base, base.of(phi), test, fit.scale)}
    # (NaN for the joints whose efforts are not used)
    rms = {k: np.sqrt(np.mean((p - test.tau[:, rows]) ** 2, axis=0)) for k, p in pred.items()}
    clock.lap("validation")
    text = _report(model, opts, base, fit, pull, phi, prior, rms, train, test, measured) + \
        "\n\n" + \
        "time (s): " + ", ".join(f"{k} {v:.2f}" for k, v in clock.seconds.items())
    with output_set(out_dir, ".rbd-identify-outputs") as tmp:  # together, complete, or not
        (tmp / "identified.urdf").write_text(identified_urdf(urdf, model, phi))
        (tmp / "report.txt").write_text(text + "\n")
        _plot(tmp / "torques.png", model, test, pred)
    clock.lap("outputs")
    return Report(text, rms, clock.seconds)


def _no_mimic_rotors(model: Model) -> None:
    """BagError if a mimic joint has a rotor inertia: its armature has no parameter."""
    mimics = [j.name for j in model.joints if j.armature and j.mimic is not None]
    if mimics:
        raise BagError(f"the URDF gives mimic joints {', '.join(mimics)} a rotor_inertia "
                       "(<transmission>): identify fits the armatures of independent joints "
                       "only. Give the rotor to the joint they mimic, or take the tags out")


def _armatures(model: Model, phi: F64, prior: F64) -> list[str]:
    """The report's table of the identified armatures beside the URDF's (none: no lines)."""
    rot = rotors(model)
    if not rot.size:
        return []
    names, at = model.state_joint_names, phi.size - rot.size
    return ["", f"{'joint':<24} {'identified':>10} {'URDF':>10}   (armature: rotor inertia x "
                "gear ratio^2, kg m^2 or kg)"] + \
        [f"{names[j]:<24} {phi[at + i]:10.4g} {prior[at + i]:10.4g}" for i, j in enumerate(rot)]


def _predict(model: Model, base: BaseParameters, phi_b: F64, s: Samples,
             scale: F64 | float) -> F64:
    return np.concatenate([predict(model, base, phi_b, s.q[k : k + BLOCK], s.v[k : k + BLOCK],
                                   s.a[k : k + BLOCK], scale) for k in range(0, len(s), BLOCK)])


def _report(model: Model, opts: IdentifyOptions, base: BaseParameters, fit: Fit, pull: Pull,
            phi: F64, prior: F64, rms: dict[str, F64], train: Samples, test: Samples,
            measured: NDArray[np.bool_]) -> str:
    names = model.state_joint_names
    rows = actuated(model)
    n = rows.size
    lines = [f"identify: model '{model.name}', {n} joints, {model.nb} bodies",
             f"samples: {len(train)} identifying ({_span(train):.1f} s), {len(test)} validating "
             f"({_span(test):.1f} s), filtered at {opts.cutoff:g} Hz",
             f"signals: {train.signals}",
             f"base parameters: {base.independent.size} of "
             f"{10 * model.nb + 2 * n + rotors(model).size}; condition "
             f"number of the weighted regressor (columns scaled) {fit.condition:.3g}",
             f"pulled towards the URDF with strength {pull.strength:.3g} (chosen by "
             f"{FOLDS}-fold cross-validation over time: each fold predicted by a fit on the "
             f"others; 0 is plain least squares, 1 weighs the URDF as the data in every "
             f"column's scale; a pull only where its gain is over twice its standard error): "
             f"left-out torques {100 * (1 - pull.lost):.1f} % closer than plain least squares'"]
    unused = [names[j] for j in np.flatnonzero(~measured)]
    if unused:
        lines.append(f"efforts not used (not recorded, or --ignore-efforts): "
                     f"{', '.join(unused)}; their joints' motion is, and what only their "
                     "torques would show keeps the URDF's values")
    lines += _cannot_carry(model, base, fit, train)
    lines += ["", "held-out torque RMS (N m or N)",
              f"{'joint':<24} {'URDF':>10} {'least sq.':>10} {'identified':>10}"]
    for j, name in enumerate(names):
        lines.append(f"{name:<24} {rms['urdf'][j]:10.4g} {rms['least squares'][j]:10.4g} "
                     f"{rms['identified'][j]:10.4g}" if measured[j] else
                     f"{name:<24} {'(efforts not used)':>32}")
    lines += ["", f"{'joint':<24} {'viscous':>10} {'Coulomb':>10}   (identified friction: "
              f"viscous v + Coulomb tanh(v / {SLIDING_SPEED:g}))"]
    fric = phi[10 * model.nb :]
    for j, name in enumerate(names):
        lines.append(f"{name:<24} {fric[j]:10.4g} {fric[n + j]:10.4g}")
    lines += _armatures(model, phi, prior)
    if opts.drive:
        k, o = fit.scale, offsets(model, phi, fit.scale)
        unit = int(np.argmax(measured))  # the first joint measured sets the unit
        lines += ["", f"{'joint':<24} {'scale k':>10} {'offset o':>10}   (effort = torque / k + o;"
                      f" k relative to {names[unit]}'s)"]
        for j, name in enumerate(names):
            note = "  not determined by the recording: held at 1" if fit.held[j] and \
                j != unit and measured[j] else ""
            lines.append(f"{name:<24} {k[j]:10.4g} {o[j]:10.4g}{note}" if measured[j] else
                         f"{name:<24} {'(efforts not used)':>21}")
        loose = [names[j] for j in np.flatnonzero(fit.held & measured) if j != unit]
        if loose:
            lines.append(f"warning: the scales of {', '.join(loose)} are not determined by the "
                         "recording (their torque is mostly their own friction, which scales "
                         "with them): held at 1; their friction and offset carry the rest")
    lines += ["", f"{'body':<24} {'URDF mass':>10} {'identified':>10}   (each within "
                  f"{MASS_RANGE[0]:g}-{MASS_RANGE[1]:g} times the URDF's)"]
    for i, name in enumerate(model.body_names):
        bound = prior[10 * i] > 0 and np.isclose(phi[10 * i] / prior[10 * i], MASS_RANGE,
                                                 rtol=1e-3).any()
        lines.append(f"{name:<24} {prior[10 * i]:10.4g} {phi[10 * i]:10.4g}"
                     + ("   at the bound: the data would move it further" if bound else ""))
    return "\n".join(lines)


#: what a recording needs to carry a fit: joints that move, samples, a regressor not near
#: singular (numbers of the bundled arm's excite trajectory: condition ~35, 40 samples a base
#: parameter, every joint over half a radian)
MOVED = 0.1  # rad (m) of range, below which a joint barely moved
PER_PARAMETER = 10  # identifying samples a base parameter
CONDITION = 1e3
JITTER = 0.5  # the stamps' spread, in periods, beyond which a driver stamps when it sends


def _cannot_carry(model: Model, base: BaseParameters, fit: Fit, train: Samples) -> list[str]:
    """Warnings for what the recording cannot carry, each with what to record instead."""
    out, r = [], base.independent.size
    instead = " (record an exciting trajectory: rbd-ros excite)"
    if fit.excited < r:
        out.append(f"warning: the recording excites {fit.excited} of the {r} base parameters; "
                   "the rest keep the URDF's values (move every joint over its range, at "
                   f"several speeds){instead}")
    span = np.ptp(train.q, axis=0) if len(train) else np.zeros(model.nv)
    still = [f"{n} ({span[j]:.3f})" for j, n in enumerate(model.state_joint_names)
             if span[j] < MOVED]
    if still:
        out.append(f"warning: joints that barely moved (range below {MOVED:g}): "
                   f"{', '.join(still)}; what only their motion shows is not identified{instead}")
    if len(train) < PER_PARAMETER * r:
        out.append(f"warning: {len(train)} identifying samples for {r} base parameters (fewer "
                   f"than {PER_PARAMETER} each): record longer{instead}")
    if train.jitter > JITTER:
        out.append(f"warning: the stamps jitter by {train.jitter:.1f} periods (1st-99th "
                   "percentile of their steps): resampled onto a regular grid, but a stamp that "
                   "is not its sample's time still turns into noise on the accelerations; stamp "
                   "each state when it is sampled (the driver's hardware time, if it has one)")
    if fit.condition > CONDITION:
        out.append(f"warning: the regressor's condition number {fit.condition:.3g} (over "
                   f"{CONDITION:g}): some combinations of parameters are barely told apart "
                   f"and take the noise{instead}")
    return out


def _span(s: Samples) -> float:
    return float(s.ns[-1] - s.ns[0]) * 1e-9 if len(s) else 0.0


def _plot(path: Path, model: Model, test: Samples, pred: dict[str, F64]) -> None:
    from ..bag.plotting import pyplot

    plt = pyplot()

    names = model.state_joint_names
    t = (test.ns - test.ns[0]) * 1e-9 if len(test) else test.ns * 1.0
    fig, axes = plt.subplots(len(names), 1, figsize=(10, 2.0 * len(names)), sharex=True,
                             squeeze=False)
    rows = actuated(model)
    for j, ax in enumerate(axes[:, 0]):
        if np.isfinite(test.tau[:, rows[j]]).any():
            ax.plot(t, test.tau[:, rows[j]], "k", lw=1.0, label="measured")
        else:
            ax.set_title("efforts not used", fontsize=8, loc="right")
        ax.plot(t, pred["urdf"][:, j], "tab:red", lw=0.8, label="URDF")
        ax.plot(t, pred["identified"][:, j], "tab:blue", lw=0.8, label="identified")
        ax.set_ylabel(names[j], fontsize=8)
    axes[0, 0].legend(loc="upper right", fontsize=8)
    axes[-1, 0].set_xlabel("held-out time (s)")
    fig.tight_layout()
    fig.savefig(path, dpi=80)
    plt.close(fig)
