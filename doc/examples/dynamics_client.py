"""Call rbd_ros's dynamics services from your own node: the torques for a motion (inverse
dynamics), the gravity torques, and what a refused request looks like.

    python3 dynamics_client.py      (with the dynamics node running on the bundled arm)
"""

import sys

import rclpy

from rbd_ros_interfaces.srv import GravityTorques, InverseDynamics

JOINTS = [f"joint{k}" for k in range(1, 8)]
Q = [0.0, 0.4, 0.0, -1.2, 0.0, 1.6, 0.8]


def call(node, client, request):
    """One service call, waited for; None if no answer came within 10 s."""
    future = client.call_async(request)
    rclpy.spin_until_future_complete(node, future, timeout_sec=10.0)
    return future.result()


def main() -> int:
    rclpy.init()
    node = rclpy.create_node("my_dynamics_client")
    try:
        inverse = node.create_client(InverseDynamics, "/rbd_dynamics/inverse_dynamics")
        gravity = node.create_client(GravityTorques, "/rbd_dynamics/gravity_torques")
        for client in (inverse, gravity):
            if not client.wait_for_service(timeout_sec=60.0):
                print(f"no service {client.srv_name}: is the dynamics node running?",
                      file=sys.stderr)
                return 1
        # the torques that hold the arm at Q
        res = call(node, gravity, GravityTorques.Request(joint_names=JOINTS, positions=Q))
        print("gravity torques (N m):", " ".join(f"{x:.3f}" for x in res.efforts))
        # the torques that accelerate joint 4 at 1 rad/s^2 from rest at Q
        res = call(node, inverse, InverseDynamics.Request(
            joint_names=JOINTS, positions=Q, velocities=[0.0] * 7,
            accelerations=[0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0]))
        print("inverse dynamics (N m):", " ".join(f"{x:.3f}" for x in res.efforts))
        # a request that names three joints of seven is refused, with the reason
        res = call(node, inverse, InverseDynamics.Request(joint_names=JOINTS[:3],
                                                          positions=Q[:3]))
        print("refused:" if not res.success else "accepted?", res.message)
        return 0
    finally:
        node.destroy_node()
        rclpy.shutdown()


if __name__ == "__main__":
    sys.exit(main())
