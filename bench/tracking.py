"""Trajectory tracking on a plant that is not ours: MuJoCo simulates each arm from its URDF
(inertias, joint damping and friction as MuJoCo reads them; visuals and collisions dropped) at
1 kHz, and a controller commands its joints from the state of each step (held for the step).

    .venv/bin/python bench/tracking.py

Three controllers at equal gains (each joint's error a second-order system of natural
frequency W and damping ratio 1 at the arm's inertia in its start posture): PD alone, PD +
gravity (the model's), and computed torque (``rbd_ros.dynamics.control``: the whole inverse
dynamics of the model). The trajectory: random waypoints within the joint limits, joined by
quintic rest-to-rest segments timed to reach 90 % of the URDF's velocity limits. Every effort
is clamped to the URDF's limits, as the node clamps it. Then the same with a payload on the last
link (2 kg; 0.5 kg on the bundled arm, whose 87 N m shoulder cannot hold 2 kg on this motion)
that the model does not know (MuJoCo's arm carries it, ours does not), with it known
(``payload`` set to the true one), and with ``payload`` set to what ``rbd-ros identify
--payload`` finds on a recording of the loaded arm: the RMS and worst tracking error over all
joints, rad. Last, the error a perfect model leaves: that of the effort held for each 1 ms step
(the plant's torques change within it), at a quarter of the step too.

MuJoCo is a bench dependency only: ``.venv/bin/python -m pip install -r
requirements-bench.txt``."""

from __future__ import annotations

import itertools
import re
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "testkit"))

from rbd_ros.dynamics import Data, Model, crba, gravity, load_urdf_string  # noqa: E402
from rbd_ros.dynamics.control import ComputedTorque, Spline, gains  # noqa: E402

W = 20.0  # rad/s
DT = 1e-3


def payload(mass: float) -> list[float]:
    """``mass`` kg 5 cm out along the last link's z axis, 1e-3 m^2 times its mass as each
    principal moment: the ``payload`` parameter (kg, m, kg m^2)."""
    return [mass, 0.0, 0.0, 0.05, 1e-3 * mass, 0.0, 0.0, 1e-3 * mass, 0.0, 1e-3 * mass]


def plain_urdf(text: str, fixed: tuple[str, ...] = ()) -> str:
    """The URDF without visuals and collisions (MuJoCo would look for their meshes), the
    joints ``fixed`` names made fixed (a gripper's mimic fingers: MuJoCo knows no mimic)."""
    text = re.sub(r"<visual\b.*?</visual>|<collision\b.*?</collision>", "", text, flags=re.S)
    for name in fixed:
        text = re.sub(rf'(<joint\s+name="{name}"\s+type=")\w+(")', r"\1fixed\2", text)
    return text


def carrying(text: str, link: str, load: list[float]) -> str:
    """The URDF with ``load`` (mass, centre of mass, inertia) fused into ``link``'s
    inertial, for MuJoCo: the arm as it really is."""
    import xml.etree.ElementTree as ET

    from rbd_ros.dynamics.multibody.model import payload_parts

    root = ET.fromstring(text)
    node = next(x for x in root.iter("link") if x.get("name") == link)
    inertial = node.find("inertial")
    assert inertial is not None, f"{link} has no inertial"
    m0 = float(inertial.find("mass").get("value", "0"))  # type: ignore[union-attr]
    origin = inertial.find("origin")
    c0 = np.array([float(x) for x in (origin.get("xyz", "0 0 0") if origin is not None
                                      else "0 0 0").split()])
    assert origin is None or origin.get("rpy", "0 0 0").split() == ["0", "0", "0"]
    i = inertial.find("inertia").attrib  # type: ignore[union-attr]
    I0 = np.array([[float(i["ixx"]), float(i["ixy"]), float(i["ixz"])],
                   [float(i["ixy"]), float(i["iyy"]), float(i["iyz"])],
                   [float(i["ixz"]), float(i["iyz"]), float(i["izz"])]])
    m1, c1, I1 = payload_parts(load)
    m = m0 + m1
    c = (m0 * c0 + m1 * c1) / m

    def shifted(I: np.ndarray, mass: float, d: np.ndarray) -> np.ndarray:
        out: np.ndarray = I + mass * (d @ d * np.eye(3) - np.outer(d, d))
        return out

    I = shifted(I0, m0, c0 - c) + shifted(I1, m1, c1 - c)
    for x in list(inertial):
        inertial.remove(x)
    ET.SubElement(inertial, "origin", xyz=" ".join(f"{x:.9g}" for x in c), rpy="0 0 0")
    ET.SubElement(inertial, "mass", value=f"{m:.9g}")
    ET.SubElement(inertial, "inertia", ixx=f"{I[0, 0]:.9g}", ixy=f"{I[0, 1]:.9g}",
                  ixz=f"{I[0, 2]:.9g}", iyy=f"{I[1, 1]:.9g}", iyz=f"{I[1, 2]:.9g}",
                  izz=f"{I[2, 2]:.9g}")
    return ET.tostring(root, encoding="unicode")


