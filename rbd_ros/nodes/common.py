"""What every rbd_ros node shares: parameters that may be unset, throttled warnings, QoS
profiles, stamps, and the console entry point."""

from __future__ import annotations

import contextlib
import gc
import importlib
import logging
import math
import os
import signal
import sys
import time
import traceback
from collections import deque
from collections.abc import Callable, Iterator
from typing import Any

import rclpy
from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus, KeyValue
from rclpy.exceptions import (
    NameValidationException,
    ParameterException,
    ParameterUninitializedException,
)
from rclpy.node import Node
from rclpy.parameter import Parameter
from rclpy.qos import DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy
from rclpy.signals import SignalHandlerOptions
from std_msgs.msg import String

from ..wire.errors import InputError
from ..wire.joint_names import NameMap
from ..wire.stamped import JointStateReader
from .health import DIAGNOSTICS_S, Health

#: the level on /diagnostics of each kind of problem (``NodeBase.report``); others: WARN
PROBLEM_LEVELS = {"stale": DiagnosticStatus.ERROR, "silent": DiagnosticStatus.ERROR,
                  "model": DiagnosticStatus.ERROR}

THROTTLE_S = 5.0
#: robot_description as robot_state_publisher publishes it
LATCHED = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE,
                     durability=DurabilityPolicy.TRANSIENT_LOCAL)
#: sensor streams (joint_states, odom, imu): the sensor-data profile's best effort and volatile,
#: with a history 20 deep where rclpy's keeps 5. At 1 kHz, 5 is a 5 ms stall of this process
#: (a busy machine's scheduler) and the oldest states are lost; 20 rides out 20 ms, and the
#: backlog after a stall is processed in ~0.1 ms a state.
#: outputs keep 1000 messages for their reliable subscribers: a subscriber that stalls (a Python
#: controller or a recorder on a busy machine) then loses nothing unless it falls 1 s behind at
#: 1 kHz (with 100, a lossless replay beside a busy process lost answers after a 0.1 s stall:
#: a reliable writer's full history drops its oldest message, acknowledged or not)
OUTPUT_DEPTH = 1000
#: a lossless replay's inputs (``joint_states_qos: reliable``) keep 10000 messages: a node whose
#: callbacks fall behind the player on a busy machine (its middleware's threads still take in
#: and acknowledge what arrives) answers every state unless it is 10 s behind at 1 kHz (with
#: 1000, a floating-base node fed 1 kHz joint states and odometry beside a suite in four
#: processes once lost 214 states in a row)
REPLAY_DEPTH = 10_000
SENSOR = QoSProfile(depth=20, history=HistoryPolicy.KEEP_LAST,
                    reliability=ReliabilityPolicy.BEST_EFFORT,
                    durability=DurabilityPolicy.VOLATILE)


#: the choices of ``joint_states_qos``: sensor data (SENSOR, for a live robot) or reliable (a
#: lossless replay: ``rbd-ros replay --wait-for``), for each sensor stream a node reads
QOS_CHOICES = ("sensor_data", "reliable")


def input_qos(choice: str) -> QoSProfile:
    """The QoS of the sensor streams for a ``joint_states_qos`` choice (ValueError if none)."""
    if choice not in QOS_CHOICES:
        raise ValueError(f"joint_states_qos must be one of {QOS_CHOICES}, got '{choice}'")
    if choice == "sensor_data":
        return SENSOR
    return QoSProfile(depth=REPLAY_DEPTH, reliability=ReliabilityPolicy.RELIABLE)


#: inputs that arrive before the first model are held this long (by arrival) and answered once
#: it is in: a replayed recording, or a driver started first, begins with them
EARLY_S = 5.0


