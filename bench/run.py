"""rbd_ros benchmarks: every table an issue asks for, measured side by side in one run.

    .venv/bin/python bench/run.py [--quick]

Needs the test requirements (Pinocchio, example-robot-data). Times are the best of several
repeats; compare the ratios, since these machines are noisy.
"""

from __future__ import annotations

import argparse
import functools
import os
import subprocess
import sys
import tempfile
import textwrap
import time
import timeit
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "testkit"))
sys.path.insert(0, str(ROOT / "bench"))

import pinocchio as pin  # noqa: E402
from bag_throughput import bag_throughput  # noqa: E402
from collisions import simulated as simulated_collisions  # noqa: E402
from contacts import contact_estimation  # noqa: E402
from excite import excitation_quality  # noqa: E402
from latency import first_answer, floating_latency, latency, stale_stop  # noqa: E402
from legged_throughput import legged_throughput  # noqa: E402
from observer import main as observer_detection  # noqa: E402
from payload import payload_accuracy  # noqa: E402
from pinref import PinRef, random_state, robot_path  # noqa: E402

from rbd_ros.dynamics import (  # noqa: E402
    Data,
    Model,
    aba,
    aba_batch,
    crba,
    crba_batch,
    load_urdf,
    rnea,
    rnea_batch,
)
from rbd_ros.dynamics.multibody.configuration import quat_matrix  # noqa: E402
from rbd_ros.dynamics.multibody.spatial import JOINT_FREE  # noqa: E402

ROBOTS = {  # label -> (URDF, free flyer)
    "panda (7 arm + 2 finger joints, 1 mimic)": (robot_path("panda"), False),
    "talos full, free flyer (nv 50, 12 mimic)": (robot_path("talos"), True),
    "talos reduced, free flyer (nv 38, no mimic)": (
        str(Path(robot_path("talos")).with_name("talos_reduced.urdf")), True),
}


DATA = Path(robot_path("panda")).parents[2]  # example-robot-data's robots
PER_CALL_ROBOTS = {  # the batch robots and more: small arms, where a call's overhead shows
    "ur10 (6 joints)": (str(DATA / "ur_description" / "urdf" / "ur10_robot.urdf"), False),
    "xarm7 (7 joints, no gripper)": (str(DATA / "xarm_description" / "urdf" / "xarm7.urdf"),
                                     False),
    **ROBOTS,
    "g1 29 dof, free flyer (nv 35)": (
        str(DATA / "g1_description" / "urdf" / "g1_29dof_rev_1_0.urdf"), True),
}
Row = tuple[str, str, float, float, float | str]  # robot, algo, ours, pinocchio, dynibo


def dynibo_order(m: Model) -> list[int]:
    """dynibo numbers the joints breadth first (by depth in the tree, then as the URDF lists
    them): for each of its joint slots, the index of ours (found on g1 by matching mass
    matrices, then checked on every call below)."""
    depth = np.zeros(m.nb, dtype=int)
    for i, p in enumerate(m.parents):
        depth[i] = 0 if p < 0 else depth[p] + 1
    joints = [int(depth[i]) for i in range(m.nb) if m.joint_types[i] != JOINT_FREE]
    return sorted(range(len(joints)), key=joints.__getitem__)