class Plant:
    """MuJoCo's arm, its joints in our model's order."""

    def __init__(self, urdf: str, model: Model) -> None:
        try:
            import mujoco
        except ImportError:
            sys.exit("bench/tracking.py needs MuJoCo: .venv/bin/python -m pip install -r "
                     "requirements-bench.txt")

        text = urdf
        head = re.search(r"<robot\b[^>]*>", text)
        assert head is not None
        options = ('<mujoco><compiler discardvisual="true" fusestatic="false" '
                   'balanceinertia="false" strippath="true"/></mujoco>')
        text = text[:head.end()] + options + text[head.end():]
        self.mj = mujoco.MjModel.from_xml_string(text)
        self.mj.opt.timestep = DT
        self.mj.opt.integrator = mujoco.mjtIntegrator.mjINT_RK4
        self.mj.opt.gravity[:] = model.gravity
        self.data = mujoco.MjData(self.mj)
        self.mujoco = mujoco
        names = list(model.state_joint_names)
        ids = [mujoco.mj_name2id(self.mj, mujoco.mjtObj.mjOBJ_JOINT, n) for n in names]
        assert min(ids) >= 0 and self.mj.nv == len(names), (ids, self.mj.nv, names)
        self.q_at = np.array([self.mj.jnt_qposadr[i] for i in ids])
        self.v_at = np.array([self.mj.jnt_dofadr[i] for i in ids])

    def reset(self, q: np.ndarray) -> None:
        self.mujoco.mj_resetData(self.mj, self.data)
        self.data.qpos[self.q_at] = q
        self.mujoco.mj_forward(self.mj, self.data)

    def state(self) -> tuple[np.ndarray, np.ndarray]:
        return self.data.qpos[self.q_at].copy(), self.data.qvel[self.v_at].copy()

    def step(self, tau: np.ndarray) -> None:
        self.data.qfrc_applied[self.v_at] = tau
        self.mujoco.mj_step(self.mj, self.data)


def trajectory(model: Model, rng: np.random.Generator, waypoints: int = 4,
               share: float = 0.9) -> tuple[Spline, np.ndarray]:
    """(spline, start) through random waypoints within the middle half of each joint's
    range, each rest-to-rest quintic segment timed so its fastest joint reaches ``share`` of
    its velocity limit (a quintic's peak speed is 1.875 times its mean)."""
    times, points = waypoints_of(model, rng, waypoints, share)
    zero = np.zeros_like(points)
    return Spline(times, points, zero, zero, (points[0], zero[0], zero[0])), points[0]


def waypoints_of(model: Model, rng: np.random.Generator, waypoints: int, share: float
                 ) -> tuple[list[int], np.ndarray]:
    """:func:`trajectory`'s points (the first: the start) and their times, ns."""
    joints = [model.joint(n) for n in model.state_joint_names]
    lo = np.array([max(j.lower, -np.pi) for j in joints])
    hi = np.array([min(j.upper, np.pi) for j in joints])
    speed = np.array([j.velocity if np.isfinite(j.velocity) and j.velocity > 0 else 2.0
                      for j in joints])
    mid, half = (lo + hi) / 2, (hi - lo) / 4
    points = mid + half * rng.uniform(-1, 1, (waypoints + 1, len(joints)))
    times = [0]
    for a, b in itertools.pairwise(points):
        T = float(np.max(1.875 * np.abs(b - a) / (share * speed)))
        times.append(times[-1] + round(max(T, 0.2) * 1e9))
    return times, points


