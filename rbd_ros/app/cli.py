"""The ``rbd-ros`` command. Every subcommand prints ``error: ...`` and exits 2 on bad input."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

# BLAS on one thread (before numpy loads OpenBLAS): the offline tools' matrices are small, and
# a second BLAS thread on a busy 2-core machine made identify's consistent fit 20 times slower
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

from ..bag.errors import BagError, OutputError, missing_extra
from ..dynamics import Data, RbdError, gravity, load_urdf
from ..dynamics.estimation.observer import COLLISION_RELEASE, DEFAULT_GAIN
from ..identify.excite import TOPIC
from ..robots import ARM, QUADRUPED

if TYPE_CHECKING:
    from ..bag.analyze import AnalyzeOptions
    from ..bag.legged import LeggedOptions

BUNDLED = {"arm": ARM, "quadruped": QUADRUPED}
#: a bent "ready" pose of the bundled arm, so that gravity loads several joints
SCALE = ("recorded efforts that are not torques, times K become them: a driver that reports "
         "motor currents (K in N m per A at the joint: the controller's desired torque over "
         "its desired current, or the datasheet's torque constant times the gear ratio)")
ARM_READY = [0.0, 0.6, 0.0, -1.2, 0.0, 0.9, 0.0]


def _info(args: argparse.Namespace) -> int:
    path = BUNDLED.get(args.urdf, args.urdf)
    floating = args.floating_base or args.urdf == "quadruped"
    model = load_urdf(path, floating_base=floating, strict=args.strict)
    data = Data(model)
    q = model.neutral()
    if args.urdf == "arm":
        q[:] = ARM_READY
    print(model.summary())
    tau = gravity(model, data, q)
    print("\ngravity torques at " + ("the ready pose" if args.urdf == "arm" else "q = neutral"))
    joints = [j for j in model.joints if j.idx_v >= 0 and j.kind != "floating"]
    names = (["base_fx", "base_fy", "base_fz", "base_tx", "base_ty", "base_tz"]
             if model.has_free_flyer else []) + [j.name for j in joints]
    units = (["N"] * 3 + ["N m"] * 3 if model.has_free_flyer else []) + \
        ["N" if j.kind == "prismatic" else "N m" for j in joints]
    for name, t, unit in zip(names, tau, units, strict=True):
        print(f"  {name:<24s} {t:+12.4f} {unit}")
    return 0


def _demo(args: argparse.Namespace) -> int:
    from .demo import run, run_quadruped

    return run_quadruped() if args.robot == "quadruped" else run(args.seconds, args.plot)


def _node_parameters(args: argparse.Namespace) -> dict[str, Any]:
    """The observer's and the collision flags' settings: the dynamics node's parameters file
    (``--params``), or the options that stand for them (not both)."""
    from ..bag.analyze import node_parameters

    given = {"observer_gain": args.observer_gain, "friction": args.friction or None,
             "joints": args.command_joints,
             "collision_thresholds": args.collision_thresholds or None}
    if args.params is None:
        return {k: v for k, v in given.items() if v is not None}
    params = node_parameters(args.params)
    both = [k for k, v in given.items() if v is not None and k in params]
    if both:
        raise BagError(f"--params {args.params} sets {', '.join(both)}: give "
                       f"{'them' if len(both) > 1 else 'it'} there or as options, not both")
    kinds = {"observer_gain": float, "collision_release": float, "friction": bool}
    out = {k: v for k, v in given.items() if v is not None}
    for k, v in params.items():
        kind = kinds.get(k)
        try:
            out[k] = kind(v) if kind else [str(x) if k.endswith("joints") else float(x)
                                           for x in v]
        except (TypeError, ValueError):
            raise BagError(f"--params {args.params}: {k} cannot be {v!r}") from None
    return out


def _analyze(args: argparse.Namespace) -> int:
    from ..bag.analyze import AnalyzeOptions, analyze
    from ..bag.fleet import find_recordings
    from ..bag.legged import floating_base_parameters

    legged = floating_base_parameters(args.params) if args.params else None
    if legged is not None or args.odom_topic:
        return _analyze_legged(args, legged or {})
    node = _node_parameters(args)
    opts = AnalyzeOptions(urdf=args.urdf, joint_states_topic=args.joint_states_topic,
                   command_topic=args.command_topic, command_joints=node.get("joints"),
                   filter=args.filter, friction=node.get("friction", False),
                   progress=not args.quiet,
                   observer_gain=node.get("observer_gain", DEFAULT_GAIN),
                   collision_joints=tuple(node.get("collision_joints", ())),
                   collision_thresholds=tuple(node.get("collision_thresholds", ())),
                   collision_thresholds_moving=tuple(node.get("collision_thresholds_moving",
                                                              ())),
                   collision_thresholds_per_speed=tuple(
                       node.get("collision_thresholds_per_speed", ())),
                   collision_release=node.get("collision_release", COLLISION_RELEASE),
                   outputs=AnalyzeOptions.outputs + ("csv",) * args.csv,
                   rename=tuple(args.rename), hold=_values(args.hold, "--hold"),
                   effort_scale=_values(args.effort_scale, "--effort-scale"))
    work = find_recordings([Path(b) for b in args.bags])
    if len(work) == 1 and not args.scheduler:  # one recording: its outputs in --out itself
        summary = analyze([work[0][0]], args.out, opts)
        print(summary.text())
        _warn_skipped(work[0][0], summary.skipped)
        if not summary.messages:
            print(f"error: {work[0][0]}: no joint state could be analysed", file=sys.stderr)
            return 1
        return 0
    return _fleet(work, args, opts)


def _fleet(work: list[tuple[Path, str]], args: argparse.Namespace,
           opts: AnalyzeOptions | LeggedOptions) -> int:
    """Several recordings, each into a folder of its own: their summaries and a table."""
    from ..bag.fleet import analyze_fleet, status_table
    from ..bag.stream import Summary

    results = analyze_fleet(work, args.out, opts, args.jobs, args.scheduler,
                            args.scheduler_timeout)
    for r in results:
        if r.summary is not None:
            print(f"{r.bag}:\n{r.summary.text()}\n")
            if isinstance(r.summary, Summary):
                _warn_skipped(r.bag, r.summary.skipped)
    print(status_table(results))
    failed = [r for r in results if not r.ok]
    if failed:
        print(f"error: {len(failed)} of {len(results)} recordings failed: "
              + ", ".join(r.name for r in failed), file=sys.stderr)
    return 1 if failed else 0


def _analyze_legged(args: argparse.Namespace, params: dict[str, Any]) -> int:
    """A legged robot's recording: the floating-base node's answers, state by state."""
    from ..bag.fleet import find_recordings
    from ..bag.legged import LeggedOptions, analyze_legged

    arm_only = [f"--{k.replace('_', '-')}" for k in ("command_topic", "command_joints",
                                                     "observer_gain", "scheduler")
                if getattr(args, k)] + ["--collision-thresholds"] * bool(
                    args.collision_thresholds) + ["--csv"] * args.csv
    if arm_only:
        raise BagError(f"{', '.join(arm_only)}: for a fixed-base robot's recording, not a "
                       "legged one's (--params names the floating-base node)")
    work = find_recordings([Path(b) for b in args.bags])
    try:
        opts = LeggedOptions.from_parameters(
            params, urdf=args.urdf, joint_states_topic=args.joint_states_topic,
            odom_topic=args.odom_topic or "/odom", imu_topic=args.imu_topic,
            active_contacts_topic=args.active_contacts_topic,
            rename=tuple(args.rename),
            hold=_values(args.hold, "--hold"),
            effort_scale=_values(args.effort_scale, "--effort-scale"))
    except TypeError as e:
        raise BagError(f"--params {args.params}: {e}") from None
    if len(work) > 1:
        return _fleet(work, args, opts)
    summary = analyze_legged([work[0][0]], args.out, opts)
    print(summary.text())
    if not summary.messages:
        print(f"error: {work[0][0]}: no joint state could be analysed", file=sys.stderr)
        return 1
    return 0


def _warn_skipped(bag: Path, skipped: list[tuple[int, int]]) -> None:
    if skipped:
        print(f"warning: {bag}: {len(skipped)} unreadable joint_states messages skipped (see "
              "summary.txt)", file=sys.stderr)


def _values(items: list[str], option: str) -> dict[str, float]:
    from ..wire.joint_names import NameMap

    try:
        return NameMap.parse_values(items, option)
    except ValueError as e:
        raise BagError(str(e)) from None


def _positive(text: str) -> float:
    try:
        x = float(text)
    except ValueError:
        x = float("nan")
    if not x > 0 or x == float("inf"):
        raise argparse.ArgumentTypeError(f"a positive number is needed, got {text!r}")
    return x


def _identify(args: argparse.Namespace) -> int:
    from ..identify.run import IdentifyOptions, identify

    opts = IdentifyOptions(urdf=args.urdf, joint_states_topic=args.joint_states_topic,
                   rename=tuple(args.rename), hold=_values(args.hold, "--hold"),
                   effort_scale=_values(args.effort_scale, "--effort-scale"), cutoff=args.cutoff,
                   holdout=args.holdout, start=args.start, end=args.end,
                   drive=args.drive, ignore_efforts=tuple(args.ignore_efforts))
    bags = [Path(b) for b in args.bags]
    validate = [Path(b) for b in args.validate] if args.validate else None
    if args.payload:
        from ..identify.payload import identify_payload

        baseline = [Path(b) for b in args.baseline] if args.baseline else None
        print(identify_payload(bags, args.out, opts, args.payload, validate, baseline)[1])
        print(f"written: {args.out / 'report.txt'}, payload.yaml")
        return 0
    if args.baseline:
        raise BagError("--baseline is for --payload: the same motion without the load")
    report = identify(bags, args.out, opts, validate)
    print(report.text)
    print(f"written: {args.out / 'identified.urdf'}, report.txt, torques.png")
    return 0


def _excite(args: argparse.Namespace) -> int:
    import shutil

    import numpy as np

    from ..identify.excite import Limits, excite, limits_used, trajectory_bag, trajectory_yaml

    model = load_urdf(BUNDLED.get(args.urdf, args.urdf))
    print(f"optimising {args.harmonics} harmonics of a {args.period:g} s period for "
          f"{model.name} (seconds to a minute)...", flush=True)
    found = excite(model, args.period, args.harmonics, args.acceleration, args.seed)
    names = [model.state_joint_names[r] for r in range(model.nv)]
    dense = np.arange(0.0, args.period, 1e-3)
    used = limits_used(model, Limits.of(model, args.acceleration), found.trajectory, dense)
    args.out.mkdir(parents=True, exist_ok=True)
    path = args.out / "trajectory.yaml"
    path.write_text(trajectory_yaml(
        names, found.trajectory, args.rate, args.periods, 3.0,
        f"trajectory_msgs/JointTrajectory: rbd-ros excite {args.urdf}, {args.periods} x "
        f"{args.period:g} s, condition number {found.condition:.1f}"))
    print(f"condition number of the base regressor over a period: {found.condition:.1f} "
          f"(a plain multi-sine in the same limits: {found.multisine_condition:.1f})")
    print(f"{'joint':<24} {'position':>9} {'velocity':>9} {'accel.':>9} {'effort':>9}  "
          "(largest fraction of each limit, every 1 ms)")
    for n, u in zip(names, used.T, strict=True):
        print(f"{n:<24} " + " ".join(f"{x:9.2f}" for x in u))
    bag = args.out / "trajectory_bag"
    if (bag / "metadata.yaml").exists():  # the last run's
        shutil.rmtree(bag)
    trajectory_bag(bag, names, found.trajectory, args.rate, args.periods, 3.0, args.topic)
    print(f"written: {path} ({args.periods} periods at {args.rate:g} Hz, the first point 3 s "
          f"in), and the same message on {args.topic} in {bag} (rbd-ros replay {bag} "
          "--wait-for joint_trajectory_controller sends it)")
    return 0


def _check(args: argparse.Namespace) -> int:
    """Each trajectory's efforts and speeds against the URDF's limits; 1 when any is over."""
    import numpy as np

    from ..bag.trajectories import read_trajectories
    from ..dynamics.control import Spline
    from ..dynamics.control.limits import check_limits

    model = load_urdf(BUNDLED.get(args.urdf, args.urdf))
    if (args.payload is None) != (args.payload_link is None):
        raise BagError("--payload and --payload-link go together: the payload's 10 numbers "
                       "and the link it is fixed to")
    if args.payload is not None:
        model = model.with_payload(args.payload_link, args.payload)
    names = model.state_joint_names
    at = _values(args.start, "--start")
    unknown = sorted(set(at) - set(names))
    if unknown:
        raise BagError(f"--start {unknown}: the URDF has no such joints; its joints: {names}")
    rest = np.array([min(max(0.0, model.joint(n).lower), model.joint(n).upper) for n in names])
    over = 0
    for k, traj in enumerate(read_trajectories(args.trajectory, args.topic)):
        missing = [n for n in traj.names if n not in names]
        if missing:
            raise BagError(f"{traj.source}: joints {missing} are not in the URDF; its joints: "
                           f"{names}")
        joints = np.array([names.index(n) for n in traj.names], dtype=np.int64)
        start = rest.copy()
        start[joints] = traj.positions[0]  # at rest at its first point, unless --start says
        for n, x in at.items():
            start[names.index(n)] = x
        spline = Spline(traj.times_ns, traj.positions, traj.velocities, traj.accelerations,
                        (start[joints], np.zeros(joints.size), np.zeros(joints.size)))
        check = check_limits(model, spline, joints, start, round(args.step * 1e9))
        held = [f"{n}={start[j]:g}" for j, n in enumerate(names) if j not in joints]
        print(f"{traj.source}: {len(traj.times_ns)} points over {spline.duration_ns * 1e-9:.3f}"
              f" s, checked at {check.times_ns.size} samples every {args.step * 1e3:g} ms"
              f"{f'; held at rest: {held}' if held else ''}")
        print("\n".join(check.table()))
        first = check.first_over(args.share)
        over += bool(first)
        share = f"{args.share:.0%} of " if args.share != 1.0 else ""
        print(f"over: {first}" if first else f"within {share}every effort and velocity limit")
        if args.plot:  # the second trajectory's picture: NAME_1.png, and so on
            plot = args.plot.with_stem(f"{args.plot.stem}_{k}") if k else args.plot
            _plot_check(check, args.share, plot, traj.source)
            print(f"drawn: {plot}")
    return 1 if over else 0


def _plot_check(check: Any, share: float, path: Path, title: str) -> None:
    """Each joint's effort and speed as fractions of its limits over time."""
    from ..bag.plotting import pyplot

    plt = pyplot()
    t = check.times_ns * 1e-9
    fig, axes = plt.subplots(2, 1, sharex=True, figsize=(9, 6))
    for ax, x, limit, what in ((axes[0], check.efforts, check.effort_limit, "effort"),
                               (axes[1], check.velocities, check.velocity_limit, "velocity")):
        for j, n in enumerate(check.names):
            ax.plot(t, x[:, j] / limit[j], lw=1, label=n)
        for y in (share, -share):
            ax.axhline(y, color="k", lw=0.8, ls="--")
        ax.set_ylabel(f"{what} / URDF limit")
    axes[0].set_title(title, fontsize=9)
    axes[0].legend(fontsize=7, ncol=4)
    axes[1].set_xlabel("s from the trajectory's start")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def _replay(args: argparse.Namespace) -> int:
    from ..bag.replay import Playback, replay

    _, _, stopped = replay([Path(b) for b in args.bags], Playback(
        rate=args.rate, clock=args.clock, topics=args.topics, start_delay=args.delay,
        wait_for=args.wait_for, wait_timeout=args.wait_timeout, max_gap=args.max_gap,
        loop=args.loop, start_offset=args.start_offset, duration=args.playback_duration,
        start_paused=args.start_paused, progress=args.progress, ros_args=args.ros_args))
    return 128 + stopped if stopped else 0