def dynibo_calls(m: Model, path: str, q: np.ndarray, v: np.ndarray, a: np.ndarray,
                 tau: np.ndarray) -> dict[str, Callable[[], object]] | str:
    """dynibo's rnea, aba and crba on the same state, each checked against ours first (dynibo
    takes g = 9.80665), or why there are none.

    A floating base is its BaseState: the base's pose, its origin's velocity and (classical)
    acceleration and its angular ones, all in world axes; its generalized coordinates are
    [angular; linear] in world axes (the wrench: the torque about the base's origin), then the
    joints in :func:`dynibo_order`. Ours (Pinocchio's): [linear; angular] in the base's axes,
    the spatial acceleration."""
    try:
        import dynibo
    except ImportError:
        return "not installed"
    try:
        kind = dynibo.FloatingRobot if m.has_free_flyer else dynibo.Robot
        robot: Any = kind.from_urdf(path)  # untyped (a compiled extension)
    except dynibo.DyniboError as e:
        return "(mimic)" if "mimic" in str(e) else "(refuses)"  # said in full below
    if robot.generalized_count != m.nv:
        return f"{robot.generalized_count} coordinates, ours {m.nv}"
    same = m.with_gravity([0.0, 0.0, -9.80665])
    d = Data(same)
    ours = {"rnea": rnea(same, d, q, v, a), "aba": aba(same, d, q, v, tau),
            "crba": crba(same, d, q)}
    n, k = m.nv, 6 if m.has_free_flyer else 0
    J = k + np.array(dynibo_order(m))
    T = np.zeros((n, n))  # ours v = T (dynibo's)
    T[J, np.arange(k, n)] = 1.0
    if k:
        R = quat_matrix(q[3:7])
        T[:3, 3:6] = T[3:6, :3] = R.T

        def twist(lin: np.ndarray, ang: np.ndarray) -> Any:
            return dynibo.Twist(angular=tuple(R @ ang), linear=tuple(R @ lin))

        vb, wb = v[:3], v[3:6]
        pose = dynibo.Pose(translation=tuple(q[:3]), rotation_xyzw=tuple(q[3:7]))
        # the origin's classical acceleration: the spatial one plus w x v (base axes)
        base = dynibo.BaseState(frame=pose, velocity=twist(vb, wb),
                                acceleration=twist(a[:3] + np.cross(wb, vb), a[3:6]))
        rest = dynibo.BaseState(frame=pose, velocity=twist(vb, wb))
    Ti = T.T  # T is orthogonal: dynibo's generalized vector from ours
    qj, vj, aj = q[m.nq - (n - k):][J - k], (Ti @ v)[k:], (Ti @ a)[k:]
    taud = Ti @ tau
    out_v, out_m = np.empty(n), np.empty(n * n)
    calls: dict[str, Callable[[], object]] = {  # each as a user would call it
        "rnea": lambda: robot.inverse_dynamics(qj, vj, aj, out=out_v),
        "aba": lambda: robot.forward_dynamics(qj, vj, taud, out=out_v),
        "crba": lambda: robot.mass_matrix(qj, out=out_m),
    } if not k else {
        "rnea": lambda: robot.inverse_dynamics(base, qj, vj, aj, out=out_v),
        "aba": lambda: robot.forward_dynamics(rest, qj, vj, taud, out=out_v),
        "crba": lambda: robot.mass_matrix(base, qj, out=out_m),
    }
    want = {"rnea": Ti @ ours["rnea"], "crba": Ti @ ours["crba"] @ T,
            "aba": Ti @ ours["aba"]}
    if k:  # dynibo's base acceleration is the origin's classical one (world axes)
        want["aba"][3:6] += R @ np.cross(v[3:6], v[:3])
    for algo, call in calls.items():
        got = np.array(call()).reshape(want[algo].shape, order="F")
        if not np.allclose(got, want[algo], rtol=1e-9, atol=1e-9):
            return f"{algo} differs by {np.abs(got - want[algo]).max():.1e}"
    return calls


def best(f: Callable[[], object], number: int, repeat: int = 5) -> float:
    """Best time of one call, in microseconds."""
    return min(timeit.repeat(f, number=number, repeat=repeat)) / number * 1e6


def table(title: str, rows: list[tuple[str, str, float, float]]) -> None:
    print(title)
    print(f"{'robot':<46} {'algo':<5} {'rbd_ros':>9} {'pinocchio':>10} {'ratio':>7}")
    for label, algo, t_o, t_p in rows:
        print(f"{label:<46} {algo:<5} {t_o:9.2f} {t_p:10.2f} {t_o / t_p:6.2f}x")