def track(plant: Plant, model: Model, spline: Spline, start: np.ndarray, law: str,
          known: Model, log: list[np.ndarray] | None = None, dt: float = DT
          ) -> tuple[float, float, int]:
    """(RMS, worst) position error over the motion and the clamps, for ``law`` (pd, pd+g,
    computed torque) with ``known`` as its model, commanding every ``dt`` s; ``log``: each
    step's position, velocity and the effort applied after it appended."""
    n = model.nv
    d = Data(known)
    M0 = np.diag(crba(known, d, start))
    kp, kd = gains(W, 1.0)
    ct = ComputedTorque(known, np.arange(n), kp, kd, 0.0, 0.0, friction=True)
    limits = np.array([model.joint(x).effort for x in model.state_joint_names])
    limits = np.where(limits > 0, limits, np.inf)
    plant.mj.opt.timestep = dt
    plant.reset(start)
    step = round(dt * 1e9)
    steps = spline.duration_ns // step + round(0.5 / dt)
    errors, clamps = np.empty((steps, n)), 0
    for k in range(steps):
        q, v = plant.state()
        qd, vd, ad = spline.sample(k * step)
        errors[k] = qd - q
        if law == "computed torque":
            tau = ct.efforts(q, v, (qd, vd, ad), dt)
        else:
            tau = M0 * (kp * (qd - q) + kd * (vd - v))
            if law == "pd+g":
                tau = tau + gravity(known, d, q)
        clamps += int(np.sum(np.abs(tau) > limits))
        tau = np.clip(tau, -limits, limits)
        if log is not None:
            log.append(np.concatenate([q, v, tau]))
        plant.step(tau)
    return float(np.sqrt(np.mean(errors**2))), float(np.abs(errors).max()), clamps


def identified(plant: Plant, model: Model, text: str, link: str, true: list[float]
               ) -> tuple[list[float], list[float], str]:
    """The payload on ``link`` as ``rbd-ros identify --payload`` finds it (its function, its
    defaults) on a recording of the loaded arm: computed torque on the model without the
    payload (the arm as it runs before anyone identifies its load) through 16 random waypoints
    at 60 % of its velocity limits (another motion than the one tracked), its joint states
    (position, velocity, effort) at 1 kHz. The effort at a state's instant is the mean of the
    efforts held in the steps before and after it: the plant's torque steps from one to the
    other there, and the acceleration a smoothed derivative of the velocities finds at that
    instant is that of their mean. Returns the ``payload`` parameter, the one found when the
    recording's effort is the one applied after each state instead (half a step ahead of the
    motion), and a line saying what was found."""
    import tempfile

    from recordings import write_joint_states

    from rbd_ros.identify.payload import identify_payload
    from rbd_ros.identify.run import IdentifyOptions

    spline, start = trajectory(model, np.random.default_rng(99), waypoints=16, share=0.6)
    log: list[np.ndarray] = []
    track(plant, model, spline, start, "computed torque", model, log)
    rows, n = np.array(log), model.nv
    after = rows[:, 2 * n:]
    at = after.copy()
    at[1:] = (after[1:] + after[:-1]) / 2
    ns = [1_700_000_000_000_000_000 + k * 1_000_000 for k in range(len(rows))]
    found = []
    with tempfile.TemporaryDirectory() as tmp:
        urdf = Path(tmp) / "arm.urdf"
        urdf.write_text(text)
        for k, efforts in enumerate((at, after)):
            bag = write_joint_states(Path(tmp) / f"loaded{k}", ns, rows[:, :n],
                                     rows[:, n:2 * n], efforts, names=model.state_joint_names)
            found.append(identify_payload([bag], Path(tmp) / f"out{k}",
                                          IdentifyOptions(urdf=urdf), link)[0])
    com = [np.linalg.norm(x.com - true[1:4]) * 1e3 for x in found]
    why = found[0].not_physical()
    # the parameter as the command prints it (its inertia made physical where it is not)
    return found[0].physical().values(), found[1].physical().values(), (
        f"identified from {len(rows) / 1000:.0f} s: {found[0].mass:.3f} kg ({true[0]:g} kg), "
        f"centre of mass {com[0]:.2f} mm off{f'; its inertia made physical ({why})' if why else ''}"
        f" (from the efforts applied after each state: {found[1].mass:.3f} kg, {com[1]:.2f} mm "
        "off)")


