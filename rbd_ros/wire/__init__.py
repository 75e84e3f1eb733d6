"""ROS messages without a message library: their CDR bytes read and written by offset, and a
driver's joint names mapped onto a model's."""