def peers_table(title: str, rows: list[Row]) -> None:
    """Ours, Pinocchio's and dynibo's (or why none), and ours over the faster peer's."""
    print(title)
    print(f"{'robot':<46} {'algo':<5} {'rbd_ros':>9} {'pinocchio':>10} {'dynibo':>10} "
          f"{'/ fastest':>9}")
    for label, algo, t_o, t_p, t_d in rows:
        fastest = min(t_p, t_d) if isinstance(t_d, float) else t_p
        dyn = f"{t_d:10.2f}" if isinstance(t_d, float) else f"{t_d:>10}"
        print(f"{label:<46} {algo:<5} {t_o:9.2f} {t_p:10.2f} {dyn:>10} {t_o / fastest:8.2f}x")
    print("   dynibo: (mimic) it refuses the URDF: 'joint ... uses an unsupported mimic "
          "constraint'")


def per_call_robot(label: str, path: str, ff: bool, n: int) -> list[Row]:
    m = load_urdf(path, floating_base=ff)
    d = Data(m)
    ref = PinRef(m, path, ff)
    pm, pd, G = ref.pm, ref.pd, ref.G
    q, v, a, tau = random_state(m, np.random.default_rng(0))
    qp, vp, ap, tp = ref.q(q), G @ v, G @ a, G @ tau

    def reduced_solve() -> None:
        """The exact mimic answer Pinocchio can give: (G^T M G) qdd = G^T (tau_p - h)."""
        M = pin.crba(pm, pd, qp)
        M = np.triu(M) + np.triu(M, 1).T
        h = pin.nonLinearEffects(pm, pd, qp, vp)
        np.linalg.solve(G.T @ M @ G, tau - G.T @ h)

    cases: list[tuple[str, Callable[[], object], Callable[[], object]]] = [
        ("rnea", lambda: rnea(m, d, q, v, a), lambda: pin.rnea(pm, pd, qp, vp, ap)),
        ("aba", lambda: aba(m, d, q, v, tau), lambda: pin.aba(pm, pd, qp, vp, tp)),
        ("crba", lambda: crba(m, d, q), lambda: pin.crba(pm, pd, qp)),
    ]
    if m.mimic_joint_names:
        cases.append(("aba*", lambda: aba(m, d, q, v, tau), reduced_solve))
    dyn = dynibo_calls(m, path, q, v, a, tau)
    out: list[Row] = []
    for algo, ours, theirs in cases:
        ours()
        other: float | str = best(dyn[algo], n) if isinstance(dyn, dict) and algo in dyn \
            else (dyn if isinstance(dyn, str) else "-")
        out.append((label, algo, best(ours, n), best(theirs, n), other))
    return out


def per_call(quick: bool) -> None:
    n = 2000 if quick else 20000
    rows = [r for label, (path, ff) in PER_CALL_ROBOTS.items()
            for r in per_call_robot(label, path, ff, n)]
    peers_table("\n## Per call, one state (us); Pinocchio 4.1 and dynibo 0.5.2 through their "
                "Python APIs on the same\n   state, outputs into reused arrays where they take "
                "them (Pinocchio's ABA treats mimic joints\n   as independent; aba* = mimic "
                "exact on both sides, Pinocchio by the reduced mass-matrix solve\n   the tests "
                "compare against)", rows)