ARMS = {  # label -> (URDF path, its last link, joints made fixed, the payload's kg)
    "arm7 (bundled)": ("arm7", "link7", (), 0.5),
    "ur5": ("ur5", "wrist_3_link", (), 2.0),
    "panda": ("panda", "panda_link7", ("panda_finger_joint1", "panda_finger_joint2"), 2.0),
}


def urdf_of(name: str) -> str:
    if name == "arm7":
        from rbd_ros.robots import ARM

        return ARM.read_text()
    from pinref import robot_path

    return Path(robot_path(name)).read_text()


def tracking_table(seed: int = 7) -> list[str]:
    lines = ["| arm | case | PD RMS / worst | PD + g RMS / worst | computed torque RMS / worst "
             "| CT / PD | CT / PD+g |", "|---|---|---|---|---|---|---|"]
    notes: list[str] = []
    floor = ["| arm | step | unloaded | payload known | ratio |", "|---|---|---|---|---|"]
    for label, (name, link, fixed, kg) in ARMS.items():
        text = plain_urdf(urdf_of(name), fixed)
        model = load_urdf_string(text)
        spline, start = trajectory(model, np.random.default_rng(seed))
        true = payload(kg)
        unloaded_plant, loaded_plant = Plant(text, model), Plant(carrying(text, link, true), model)
        found, ahead, said = identified(loaded_plant, model, text, link, true)
        cases = (("unloaded", unloaded_plant, model),
                 (f"{kg:g} kg unmodelled", loaded_plant, model),
                 (f"{kg:g} kg as payload", loaded_plant, model.with_payload(link, true)),
                 (f"{kg:g} kg identified", loaded_plant, model.with_payload(link, found)))
        ct_rms = []
        for case, plant, known in cases:
            rows = {law: track(plant, model, spline, start, law, known)
                    for law in ("pd", "pd+g", "computed torque")}
            cells = " | ".join(f"{r[0]:.3g} / {r[1]:.3g}" for r in rows.values())
            ct_rms.append(rows["computed torque"][0])
            lines.append(f"| {label} | {case} | {cells} | {ct_rms[-1] / rows['pd'][0]:.3f} | "
                         f"{ct_rms[-1] / rows['pd+g'][0]:.3f} |")
        lines.append(f"| {label} | (motion) | {spline.duration_ns / 1e9:.2f} s, "
                     f"{model.nv} joints | | | | |")
        off = track(loaded_plant, model, spline, start, "computed torque",
                    model.with_payload(link, ahead))[0]
        notes.append(f"{label}: {said}; computed torque with it: {ct_rms[3] / ct_rms[2]:.3f} "
                     f"times the error with the true payload, {ct_rms[3] / ct_rms[0]:.3f} times "
                     f"the unloaded arm's ({off / ct_rms[2]:.2f} times the true payload's with "
                     "the one found from the efforts applied after each state)")
        if kg < 2:
            heavy = payload(2.0)
            r = track(Plant(carrying(text, link, heavy), model), model, spline, start,
                      "computed torque", model.with_payload(link, heavy))
            notes.append(f"{label} carrying 2 kg, known: computed torque {r[0]:.3g} rad RMS, "
                         f"{r[2]} efforts clamped to the limits")
        for dt in (DT, DT / 4):
            a, b = (track(plant, model, spline, start, "computed torque", known, dt=dt)[0]
                    for _, plant, known in (cases[0], cases[2]))
            floor.append(f"| {label} | {dt * 1e3:g} ms | {a:.3g} | {b:.3g} | {b / a:.2f} |")
    return [*lines, "", *(f"- {x}" for x in notes), "",
            "Computed torque with the payload known (RMS, rad; the bundled arm's dry friction "
            "is MuJoCo's own), the effort held for each step:",
            "", *floor]


if __name__ == "__main__":
    print("\n".join(tracking_table()))