class NodeBase(Node):
    FLOATING_BASE = False  # whether the node needs the floating-base kernels
    live: Any = None  # everything that depends on the model, once there is one
    urdf: str | None = ""  # the URDF of the model in use

    def __init__(self, name: str, **kwargs: Any) -> None:
        # the compiled kernels are loaded (or, with an empty cache, compiled) before anything
        # subscribes: whoever waits for this node's subscriptions (rbd-ros replay --wait-for)
        # then knows it can answer
        from ..runtime.kernels import load_node_kernels

        t = time.monotonic()
        load_node_kernels(self.FLOATING_BASE)
        super().__init__(name, **kwargs)
        self._last_warn: dict[str, float] = {}
        self.problems: dict[str, str] = {}  # what stops an output now, by kind; ~/status
        self._status_sent = (-math.inf, "")  # when (monotonic s) and what ~/status last said
        self.pub_status: Any = None  # ~/status, made by the node
        self.health = Health()
        self.pub_diagnostics = self.quiet_publisher(DiagnosticArray, "/diagnostics", 10)
        self.create_timer(DIAGNOSTICS_S, self._diagnose)
        self._early: deque[tuple[float, Callable[[Any], None], Any]] = deque(maxlen=50_000)
        # the per-state outputs, and those someone subscribes to: only those are computed and
        # sent (asking rclpy costs ~1.4 us an output, too much for every state at 1 kHz):
        # ``hear`` looks, on the node's timer and before held inputs are answered
        self.outputs: list[Any] = []
        self.heard: set[Any] = set()
        # what a first model would otherwise pay while its joint states queue up (~0.2 s,
        # enough to overflow a sensor queue at 1 kHz): the first log line (rclpy's logger
        # walks every module's path once) and a full garbage collection
        self.get_logger().info(f"compiled kernels loaded in {time.monotonic() - t:.2f} s")
        self.settle()

    def hear(self) -> None:
        """Which of ``outputs`` have subscribers now (a subscriber that joins gets the outputs
        from the node's next look on)."""
        self.heard = {p for p in self.outputs if p.get_subscription_count()}

    def on_live(self, callback: Callable[[Any, Any], None]) -> Callable[[Any], None]:
        """A subscription's callback that calls ``callback(live, msg)`` with the node's
        ``live`` model; an input that comes before the first model is held (the last EARLY_S
        seconds of them) and handed over once it comes."""
        def receive(msg: Any) -> None:
            live = self.live
            if live is None:
                self.hold_early(receive, msg)
                return
            try:
                callback(live, msg)
            except Exception:  # a bug of ours: said, and the node goes on with the next input
                if not self.context.ok():  # shutting down: the publishers are going
                    return
                self.warn("internal", f"internal error on an input, which is dropped (please "
                                      f"report it):\n{traceback.format_exc()}")

        return receive

    def guarded_service(self, srv_type: Any, name: str, handler: Callable[[Any, Any], Any]
                        ) -> Any:
        """A service whose handler, should it fail on a bug of ours, answers success false with
        the error instead of ending the node."""
        def call(req: Any, res: Any) -> Any:
            try:
                return handler(req, res)
            except Exception as e:
                self.warn("internal", f"internal error on a {name} request (please report "
                                      f"it):\n{traceback.format_exc()}")
                res.success, res.message = False, f"internal error (please report it): {e!r}"
                return res

        return self.create_service(srv_type, name, call)

    def hold_early(self, callback: Callable[[Any], None], msg: Any) -> None:
        """An input that came before any model: kept for ``release_early`` (the last EARLY_S
        seconds of them)."""
        now = time.monotonic()
        self._early.append((now, callback, msg))
        while now - self._early[0][0] > EARLY_S:
            self._early.popleft()
        self.warn("no_model", f"no robot_description yet: holding the inputs that arrive (the "
                              f"last {EARLY_S:g} s of them), to answer them once it comes")

    def release_early(self) -> None:
        """Once the first model is in: the held inputs, in the order they came (to the
        outputs subscribed to now)."""
        now = time.monotonic()
        held = [(cb, msg) for t, cb, msg in self._early if now - t <= EARLY_S]
        lost = len(self._early) - len(held)
        self._early.clear()
        for callback, msg in held:
            callback(msg)
        if held or lost:
            self.get_logger().info(
                f"answered the {len(held)} inputs that arrived before the model"
                + (f"; {lost} older than {EARLY_S:g} s were dropped" if lost else ""))

    def refused_model(self, source: str, error: Exception) -> None:
        """A URDF from ``source`` that cannot be the model: said, the last good model kept."""
        self.get_logger().error(f"rejected the URDF from {source}; keeping "
                                f"{'the last good model' if self.live else 'no model'}: {error}")

    def model_in_use(self, urdf: str, source: str, model: Any, from_parameter: bool) -> None:
        """``urdf`` (from ``source``) is the model in use now: the ``robot_description``
        parameter then shows it, wherever it came from, and the log says which model it is."""
        self.urdf = urdf
        if not from_parameter and self.param("robot_description") != urdf:
            self.set_parameters([Parameter("robot_description", value=urdf)])
        self.get_logger().info(f"model from {source}: {model.summary().splitlines()[0]}")

    # rclpy gives every publisher and subscription default QoS-event handlers, and the
    # executor walks each of them on every wake-up: at 1 kHz the dynamics node's 24 cost
    # ~80 us a joint state. Outputs and the inputs other than sensor streams go without (an
    # incompatible QoS is still reported by the other side's node); the sensor streams keep
    # them, as the warning that a driver's QoS does not match is the one a user needs.
    def quiet_publisher(self, msg_type: Any, topic: str, qos: Any = OUTPUT_DEPTH) -> Any:
        return self.create_publisher(msg_type, topic, qos,
                                     event_callbacks=_no_default_events("Publisher"))

    def quiet_subscription(self, msg_type: Any, topic: str, callback: Callable[[Any], None],
                           qos: Any = 10) -> Any:
        return self.create_subscription(msg_type, topic, callback, qos,
                                        event_callbacks=_no_default_events("Subscription"))

    def name_map(self) -> NameMap:
        held, scaled = (self._pairs(names, values) for names, values in (
            ("held_joints", "held_positions"), ("effort_scale_joints", "effort_scales")))
        return NameMap(list(self.param("joint_rename") or []), held, scaled)

    def _pairs(self, names: str, values: str) -> dict[str, float]:
        """Two parameters, joint names and one number each, as a dict."""
        keys, numbers = list(self.param(names) or []), list(self.param(values) or [])
        if len(keys) != len(numbers):
            raise ValueError(f"{names} has {len(keys)} names, {values} {len(numbers)} values: "
                             "give one value per joint")
        return dict(zip(keys, numbers, strict=True))

    def param(self, name: str) -> Any:
        """A parameter's value; None for a typed parameter nobody has set."""
        try:
            return self.get_parameter(name).value
        except ParameterUninitializedException:
            return None

    def merge(self, merger: Any, reader: JointStateReader, raw: bytes) -> int | None:
        """Merge a serialised sensor_msgs/JointState, read by ``reader``, into ``merger`` (a
        JointStateMerger): its stamp (ns), or None: the message was bad and is dropped whole,
        with a throttled warning."""
        try:
            stamp, update = reader.merge(raw, merger, self.health.received)
        except InputError as e:
            self.warn("bad_state", f"dropped a joint_states message: {e}")
            return None
        if update.unknown:
            self.warn("unknown", f"joint_states names joints the model does not have, "
                                 f"ignored: {update.unknown}")
        if not merger.ready:
            self.warn("waiting", f"waiting for joint_states of {merger.missing()}")
        return stamp

    @contextlib.contextmanager
    def core_log(self) -> Iterator[None]:
        """Within: what the dynamics core logs (a URDF's oddities when it loads) goes to this
        node's logger, so to /rosout, instead of Python's stderr."""
        handler = _ToNodeLogger(self.get_logger())
        core = logging.getLogger("rbd_ros.dynamics")
        core.addHandler(handler)
        propagate, core.propagate = core.propagate, False
        try:
            yield
        finally:
            core.removeHandler(handler)
            core.propagate = propagate

    def settle(self) -> None:
        """Once a model is live: collect, then freeze what is left (imports, the model) out of
        the cyclic garbage collector's walks. With numba and LLVM loaded a full collection
        walks ~120,000 objects, a 20 ms pause that would land on a message; after the freeze
        it walks only what was made since."""
        gc.collect()
        gc.freeze()

    def report(self, key: str, text: str | None, log: bool = True) -> None:
        """Set (``text``) or clear (None) one of the node's current problems. ``~/status``
        says them (or "ok") when one comes or goes at once, and a changed text at most once a
        second; each new problem is also logged (throttled)."""
        if text is None:
            if key in self.problems:
                del self.problems[key]
                self.publish_status()
            return
        new = key not in self.problems
        self.problems[key] = text
        if new and log:
            self.warn(key, text)
        self.publish_status(force=new)

    def publish_status(self, force: bool = True) -> None:
        """``~/status`` now if ``force`` or if it changed over a second ago."""
        text = "; ".join(self.problems.values()) or "ok"
        now = time.monotonic()
        sent, said = self._status_sent
        if self.pub_status is None or text == said or (not force and now - sent < 1.0):
            return
        self._status_sent = (now, text)
        self.pub_status.publish(String(data=text))

    def diagnosis(self) -> tuple[bytes, str, list[tuple[str, str]]]:
        """This node's health for ``/diagnostics``: a DiagnosticStatus level, a message and
        values (overridden by each node; here: its problems, as on ``~/status``)."""
        level = max((PROBLEM_LEVELS.get(k, DiagnosticStatus.WARN) for k in self.problems),
                    default=DiagnosticStatus.OK)
        return level, "; ".join(self.problems.values()) or "ok", []

    def _diagnose(self) -> None:
        """Once a second on ``/diagnostics``, as drivers report (rqt_robot_monitor, Foxglove
        and the diagnostic aggregator read it)."""
        level, message, values = self.diagnosis()
        h = self.health.window()
        if h["warnings"] != "0" and level == DiagnosticStatus.OK:
            level = DiagnosticStatus.WARN
            message = f"{h['warnings']} warnings in the last second, the last: " \
                      f"{h['last warning']}"
        live = self.live
        model = [("model", live.model.name), ("joints", ", ".join(live.names))] if live \
            else [("model", "none yet")]
        # the per-state outputs computed: those with a subscriber matched at the node's last look
        model.append(("outputs sent", ", ".join(sorted(p.topic_name for p in self.heard))))
        msg = DiagnosticArray(status=[DiagnosticStatus(
            level=level, name=f"{self.get_name()}: health",
            hardware_id=live.model.name if live else "", message=message,
            values=[KeyValue(key=k, value=str(v))
                    for k, v in [*model, *h.items(), *values]])])
        msg.header.stamp = self.get_clock().now().to_msg()
        self.pub_diagnostics.publish(msg)

    def warn(self, key: str, text: str) -> None:
        """A warning at most every THROTTLE_S seconds per kind of problem (each one counted on
        ``/diagnostics``)."""
        self.health.warned(text)
        now = self.get_clock().now().nanoseconds * 1e-9
        if now - self._last_warn.get(key, -math.inf) >= THROTTLE_S:
            self._last_warn[key] = now
            self.get_logger().warning(text)


