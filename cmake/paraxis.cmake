# Helpers shared by every module's CMakeLists.

set(PARAXIS_SRC ${PROJECT_SOURCE_DIR}/src)

# paraxis_module(NAME SOURCES... DEPS ...): one static library per module of ARCHITECTURE.md.
# A module with no sources yet is an INTERFACE library, so the dependency graph already exists.
function(paraxis_module name)
  cmake_parse_arguments(ARG "" "" "SOURCES;DEPS" ${ARGN})
  if(ARG_SOURCES)
    add_library(paraxis_${name} STATIC ${ARG_SOURCES})
    target_include_directories(paraxis_${name} PUBLIC ${PARAXIS_SRC})
    target_link_libraries(paraxis_${name} PUBLIC ${ARG_DEPS})
    target_compile_options(paraxis_${name} PRIVATE -Wall -Wextra -Wpedantic -Wno-missing-field-initializers)
  else()
    add_library(paraxis_${name} INTERFACE)
    target_include_directories(paraxis_${name} INTERFACE ${PARAXIS_SRC})
    target_link_libraries(paraxis_${name} INTERFACE ${ARG_DEPS})
  endif()
  add_library(paraxis::${name} ALIAS paraxis_${name})
endfunction()

# Torch translation units share one precompiled header: compiling <torch/torch.h> costs
# ~30 s per unit, ~15 s with the PCH. Every torch target reuses the same PCH object. GCC
# ignores a PCH built with other code-generation flags, and CMake compiles an executable with
# -fPIE where a library has -fPIC: an executable's torch units take -fPIC (fine in a PIE) so
# that one PCH (a minute of a CI build) serves both.
function(paraxis_use_torch_pch target)
  if(TARGET paraxis_torch_pch)
    get_target_property(type ${target} TYPE)
    if(type STREQUAL "EXECUTABLE")
      set_target_properties(${target} PROPERTIES POSITION_INDEPENDENT_CODE OFF)
      target_compile_options(${target} PRIVATE -fPIC)
    endif()
    target_precompile_headers(${target} REUSE_FROM paraxis_torch_pch)
  endif()
endfunction()
