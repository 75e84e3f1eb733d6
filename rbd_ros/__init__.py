"""rbd_ros: live rigid-body dynamics for ROS 2."""

__version__ = "0.1.0"