def batched_robot(label: str, path: str, ff: bool, B: int) -> list[tuple[str, str, float, float]]:
    m = load_urdf(path, floating_base=ff)
    ref = PinRef(m, path, ff)
    pm, pd = ref.pm, ref.pd
    rng = np.random.default_rng(1)
    Q, V, A, T = (np.array(x) for x in zip(*(random_state(m, rng) for _ in range(B)),
                                           strict=True))
    QP = np.array([ref.q(q) for q in Q])
    VP, AP, TP = V @ ref.G.T, A @ ref.G.T, T @ ref.G.T

    def loop(fn: Callable[..., object], *arrays: np.ndarray) -> Callable[[], None]:
        def run() -> None:
            for row in zip(*arrays, strict=True):
                fn(pm, pd, *row)
        return run

    out_v, out_m = np.empty((B, m.nv)), np.empty((B, m.nv, m.nv))
    cases: list[tuple[str, Callable[[], object], Callable[[], object]]] = [
        ("rnea", lambda: rnea_batch(m, Q, V, A, out=out_v), loop(pin.rnea, QP, VP, AP)),
        ("aba", lambda: aba_batch(m, Q, V, T, out=out_v), loop(pin.aba, QP, VP, TP)),
        ("crba", lambda: crba_batch(m, Q, out=out_m), loop(pin.crba, QP)),
    ]
    out = []
    for algo, ours, theirs in cases:
        ours()
        out.append((label, algo, best(ours, 1, 10) / B, best(theirs, 1, 10) / B))
    return out


def batched(quick: bool) -> None:
    B = 2000 if quick else 10000
    rows = [r for label, (path, ff) in ROBOTS.items() for r in batched_robot(label, path, ff, B)]
    table(f"\n## Batch of B = {B} states: time per state (us); rbd_ros *_batch (compiled, "
          f"{os.cpu_count()} cores,\n   writing into a reused output array) vs Pinocchio called "
          "in a Python loop", rows)


def contact_split(quick: bool) -> None:
    """contacts.solve in process, one state per call, the QP every state; and the same through
    a kept Split (its arrays made once), the floating-base node's work on each message."""
    from rbd_ros.dynamics.contact.contacts import Contact, Split, solve
    from rbd_ros.robots import QUADRUPED

    soles = [Contact(f"{side}_sole_link", half_length=0.1, half_width=0.05)
             for side in ("left", "right")]
    cases: list[tuple[str, str | Path, list[Contact]]] = [
        ("talos full, two soles", robot_path("talos"), soles),
        ("bundled quadruped, four point feet", QUADRUPED,
         [Contact(f"{leg}_foot") for leg in ("LF", "RF", "LH", "RH")]),
        ("bundled quadruped, a trot's stance pair", QUADRUPED,
         [Contact("LF_foot"), Contact("RH_foot")])]
    print("\n## Contact split, one state per call (us): contacts.solve (the base's wrench, the "
          "placements,\n   the QP, the wrenches, the joint torques), standing still; a kept "
          "Split (the node's)")
    print(f"  {'':<40} {'solve':>7} {'Split':>7}")
    for label, path, contacts in cases:
        m = load_urdf(path, floating_base=True)
        d = Data(m)
        q, z = m.neutral(), np.zeros(m.nv)
        assert solve(m, d, q, z, z, contacts, 0.7).feasible
        n = 500 if quick else 5000
        t = best(functools.partial(solve, m, d, q, z, z, contacts, 0.7), n)
        kept = best(functools.partial(Split(m, contacts, 0.7), d, q, z, z), n)
        print(f"  {label:<40} {t:7.1f} {kept:7.1f}")


FIRST_CALL = textwrap.dedent("""
    import time
    t0 = time.perf_counter()
    import numpy as np
    from rbd_ros.dynamics import Data, aba, crba, load_urdf, rnea
    from rbd_ros.robots import ARM
    m = load_urdf(ARM)
    t1 = time.perf_counter()
    d = Data(m)
    z = np.zeros(m.nv)
    rnea(m, d, z, z, z); aba(m, d, z, z, z); crba(m, d, z)
    t2 = time.perf_counter()
    print(f"{t1 - t0:.3f} {t2 - t1:.3f}")
""")


