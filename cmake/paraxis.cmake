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
# ~30 s per unit, ~15 s with the PCH. Every torch target reuses the same PCH object.
function(paraxis_use_torch_pch target)
  if(TARGET paraxis_torch_pch)
    get_target_property(type ${target} TYPE)
    if(type STREQUAL "EXECUTABLE")
      target_precompile_headers(${target} REUSE_FROM paraxis_torch_pch_exe)
    else()
      target_precompile_headers(${target} REUSE_FROM paraxis_torch_pch)
    endif()
  endif()
endfunction()
