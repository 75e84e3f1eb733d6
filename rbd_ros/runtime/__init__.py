"""What the project's processes stand on, no ROS imported: where numba keeps the compiled kernels
and loading a node's, the ROS domain of the project's own processes, and the launch files'
URDF reading."""