class _ToNodeLogger(logging.Handler):
    def __init__(self, logger: Any) -> None:
        super().__init__()
        self.logger = logger

    def emit(self, record: logging.LogRecord) -> None:
        text = record.getMessage()
        if record.levelno >= logging.ERROR:
            self.logger.error(text)
        elif record.levelno >= logging.WARNING:
            self.logger.warning(text)
        elif record.levelno >= logging.INFO:
            self.logger.info(text)
        else:
            self.logger.debug(text)


def _no_default_events(kind: str) -> Any:
    """Event callbacks that switch rclpy's defaults off: rclpy.event_handler from Iron on,
    rclpy.qos_event on Humble (both take use_default_callbacks)."""
    for module in ("rclpy.event_handler", "rclpy.qos_event"):
        try:
            callbacks = getattr(importlib.import_module(module), f"{kind}EventCallbacks")
            return callbacks(use_default_callbacks=False)
        except (ImportError, AttributeError, TypeError):
            continue
    return None


def spin(node: Node, stopped: Callable[[], bool] = lambda: False) -> None:
    """Spin ``node`` until its context shuts down or ``stopped()``. rclpy's EventsExecutor
    where rclpy has it (Jazzy's wheels on): its wait is in C++, where the default executor
    rebuilds a wait set in Python for each message (measured at 500 Hz of joint_states + odom:
    0.53 ms of CPU per state against 1.27 ms, for a node that only echoes). Its ``spin()`` is
    not used: in rclpy 9.1 it spun a core without running a callback."""
    try:
        from rclpy.experimental.events_executor import EventsExecutor as Executor
    except ImportError:
        from rclpy.executors import SingleThreadedExecutor as Executor
    executor = Executor(context=node.context)
    executor.add_node(node)
    while node.context.ok() and not stopped():
        executor.spin_once(timeout_sec=SPIN_WAKE_S)