def first_call() -> None:
    print("\n## First call (s): import + model load, then a Data (its handle loads the per-call "
          "kernels) and the\n   first rnea + aba + crba; and the dynamics node's first answer "
          "after its process starts\n   (bundled arm, states sent every 10 ms)")
    with tempfile.TemporaryDirectory() as empty, tempfile.TemporaryDirectory() as filled:
        t = time.perf_counter()
        subprocess.run([sys.executable, "-m", "rbd_ros.app.numba_cache"], check=True,
                       env=dict(os.environ, NUMBA_CACHE_DIR=filled), capture_output=True)
        fill = time.perf_counter() - t
        for label, cache in (("new process, empty numba cache (compiles)", empty),
                             ("second process, numba cache filled by the first", empty),
                             ("cache filled at install (rbd_ros.app.numba_cache)", filled)):
            out = subprocess.run([sys.executable, "-c", FIRST_CALL], text=True, check=True,
                                 env=dict(os.environ, NUMBA_CACHE_DIR=cache),
                                 capture_output=True).stdout.split()
            print(f"  {label:<52} import+load {float(out[0]):6.3f}   first calls "
                  f"{float(out[1]):7.3f}")
        with tempfile.TemporaryDirectory() as cold:
            print(f"  dynamics node, first answer: empty cache {first_answer(cold):6.2f} s, "
                  f"cache filled at install {first_answer(filled):5.2f} s "
                  f"(filling it took {fill:.0f} s)")


def machine() -> str:
    """What a recorded run was measured on: date, CPU, the versions of everything compared."""
    from importlib.metadata import version

    import numba

    cpu = next((line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text()
                .splitlines() if line.startswith("model name")), "unknown CPU")
    return (f"rbd_ros benchmarks, {time.strftime('%Y-%m-%d %H:%M %Z')}, {cpu}, "
            f"{os.cpu_count()} cores; Python {sys.version.split()[0]}, numpy {np.__version__}, "
            f"numba {numba.__version__}, pinocchio {pin.__version__}, "
            f"dynibo {version('dynibo')}, ROS 2 {os.environ.get('ROS_DISTRO') or distro()} wheels")


def distro() -> str:
    """The ROS 2 distribution whose wheels this environment holds (rclpy's package name)."""
    from importlib.metadata import distributions

    names = {d.metadata["Name"] or "" for d in distributions()}
    return next((n.split("-")[1] for n in sorted(names) if n.startswith("ros-") and
                 n.endswith("-rclpy")), "unknown")


def trajectory_tracking() -> None:
    """The trajectory controller's tracking on MuJoCo's arms, in one process and over ROS
    (MuJoCo: a bench dependency only)."""
    print("\n# Trajectory tracking on MuJoCo (bench/tracking.py, bench/control_loop.py)")
    try:
        import mujoco  # noqa: F401
    except ImportError:
        print("(not run: MuJoCo is a bench dependency: .venv/bin/python -m pip install -r "
              "requirements-bench.txt)")
        return
    from control_loop import control_loop
    from tracking import tracking_table

    print("\n".join(tracking_table()))
    control_loop()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="fewer repeats and states")
    args = parser.parse_args()
    t0 = time.time()
    print(machine())
    first_call()
    per_call(args.quick)
    contact_split(args.quick)
    batched(args.quick)
    latency(3000 if args.quick else 15000)
    floating_latency(1500 if args.quick else 2500)
    stale_stop(trials=3 if args.quick else 10)
    bag_throughput(6.0 if args.quick else 60.0)
    legged_throughput(4.0 if args.quick else 20.0)
    print("\n# Collision detection (bench/observer.py)")
    sys.argv = [sys.argv[0], "--seconds", "20" if args.quick else "60"]
    observer_detection()
    print("\n# Collision thresholds from free motion on a wrong model (bench/collisions.py; "
          "the real arms with --ur10e, --gen3, --doosan)")
    from rbd_ros.robots import ARM

    simulated_collisions(ARM, 20.0 if args.quick else 60.0)
    payload_accuracy((5.0, 20.0) if args.quick else (5.0, 10.0, 20.0, 40.0))
    contact_estimation(2.5 if args.quick else 5.0)
    excitation_quality()
    trajectory_tracking()
    from limits import check_speed

    print("\n# Trajectories against the limits (bench/limits.py)")
    print("\n".join(check_speed()))
    print(f"\n(done in {time.time() - t0:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
