"""Helpers for the launch files (no launch imports here, so it is testable anywhere)."""

from __future__ import annotations


def xacro_mappings(xacro_args: str) -> dict[str, str]:
    """``"name:=value other:=value"`` (as ``xacro`` takes them on its command line) -> a dict."""
    mappings = {}
    for arg in xacro_args.split():
        name, sep, value = arg.partition(":=")
        if not sep or not name:
            raise ValueError(f"xacro_args: '{arg}' is not NAME:=VALUE (as in "
                             f"xacro_args:='arm_id:=fr3 hand:=true')")
        mappings[name] = value
    return mappings


def robot_description(description_file: str, xacro_args: str = "") -> list[dict[str, str]]:
    """Parameters that carry the URDF of ``description_file`` (plain URDF, or xacro, with the
    arguments ``xacro_args``, when the name ends in .xacro); none for an empty name, so the
    node reads the topic instead."""
    mappings = xacro_mappings(xacro_args)
    if description_file.endswith(".xacro"):
        import xacro  # only needed for a xacro file

        return [{"robot_description": xacro.process_file(description_file,
                                                         mappings=mappings).toxml()}]
    if mappings:
        raise ValueError(f"xacro_args given, but description_file '{description_file}' is not "
                         "a .xacro file")
    if description_file:
        with open(description_file) as f:
            return [{"robot_description": f.read()}]
    return []
