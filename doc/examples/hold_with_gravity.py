"""Hold an arm where it stands: PD on the measured joint states plus rbd_ros's gravity torques,
sent to a ros2_control effort controller (a JointGroupEffortController's ``~/commands``).

    python3 hold_with_gravity.py      (with the dynamics node and the arm's driver running)

The dynamics node publishes ``~/gravity_command`` for every joint state, already in the
controller's joint order (its ``joints`` parameter), so the sum below is element by element.
Without a gravity command, or with one older than 50 ms, this node sends nothing: an effort
controller then holds its last command and the driver's own watchdog acts, rather than this
node applying a PD alone that would let the arm sag.
"""

import sys

import rclpy
from rclpy.qos import qos_profile_sensor_data
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray

JOINTS = [f"joint{k}" for k in range(1, 8)]  # the effort controller's joints, in its order
# per joint, N m/rad and N m s/rad: about 10 rad/s of bandwidth for the inertia each joint
# moves (from the shoulder's 2.7 kg m^2 to the wrist's 0.001), critically damped; soft, as
# gravity is not the PD's job, and stable with up to 30 ms of delay in the loop
KP = [50.0, 270.0, 40.0, 50.0, 1.6, 3.0, 0.09]
KD = [10.0, 54.0, 8.0, 10.0, 0.3, 0.6, 0.018]
STALE_NS = 50_000_000


class Hold:
    def __init__(self, node):
        self.node, self.target, self.gravity, self.gravity_ns = node, None, None, 0
        self.pub = node.create_publisher(Float64MultiArray, "/effort_controller/commands", 10)
        node.create_subscription(Float64MultiArray, "/rbd_dynamics/gravity_command",
                                 self.on_gravity, 10)
        node.create_subscription(JointState, "/joint_states", self.on_state,
                                 qos_profile_sensor_data)

    def on_gravity(self, msg):
        self.gravity = list(msg.data)
        self.gravity_ns = self.node.get_clock().now().nanoseconds

    def on_state(self, msg):
        if len(msg.position) != len(msg.name) or len(msg.velocity) not in (0, len(msg.name)):
            return  # malformed: positions (and velocities, if any) must match the names
        pos = dict(zip(msg.name, msg.position, strict=True))
        vel = dict(zip(msg.name, msg.velocity, strict=True)) if msg.velocity else {}
        if any(j not in pos for j in JOINTS):
            return
        q = [pos[j] for j in JOINTS]
        v = [vel.get(j, 0.0) for j in JOINTS]
        if self.target is None:
            self.target = q  # hold the first posture seen
            self.node.get_logger().info(f"holding {[round(x, 3) for x in q]}")
        age = self.node.get_clock().now().nanoseconds - self.gravity_ns
        if self.gravity is None or age > STALE_NS or len(self.gravity) != len(JOINTS):
            return  # (a gravity command of another length: the node's `joints` differ)
        tau = [kp * (t - x) - kd * w + g
               for kp, kd, t, x, w, g in zip(KP, KD, self.target, q, v, self.gravity,
                                                    strict=True)]
        self.pub.publish(Float64MultiArray(data=tau))


def main() -> int:
    rclpy.init()
    node = rclpy.create_node("hold_with_gravity")
    Hold(node)
    try:
        rclpy.spin(node)
    except KeyboardInterrupt:
        pass
    finally:
        node.destroy_node()
        rclpy.try_shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main())
