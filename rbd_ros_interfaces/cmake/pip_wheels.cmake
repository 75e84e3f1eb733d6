# Only for a build against the ROS 2 pip wheels (pyproject.toml sets RBD_ROS_PIP_WHEELS): they
# export some CMake targets with an include directory of the machine that built them
# (/opt/python/...). Drop include directories that do not exist here, so the generated code
# compiles. CMake checks these paths only when it generates the build, so this runs last.
# A normal ROS build (colcon, a ROS install) never runs it.
function(rbd_drop_missing_includes)
  get_property(targets DIRECTORY PROPERTY IMPORTED_TARGETS)
  foreach(target IN LISTS targets)
    get_target_property(dirs ${target} INTERFACE_INCLUDE_DIRECTORIES)
    if(dirs)
      set(kept "")
      foreach(dir IN LISTS dirs)
        if(EXISTS "${dir}" OR dir MATCHES "^\\$<")
          list(APPEND kept "${dir}")
        endif()
      endforeach()
      set_target_properties(${target} PROPERTIES INTERFACE_INCLUDE_DIRECTORIES "${kept}")
    endif()
  endforeach()
endfunction()

