"""A quadruped trotting or bounding in place, simulated with Pinocchio alone (no rbd_ros in
:func:`simulate`), with its contact times and forces known: the ground truth of contact estimation.

The gait's controller prescribes the feet's ground forces: in stance a half-sine in time (as
a running animal's, zero at touchdown and at lift-off), shared between the stance feet to hold
the base's height and attitude (weak PD loops), and sized so that over a cycle they carry the
robot's weight. Swing feet follow a raised cosine back to where they left the ground; stance
feet stay where they landed. Each small step solves, for the accelerations and the joint
torques together, the floating-base dynamics with those forces and the feet's accelerations,
and integrates. The joint torques are then exactly what the robot's motors give for that
motion and those forces."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pinocchio as pin
from pinref import ROBOTS, robot_path

from rbd_ros.dynamics import Model, load_urdf
from rbd_ros.dynamics.contact.contacts import Contact
from rbd_ros.dynamics.estimation.contact_estimation import ContactEstimator
from rbd_ros.robots import QUADRUPED

RAMP_S = 0.01  # s
FLOOR = 0.1  # each stance foot presses with at least this fraction of the weight
MU = 0.8  # the ground's friction


@dataclass(frozen=True)
class Gait:
    period: float  # s
    duty: float  # each foot's stance, fraction of the period
    phase: dict[str, float]  # foot -> when its stance starts, fraction of the period
    step_height: float  # m: how high a swing foot rises


def trot(feet: list[str], period: float = 0.5) -> Gait:
    """Diagonal pairs, each on the ground 60 % of the period (all four for a tenth of it,
    twice), swing feet 6 cm up; ``feet`` in the order LF, RF, LH, RH."""
    lf, rf, lh, rh = feet
    return Gait(period, 0.6, {lf: 0.0, rh: 0.0, rf: 0.5, lh: 0.5}, 0.06)


def stand(feet: list[str]) -> Gait:
    """All four feet on the ground, each a long way into its stance (no ramp in sight)."""
    return Gait(100.0, 1.0, {f: 0.5 for f in feet}, 0.0)


def bound(feet: list[str], period: float = 0.3) -> Gait:
    """Front pair, all four, hind pair, all four: each pair on the ground 80 % of the period,
    a quick swing (60 ms at 0.3 s), 3 cm up."""
    lf, rf, lh, rh = feet
    return Gait(period, 0.8, {lf: 0.0, rf: 0.0, lh: 0.5, rh: 0.5}, 0.03)


@dataclass
class Run:
    t: np.ndarray  # (n,) s
    q: np.ndarray  # (n, nq) Pinocchio's configuration (base pose: position, quaternion xyzw)
    v: np.ndarray  # (n, nv) base twist in the base frame, then joint velocities
    tau: np.ndarray  # (n, nv - 6) joint torques
    contact: np.ndarray  # (n, feet) bool: the foot is in stance
    force: np.ndarray  # (n, feet, 3) ground force on each foot, world
    joints: list[str]  # Pinocchio's joint names, in tau's order
    feet: list[str]
    a: np.ndarray  # (n, nv) the accelerations at each sample, as v
    feet_at: np.ndarray  # (n, feet, 3) each foot's position, world


def _stance(g: Gait, foot: str, t: float) -> tuple[bool, float]:
    """(in stance, phase in [0, 1) of the stance or of the swing)."""
    s = (t / g.period - g.phase[foot]) % 1.0
    if s < g.duty:
        return True, s / g.duty
    return False, (s - g.duty) / (1.0 - g.duty)


def simulate(urdf: str, feet: list[str], nominal: dict[str, float], gait: Gait,
             seconds: float, rate: float = 1000.0, substeps: int = 5) -> Run:
    pm = pin.buildModelFromUrdf(urdf, pin.JointModelFreeFlyer())
    pd = pm.createData()
    fid = [pm.getFrameId(f) for f in feet]
    q = pin.neutral(pm)
    for name, x in nominal.items():
        q[pm.joints[pm.getJointId(name)].idx_q] = x
    pin.framesForwardKinematics(pm, pd, q)
    q[2] -= min(pd.oMf[i].translation[2] for i in fid)  # the lowest foot on the ground
    pin.framesForwardKinematics(pm, pd, q)
    anchor = [pd.oMf[i].translation.copy() for i in fid]
    v = np.zeros(pm.nv)
    mass = pin.computeTotalMass(pm)
    g = 9.81
    com0 = pin.centerOfMass(pm, pd, q).copy()
    pin.ccrba(pm, pd, q, v)
    inertia = pd.Ig.inertia.copy()  # the whole robot's, about its centre of mass
    dt = 1.0 / (rate * substeps)
    S = np.zeros((pm.nv - 6, pm.nv))
    S[:, 6:] = np.eye(pm.nv - 6)
    out: dict[str, list[np.ndarray]] = {x: [] for x in ("t", "q", "v", "tau", "c", "f", "a",
                                                         "p")}
    steps = round(seconds * rate) * substeps
    nf = len(feet)
    for step in range(steps + 1):
        t = step * dt
        pin.forwardKinematics(pm, pd, q, v, np.zeros(pm.nv))
        pin.computeJointJacobians(pm, pd, q)
        pin.updateFramePlacements(pm, pd)
        M = pin.crba(pm, pd, q)
        M = np.triu(M) + np.triu(M, 1).T
        h = pin.nonLinearEffects(pm, pd, q, v)
        com = pin.centerOfMass(pm, pd, q, v)
        vcom = pd.vcom[0]
        R = pd.oMi[1].rotation
        w_world = R @ v[3:6]
        phases = [_stance(gait, f, t) for f in feet]
        # the wrench the stance feet should give, about the centre of mass (world axes)
        rpy = pin.rpy.matrixToRpy(R)
        want = np.r_[mass * (20.0 * (com0[:2] - com[:2]) - 8.0 * vcom[:2]),
                     mass * (g + 60.0 * (com0[2] - com[2]) - 12.0 * vcom[2]),
                     inertia @ (-150.0 * rpy - 20.0 * w_world)]
        forces = np.zeros((nf, 3))
        stance = [i for i in range(nf) if phases[i][0]]
        if stance:
            # the least weighted norm, each foot's weight ramping from zero over RAMP_S after
            # touchdown and back to zero over RAMP_S before lift-off: weight shifts onto a
            # landing foot and off a lifting one, as a whole-body controller shifts it, and
            # each stance foot presses with at least FLOOR of the weight (times its ramp)
            G = np.zeros((6, 3 * len(stance)))
            root = np.empty(3 * len(stance))
            for n, i in enumerate(stance):
                r = pd.oMf[fid[i]].translation - com
                G[:3, 3 * n : 3 * n + 3] = np.eye(3)
                G[3:, 3 * n : 3 * n + 3] = pin.skew(r)
                since = min(phases[i][1], 1.0 - phases[i][1]) * gait.duty * gait.period
                root[3 * n : 3 * n + 3] = math.sqrt(min(max(since / RAMP_S, 1e-3), 1.0))
            f = root * np.linalg.lstsq(G * root, want, rcond=None)[0]
            for n, i in enumerate(stance):  # on the ground, in its friction cone
                fi = f[3 * n : 3 * n + 3]
                fi[2] = max(fi[2], root[3 * n] ** 2 * FLOOR * mass * g)
                slip = math.hypot(fi[0], fi[1]) / (MU * fi[2]) if fi[2] > 0 else math.inf
                forces[i] = [fi[0] / max(slip, 1.0), fi[1] / max(slip, 1.0), fi[2]]
        rows, rhs = [], []
        for i in range(nf):
            J = pin.getFrameJacobian(pm, pd, fid[i], pin.LOCAL_WORLD_ALIGNED)[:3]
            dJv = pin.getFrameClassicalAcceleration(pm, pd, fid[i],
                                                    pin.LOCAL_WORLD_ALIGNED).linear
            p = pd.oMf[fid[i]].translation
            vf = J @ v
            if phases[i][0]:
                target = -400.0 * (p - anchor[i]) - 40.0 * vf
            else:
                s = phases[i][1]
                w = 2 * math.pi / ((1 - gait.duty) * gait.period)
                lift = gait.step_height / 2
                ref = anchor[i] + [0, 0, lift * (1 - math.cos(2 * math.pi * s))]
                vref = np.array([0, 0, lift * w * math.sin(2 * math.pi * s)])
                aref = np.array([0, 0, lift * w * w * math.cos(2 * math.pi * s)])
                target = aref + 2500.0 * (ref - p) + 100.0 * (vref - vf)
            rows.append(J)
            rhs.append(target - dJv)
        Jall = np.vstack(rows)
        ext = sum((pin.getFrameJacobian(pm, pd, fid[i], pin.LOCAL_WORLD_ALIGNED)[:3].T
                   @ forces[i] for i in range(nf)), np.zeros(pm.nv))
        K = np.block([[M, -S.T], [Jall, np.zeros((len(Jall), pm.nv - 6))]])
        sol = np.linalg.solve(K, np.r_[ext - h, np.concatenate(rhs)])
        a, tau = sol[: pm.nv], sol[pm.nv :]
        if step % substeps == 0:
            out["t"].append(np.array(t))
            out["q"].append(q.copy())
            out["v"].append(v.copy())
            out["tau"].append(tau)
            out["c"].append(np.array([ph[0] for ph in phases]))
            out["f"].append(forces)
            out["a"].append(a)
            out["p"].append(np.array([pd.oMf[i].translation for i in fid]))
        for i in range(nf):  # a foot that lands stays where it landed
            if phases[i][0] and not _stance(gait, feet[i], t - dt)[0]:
                anchor[i] = pd.oMf[fid[i]].translation.copy()
        v = v + a * dt
        q = pin.integrate(pm, q, v * dt)
    return Run(np.array(out["t"]), np.array(out["q"]), np.array(out["v"]), np.array(out["tau"]),
               np.array(out["c"]), np.array(out["f"]), list(pm.names[2:]), feet,
               np.array(out["a"]), np.array(out["p"]))


# rbd_ros's estimator on a run, and how it did (the simulation above does not use rbd_ros)
WITHIN = 0.010  # s: the estimate is to settle within this of each touchdown and lift-off
LEGS = {  # URDF, feet (LF, RF, LH, RH), a standing posture
    "bundled": (str(QUADRUPED), [f"{x}_foot" for x in ("LF", "RF", "LH", "RH")],
                {f"{x}_{j}": a for x in ("LF", "RF", "LH", "RH")
                 for j, a in (("HFE", 0.6), ("KFE", -1.2))}),
    "solo12": (robot_path("solo12"), [f"{x}_FOOT" for x in ("FL", "FR", "HL", "HR")],
               {f"{x}_{j}": a * (1 if x[0] == "F" else -1) for x in ("FL", "FR", "HL", "HR")
                for j, a in (("HFE", 0.8), ("KFE", -1.6))}),
    "anymal_c": (robot_path("anymal_c"), [f"{x}_FOOT" for x in ("LF", "RF", "LH", "RH")],
                 {f"{x}_{j}": a * (1 if x[1] == "F" else -1) for x in ("LF", "RF", "LH", "RH")
                  for j, a in (("HFE", 0.4), ("KFE", -0.8))}),
}
#: robots only the bench runs (bench/contacts.py), looked at by no test or tuning: Unitree's
#: Go1, whose joint torques are estimated from its motors' currents
UNSEEN = {
    "go1": (str(ROBOTS / "go1_description/urdf/go1.urdf"),
            [f"{x}_foot" for x in ("FL", "FR", "RL", "RR")],
            {f"{x}_{j}_joint": a for x in ("FL", "FR", "RL", "RR")
             for j, a in (("hip", 0.0), ("thigh", 0.8), ("calf", -1.5))}),
}
#: every robot above: the tests' and the bench's alone
ALL_LEGS = {**LEGS, **UNSEEN}


def estimate(robot: str, run: Run, noise: float, seed: int = 0, velocity_noise: float = 0.0,
             model: Model | None = None, friction: float = 0.0, jitter: float = 0.0,
             **options: float) -> tuple[np.ndarray, np.ndarray]:
    """The estimator's contact states over the run (``options``: its own; ``model``: the
    robot's as the estimator knows it, by default exact), the efforts with Gaussian noise of
    ``noise`` times their RMS and the joint velocities with ``velocity_noise`` rad/s; and which
    states it had settled in (decided the contacts: none before). ``friction``: each joint's
    motor also overcomes a Coulomb friction of this fraction of the efforts' RMS (a real
    joint's, sign(v); the model has none); ``jitter``: s, the stamps the estimator is given are
    off by up to this, uniformly (a driver's clock)."""
    rng = np.random.default_rng(seed)
    rms = np.sqrt(np.mean(run.tau ** 2))
    tau = run.tau + friction * rms * np.sign(run.v[:, 6:])
    m, Q, V, E = states(robot, run, tau + rng.normal(0.0, noise * rms, run.tau.shape))
    V[:, 6:] += rng.normal(0.0, velocity_noise, V[:, 6:].shape)
    stamps = run.t + rng.uniform(-jitter, jitter, run.t.shape)
    est = ContactEstimator(model or m, [Contact(f) for f in run.feet], **options)
    out = np.empty(run.contact.shape, dtype=bool)
    settled = np.empty(len(run.t), dtype=bool)
    for k in range(len(run.t)):
        state = est.update(stamps[k], Q[k], V[k], E[k])
        out[k] = [state.touching[f] for f in run.feet]
        settled[k] = state.settled
    return out, settled


def states(robot: str, run: Run, tau: np.ndarray | None = None
           ) -> tuple[Model, np.ndarray, np.ndarray, np.ndarray]:
    """rbd_ros's model of the robot and the run's states in its order: positions, velocities
    (base first) and joint efforts (``tau`` in the run's joint order, else the run's), one row
    per sample."""
    m = load_urdf(ALL_LEGS[robot][0], floating_base=True)
    iq = [m.joint(n).idx_q for n in run.joints]
    iv = [m.joint(n).idx_v for n in run.joints]
    Q, V, E = np.zeros((len(run.t), m.nq)), np.zeros((len(run.t), m.nv)), \
        np.zeros((len(run.t), m.nv - 6))
    Q[:, :7], V[:, :6], Q[:, iq], V[:, iv] = run.q[:, :7], run.v[:, :6], run.q[:, 7:], \
        run.v[:, 6:]
    E[:, np.array(iv) - 6] = run.tau if tau is None else tau
    return m, Q, V, E


def spurious(run: Run, est: np.ndarray, settled: np.ndarray) -> list[tuple[str, float]]:
    """The estimate's edges (a touchdown or lift-off it reports once settled, after its first
    decision) farther than WITHIN from every true event of that foot: (foot, when)."""
    dt = run.t[1] - run.t[0]
    first = int(np.argmax(settled))
    out = []
    for j, foot in enumerate(run.feet):
        truth = np.flatnonzero(run.contact[1:, j] != run.contact[:-1, j]) + 1
        for e in np.flatnonzero(est[1:, j] != est[:-1, j]) + 1:
            if e > first and (not len(truth) or np.min(np.abs(truth - e)) * dt > WITHIN):
                out.append((foot, float(run.t[e])))
    return out


def settling(run: Run, est: np.ndarray, settled: np.ndarray
             ) -> list[tuple[str, str, float, float]]:
    """Each touchdown and lift-off once the estimator has settled: (foot, "touchdown" or
    "lift-off", when, how long after it the estimate settles: equal to the truth from then
    until WITHIN before the next event, where an early answer to that one may come)."""
    out = []
    dt = run.t[1] - run.t[0]
    early = round(WITHIN / dt)
    for j, foot in enumerate(run.feet):
        truth = run.contact[:, j]
        events = np.flatnonzero(truth[1:] != truth[:-1]) + 1
        ends = [*events[1:], len(truth)]
        for start, end in zip(events, ends, strict=True):
            if not settled[start]:
                continue
            stop = end - early if end < len(truth) else end
            wrong = np.flatnonzero(est[start:stop, j] != truth[start])
            late = (wrong[-1] + 1) * dt if len(wrong) else 0.0
            out.append((foot, "touchdown" if truth[start] else "lift-off", run.t[start], late))
    return out