#: the longest a node's spin waits before it looks whether a signal asked it to stop
SPIN_WAKE_S = 0.2


def run(node_class: Callable[[], Node], args: list[str] | None = None) -> int:
    """Console entry point: spin the node until Ctrl-C (or SIGTERM); a bad configuration
    exits 2.

    The signal handlers are ours, not rclpy's: rclpy's shuts the context down at once, and
    then raises KeyboardInterrupt in whatever Python runs next. Inside a callback of the
    EventsExecutor that aborted the process (pybind11's error_already_set reached
    std::terminate) or logged a FATAL "Exception in 'timers' callback" from a publish on the
    dead context. Here a signal only marks the stop: the spin ends between two callbacks, and
    the node is destroyed on a valid context. While the node is being built (a numba compile
    can take a minute) the signal raises KeyboardInterrupt, as usual. Later ones are ignored:
    under `ros2 launch` a terminal's Ctrl-C comes twice, from the terminal and from launch."""
    asked: list[int] = []
    building = True  # read by the handler through the closure

    def on_signal(signum: int, frame: Any) -> None:
        asked.append(signum)
        for sig in (signal.SIGINT, signal.SIGTERM):  # as the kernel's: Python's exit resets
            signal.signal(sig, signal.SIG_IGN)     # its own handlers to the default, fatal one
        if building:
            raise KeyboardInterrupt

    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, on_signal)
    try:
        rclpy.init(args=args if args is not None else sys.argv,
                   signal_handler_options=SignalHandlerOptions.NO)
    except RuntimeError as e:  # rcl refused the --ros-args (a bad remap or -p rule)
        print(f"error: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 0
    try:
        node = node_class()
    except (ValueError, ParameterException, NameValidationException) as e:
        # a configuration that cannot work: a parameter of the wrong type or value, a bad name.
        # The half-built node's publishers and timers cannot be reached to destroy them, and the
        # interpreter's exit freeing them after the context is shut down once ended the process
        # with SIGSEGV (rc -11, after this message, in a CI run): exit here, the message out
        print(f"error: {e}", file=sys.stderr)
        rclpy.try_shutdown()
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(2)
    except KeyboardInterrupt:  # a signal while the node was being built: the stop asked for
        rclpy.try_shutdown()
        return 0
    building = False
    try:
        spin(node, lambda: bool(asked))
    finally:
        node.destroy_node()
        rclpy.try_shutdown()
    return 0
