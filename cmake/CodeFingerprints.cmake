# The code fingerprints (docs/json.md, "code"; impl/core/code.hpp).
#
#   parbench_code_table(TARGET...)
#
# After the TARGETs' objects are compiled, cmake/code_fingerprints.py hashes the
# code of each (the generated build-info stamp aside) and writes
# generated/code_table.cpp: source, hash and the objects it calls, per object.
# That file is the OBJECT library parbench_code_table, which bench and the test
# binary link directly. Nothing it hashes depends on it, so the table never
# hashes itself; a changed object reruns the script, and the table's object is
# rebuilt only when the table's text changes (the script writes it only then).
#
# Two builds of the same source must get the same fingerprints wherever the
# checkout is, so the TARGETs' CUDA files get -frandom-seed=<their path>: nvcc
# otherwise names each anonymous namespace with a number that changes with
# every compile (cudafe++'s process id), in the host object and the device
# code alike. The seed is the file's path from the repository root, one per
# file as nvcc asks. (__FILE__ is made relative to the root in
# CMakeLists.txt.)
find_package(Python3 REQUIRED COMPONENTS Interpreter)

if(PARBENCH_WITH_CUDA)
  include(CheckCompilerFlag)
  check_compiler_flag(CUDA -frandom-seed=parbench PARBENCH_NVCC_RANDOM_SEED)
  if(NOT PARBENCH_NVCC_RANDOM_SEED)
    message(WARNING "parbench: nvcc has no -frandom-seed: the CUDA variants' code fingerprints change with every build")
  endif()
endif()

function(parbench_code_table)
  set(objects)
  foreach(target IN LISTS ARGN)
    list(APPEND objects $<TARGET_OBJECTS:${target}>)
    if(PARBENCH_NVCC_RANDOM_SEED)
      get_target_property(sources ${target} SOURCES)
      get_target_property(dir ${target} SOURCE_DIR)
      foreach(src IN LISTS sources)
        if(src MATCHES "\\.cu$" AND NOT src MATCHES "^\\$<")
          cmake_path(ABSOLUTE_PATH src BASE_DIRECTORY ${dir} NORMALIZE OUTPUT_VARIABLE abs)
          file(RELATIVE_PATH rel ${PROJECT_SOURCE_DIR} ${abs})
          set_property(SOURCE ${abs} TARGET_DIRECTORY ${target} APPEND PROPERTY COMPILE_OPTIONS
                       -frandom-seed=${rel})
        endif()
      endforeach()
    endif()
  endforeach()
  set(table ${CMAKE_BINARY_DIR}/generated/code_table.cpp)
  set(script ${PROJECT_SOURCE_DIR}/cmake/code_fingerprints.py)
  add_custom_command(
    OUTPUT ${table}
    COMMAND Python3::Interpreter ${script} table --source-dir ${PROJECT_SOURCE_DIR} --build-dir ${CMAKE_BINARY_DIR}
            --out ${table} ${objects}
    DEPENDS ${script} ${objects}
    COMMENT "Fingerprinting the code of every variant"
    COMMAND_EXPAND_LISTS VERBATIM)
  add_library(parbench_code_table OBJECT ${table})
  target_link_libraries(parbench_code_table PRIVATE parbench_core)
  # The objects exist before the script reads them, whatever the generator.
  add_dependencies(parbench_code_table ${ARGN})
endfunction()
