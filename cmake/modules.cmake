# Module boundaries the build enforces. A module's headers are included as "<its path under
# src/>/<file>.h" (e.g. "core/attribution/attribute.h"), but `src/` itself is on no include path:
# each target gets an include root of its own in the build tree holding one link, to its own folder.
# A target therefore sees exactly the headers of itself and of what it links (PUBLIC links pass
# them on), and an include of a module it does not link fails to compile.
function(gpumeter_expose target)
  file(RELATIVE_PATH prefix ${PROJECT_SOURCE_DIR}/src ${CMAKE_CURRENT_SOURCE_DIR})
  set(root ${PROJECT_BINARY_DIR}/include/${target})
  get_filename_component(parent ${root}/${prefix} DIRECTORY)
  file(MAKE_DIRECTORY ${parent})
  if(NOT EXISTS ${root}/${prefix})
    file(CREATE_LINK ${CMAKE_CURRENT_SOURCE_DIR} ${root}/${prefix} SYMBOLIC)
  endif()
  get_target_property(type ${target} TYPE)
  if(type STREQUAL "INTERFACE_LIBRARY")
    target_include_directories(${target} INTERFACE ${root})
  else()
    target_include_directories(${target} PUBLIC ${root})
  endif()
endfunction()
