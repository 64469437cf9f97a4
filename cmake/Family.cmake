# parbench_add_family(NAME <name> SOURCES <C++ sources>... [CUDA <CUDA sources>...])
#
# A family's library, parbench_<name>, linked with core and the fixtures,
# its CUDA sources where CUDA is on. The bench driver lists every family
# added, in the order added (benchmarks/CMakeLists.txt generates the list of
# <name>_family() calls), links it and fingerprints its code. A family adds
# what else it needs (libraries, definitions) to the target afterwards.
function(parbench_add_family)
  cmake_parse_arguments(F "" "NAME" "SOURCES;CUDA" ${ARGN})
  if(NOT F_NAME OR NOT F_SOURCES)
    message(FATAL_ERROR "parbench_add_family needs NAME and SOURCES")
  endif()
  add_library(parbench_${F_NAME} STATIC ${F_SOURCES})
  target_link_libraries(parbench_${F_NAME} PUBLIC parbench_core parbench_fixtures)
  if(PARBENCH_WITH_CUDA AND F_CUDA)
    target_sources(parbench_${F_NAME} PRIVATE ${F_CUDA})
  endif()
  set_property(GLOBAL APPEND PROPERTY PARBENCH_FAMILY_LIBS parbench_${F_NAME})
  set_property(GLOBAL APPEND PROPERTY PARBENCH_FAMILIES ${F_NAME})
endfunction()