class _Defaults(argparse.HelpFormatter):
    """Help that says each option's default, where it has one (not None, False or empty) and
    its text does not say it already."""

    def _get_help_string(self, action: argparse.Action) -> str:
        text = action.help or ""
        default = action.default
        none = default is None or default is False or default is argparse.SUPPRESS or (
            isinstance(default, list | tuple) and not default)
        if action.option_strings and not none and "default" not in text:
            shown = " ".join(map(str, default)) if isinstance(default, list | tuple) else default
            text += f" (default: {shown})".replace("%", "%%")
        return text


class _Exact(argparse.ArgumentParser):
    """A parser that takes whole option names only: a mistyped or shortened option is an
    error, never another option (``--hold`` read as ``--holdout``); its help says each
    option's default."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(allow_abbrev=False, formatter_class=_Defaults, **kwargs)


def parser() -> argparse.ArgumentParser:
    """The command line: each command with its options (the docs' reference is made from it)."""
    cli = _Exact(prog="rbd-ros", description=__doc__)
    sub = cli.add_subparsers(dest="command", parser_class=_Exact)
    for add in (_demo_options, _info_options, _analyze_options, _identify_options,
                _excite_options, _check_options, _replay_options):
        add(sub)
    return cli


def _recording_options(p: argparse.ArgumentParser, out: str) -> None:
    """What analyze and identify both take: the URDF, the output folder, the joint states'
    topic, and how recorded joints map to the model's."""
    p.add_argument("--urdf", type=Path, help="URDF file (default: /robot_description in the bag)")
    p.add_argument("--out", type=Path, default=Path(out), help="output folder")
    p.add_argument("--joint-states-topic", default="/joint_states",
                   help="the recording's sensor_msgs/JointState topic")
    p.add_argument("--rename", nargs="+", default=[], metavar="OLD=NEW",
                   help="recorded joint names -> the URDF's; a trailing * maps a prefix: "
                        "--rename 'fer_*=panda_*'")
    p.add_argument("--hold", nargs="+", default=[], metavar="NAME=POSITION",
                   help="joints the recording lacks (a gripper), held at this position")
    p.add_argument("--effort-scale", nargs="+", default=[], metavar="NAME=K", help=SCALE)


def _demo_options(sub: Any) -> None:
    demo = sub.add_parser("demo", help="the live demo (the default): simulator, dynamics node "
                                       "and a PD controller with and without feed-forward")
    demo.add_argument("--seconds", type=float, default=4.0, help="length of each run")
    demo.add_argument("--plot", type=Path, metavar="PNG",
                      help="also draw both runs' tracking errors into this picture (arm)")
    demo.add_argument("--robot", choices=("arm", "quadruped"), default="arm",
                      help="arm: computed-torque feed-forward (the default); quadruped: the "
                           "floating-base node's foot loads through a scripted sequence")
    demo.set_defaults(func=_demo)


def _info_options(sub: Any) -> None:
    info = sub.add_parser("info", help="load a URDF, print its model and gravity torques")
    info.add_argument("urdf", nargs="?", default="arm",
                      help="a URDF file, or a bundled robot: arm (default), quadruped")
    info.add_argument("--floating-base", action="store_true", help="add a free-flyer root")
    info.add_argument("--strict", action="store_true",
                      help="refuse inertias no solid body has (by default: loaded as given, "
                           "with a warning, as Pinocchio and KDL load them)")
    info.set_defaults(func=_info)


def _analyze_options(sub: Any) -> None:
    an = sub.add_parser("analyze", help="dynamics of recorded joint states (rosbag2: sqlite3 "
                                         "or MCAP), written as an MCAP bag, Parquet (CSV), PNG")
    an.add_argument("bags", nargs="+", help="recordings (rosbag2 folders, .mcap or .db3 files), "
                                            "or folders searched for them, recursively")
    _recording_options(an, "rbd_analysis")
    an.add_argument("--command-topic", help="commanded efforts: Float64MultiArray or JointState")
    an.add_argument("--command-joints", nargs="+",
                    help="joint order of a Float64MultiArray --command-topic (required for "
                         "one, unless --params gives `joints`)")
    an.add_argument("--filter", choices=("central", "backward"), default="central",
                    help="accelerations by zero-phase central or causal backward differences")
    an.add_argument("--friction", action="store_true", help="model the URDF's joint friction")
    an.add_argument("--observer-gain", type=_positive, metavar="K",
                    help="1/s: the dynamics node's observer_gain, for the residual per state "
                         "(tau_observer) and the collision_thresholds the summary gives "
                         f"(default {DEFAULT_GAIN:g}, the node's)")
    an.add_argument("--collision-thresholds", nargs="+", type=_positive, default=[],
                    metavar="T", help="the dynamics node's collision_thresholds (N m, in "
                                      "--command-joints' order, else the URDF's; --params "
                                      "can name them, collision_joints): its collision "
                                      "flags per state (the collision columns)")
    an.add_argument("--params", type=Path, metavar="FILE",
                    help="the dynamics node's parameters file (as for --params-file; "
                         "analyze writes one, collision_thresholds.yaml): its observer_gain, "
                         "friction, joints and collision_* for the residual and the flags; "
                         "or the floating-base node's (config/floating_base.yaml): a legged "
                         "robot's recording, analysed as that node answers it")
    an.add_argument("--odom-topic", metavar="TOPIC",
                    help="a legged robot's recording: its nav_msgs/Odometry (default /odom "
                         "when --params is the floating-base node's file, which makes the "
                         "recording a legged one)")
    an.add_argument("--imu-topic", default="/imu", metavar="TOPIC",
                    help="a legged robot's sensor_msgs/Imu, used when recorded")
    an.add_argument("--active-contacts-topic", default="/active_contacts", metavar="TOPIC",
                    help="a legged robot's rbd_ros_interfaces/ActiveContacts (its foot "
                         "sensors), used when recorded and estimate_contacts is false")
    an.add_argument("--csv", action="store_true",
                    help="also write the table as analysis.csv (text: about 1 KB and 5 us per "
                         "joint state; analysis.parquet holds the same table)")
    an.add_argument("--quiet", action="store_true", help="no progress bar")
    an.add_argument("--jobs", type=int, help="recordings analysed at once (default: all cores)")
    an.add_argument("--scheduler", help="a Dask scheduler address (tcp://host:8786): analyse "
                                        "the recordings on that cluster")
    an.add_argument("--scheduler-timeout", type=float, default=10.0, metavar="S",
                    help="how long to wait for the Dask scheduler, for a worker, and for a "
                         "worker to return when none is left")
    an.set_defaults(func=_analyze)


def _identify_options(sub: Any) -> None:
    idf = sub.add_parser("identify", help="inertial and friction parameters from a recording "
                                          "of the robot moving with its measured efforts: "
                                          "identified.urdf, report.txt, torques.png")
    idf.add_argument("bags", nargs="+", help="the recording (bag folders or files, read as one)")
    idf.add_argument("--validate", nargs="+", metavar="BAG",
                     help="a second recording to validate on (default: the last --holdout of "
                          "the first)")
    _recording_options(idf, "rbd_identify")
    idf.add_argument("--cutoff", type=float, default=10.0, metavar="HZ",
                     help="cut-off of the zero-phase low-pass filter on positions and efforts")
    idf.add_argument("--holdout", type=float, default=0.25,
                     help="fraction at the end of the recording (of its --start to --end) "
                          "kept for validation")
    idf.add_argument("--start", type=float, default=0.0, metavar="S",
                     help="identify from S seconds after the recording's first joint state")
    idf.add_argument("--end", type=float, metavar="S",
                     help="...up to S seconds after it (a length L from --start: START+L; "
                          "default: the recording's end)")
    idf.add_argument("--drive", action="store_true",
                     help="also fit each joint's effort scale and offset (effort = torque / k + "
                          "o: a motor current, a biased torque sensor); the first joint "
                          "measured sets the unit")
    idf.add_argument("--ignore-efforts", nargs="+", default=[], metavar="JOINT",
                     help="joints whose recorded efforts are not torques (not measured, a "
                          "unit nobody knows): their motion is used, their efforts are not. "
                          "Joints recorded without efforts are left out by themselves")
    idf.add_argument("--payload", metavar="LINK",
                     help="fit only a payload held by LINK (mass, centre of mass, inertia, in "
                          "LINK's frame), everything else at the URDF's values (give "
                          "identify's identified.urdf with --urdf); writes report.txt and "
                          "payload.yaml, the dynamics node's parameters for it")
    idf.add_argument("--baseline", nargs="+", metavar="BAG",
                     help="with --payload: a recording of the same motion without the load; "
                          "the payload's torques are then the loaded efforts less its efforts, "
                          "and the robot model's own error cancels")
    idf.set_defaults(func=_identify)


def _excite_options(sub: Any) -> None:
    ex = sub.add_parser("excite", help="an exciting trajectory for identify: a Fourier series "
                                       "optimised for the regressor's conditioning, within the "
                                       "joint limits")
    ex.add_argument("urdf", nargs="?", default="arm", help="URDF file, or 'arm' (bundled)")
    ex.add_argument("--out", type=Path, default=Path("rbd_excite"), help="output folder")
    ex.add_argument("--period", type=_positive, default=10.0, metavar="S",
                    help="seconds of one period of the Fourier series")
    ex.add_argument("--harmonics", type=int, default=5,
                    help="sines and cosines per joint, at 1 to this many times the base frequency")
    ex.add_argument("--acceleration", type=_positive, default=5.0, metavar="RAD_S2",
                    help="largest joint acceleration (URDFs give none)")
    ex.add_argument("--periods", type=int, default=3, help="periods written (run, average)")
    ex.add_argument("--rate", type=_positive, default=100.0, metavar="HZ",
                    help="points a second in the written trajectory")
    ex.add_argument("--seed", type=int, default=0, help="of the multi-sine it starts from")
    ex.add_argument("--topic", default=TOPIC,
                    help="the recording's topic: the joint trajectory controller's")
    ex.set_defaults(func=_excite)


def _check_options(sub: Any) -> None:
    ck = sub.add_parser("check", help="a joint trajectory's efforts (inverse dynamics with the "
                                      "URDF's friction and a payload) and speeds against the "
                                      "URDF's limits, along the motion a controller follows")
    ck.add_argument("trajectory", type=Path,
                    help="a trajectory_msgs/JointTrajectory as YAML or JSON (its fields, as "
                         "excite writes it), or a recording: its JointTrajectory messages")
    ck.add_argument("--urdf", required=True, help="URDF file, or 'arm' (bundled)")
    ck.add_argument("--topic", help="the recording's trajectory topic (default: every "
                                    "JointTrajectory topic)")
    ck.add_argument("--payload-link", metavar="LINK",
                    help="the link a payload is fixed to (with --payload)")
    ck.add_argument("--payload", type=float, nargs=10, metavar="X",
                    help="mass, centre of mass x y z, inertia ixx ixy ixz iyy iyz izz (kg, m, "
                         "kg m^2, in LINK's frame): the dynamics node's payload parameter")
    ck.add_argument("--start", nargs="+", default=[], metavar="NAME=POSITION",
                    help="where a joint is, at rest, when the trajectory starts (else at the "
                         "first point; a joint the trajectory does not name stays there: 0, "
                         "or the nearest limit)")
    ck.add_argument("--share", type=_positive, default=1.0, metavar="S",
                    help="the share of each limit allowed (0.9: 90 percent)")
    ck.add_argument("--step", type=_positive, default=1e-3, metavar="S",
                    help="seconds between samples (the points are sampled too)")
    ck.add_argument("--plot", type=Path, metavar="PNG",
                    help="draw each joint's effort and speed over its limits into this picture")
    ck.set_defaults(func=_check)


def _replay_options(sub: Any) -> None:
    rp = sub.add_parser("replay", help="publish a recording into the live ROS graph with its "
                                       "original timing")
    rp.add_argument("bags", nargs="+", help="bag folders or files (read as one recording)")
    rp.add_argument("--rate", type=float, default=1.0, help="speed factor (2: twice as fast)")
    rp.add_argument("--clock", type=float, nargs="?", const=40.0, default=0.0, metavar="HZ",
                    help="publish the recording's time on /clock, HZ times a second (40 when "
                         "no HZ is given), for nodes with use_sim_time")
    rp.add_argument("--loop", action="store_true", help="start again at the end, until Ctrl-C")
    rp.add_argument("--start-offset", type=float, default=0.0, metavar="S",
                    help="start S seconds after the recording's first message")
    rp.add_argument("--playback-duration", type=float, default=0.0, metavar="S",
                    help="replay S seconds of the recording (0: to its end)")
    rp.add_argument("--start-paused", action="store_true",
                    help="wait for a call to ~/resume or ~/toggle_paused (std_srvs/Trigger)")
    rp.add_argument("--progress", type=float, default=1.0, metavar="HZ",
                    help="progress lines a second on stderr, rewritten in place on a "
                         "terminal (0: none)")
    rp.add_argument("--topics", nargs="+", help="only these topics")
    rp.add_argument("--delay", type=float, default=1.0,
                    help="seconds to wait at most for every topic to have a subscriber")
    rp.add_argument("--wait-for", nargs="+", metavar="NODE",
                    help="start once these nodes (e.g. rbd_dynamics) subscribe to the replayed "
                         "joint states (to every topic, in a recording without them), whatever "
                         "else listens (instead of --delay)")
    rp.add_argument("--wait-timeout", type=float, default=60.0, metavar="S",
                    help="how long to wait for the --wait-for nodes before giving up")
    rp.add_argument("--max-gap", type=float, default=5.0,
                    help="recorded pauses longer than this (s) are skipped, with a note")
    rp.set_defaults(func=_replay)


def split_ros_args(argv: list[str]) -> tuple[list[str], list[str]]:
    """(our arguments, the ROS arguments): those after ``--ros-args`` (``-r from:=to`` ...), up
    to a ``--`` if there is one."""
    if "--ros-args" not in argv:
        return argv, []
    at = argv.index("--ros-args")
    rest = argv[at + 1:]
    end = rest.index("--") if "--" in rest else len(rest)
    return argv[:at] + rest[end + 1:], rest[:end]


def main(argv: Sequence[str] | None = None) -> int:
    cli = parser()
    argv, ros_args = split_ros_args(list(sys.argv[1:] if argv is None else argv))
    args = cli.parse_args(argv)
    if ros_args and args.command != "replay":
        cli.error("--ros-args: only `rbd-ros replay` takes ROS arguments")
    args.ros_args = ros_args
    if args.command is None:
        args = cli.parse_args(["demo"])
    try:
        return int(args.func(args))
    except KeyboardInterrupt:
        print(f"rbd-ros {args.command}: interrupted", file=sys.stderr)
        return 130
    except (RbdError, BagError, OutputError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    except ModuleNotFoundError as e:
        why = missing_extra(e)
        if why is None:
            raise
        print(f"error: rbd-ros {args.command}: {why}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
