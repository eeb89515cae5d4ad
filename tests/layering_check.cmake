# The layering rules of the tree (STYLE.md §1), checked by CTest
# (layering_check) on the #include lines of every source file and on the link
# lines of the library targets. Include paths cannot enforce them: every
# target sees the whole tree and /usr/include.
#
#   layer                      may include from this project
#   -------------------------  -------------------------------------------------
#   npu_tiling_types           its own headers only (TYPES_HEADERS below)
#   engine (server/tiling)     server/tiling/ only: no emulator, no advisor, no
#                              service, no proto, no gRPC, no Prometheus
#   emulator                   emulator/ and the npu_tiling_types headers
#   advisor (server/advisor)   server/advisor/, the engine's public API
#                              (ENGINE_API) and the emulator's (EMULATOR_API)
#   graph (server/graph)       server/graph/ and the engine's public API; ONNX's
#                              protobuf messages, but no gRPC, no service proto,
#                              no Prometheus
#   client library             client/tiling_client.h (plus the generated
#                              proto and gRPC); client/npy: Abseil only
#   tilingctl                  client/ and the proto; only the in-process
#                              server of --local (local_service.*) sees server/
#
# Inputs: ROOT (the source tree) and, for the link check, LINKS_<target>: the
# target's direct link libraries, ','-separated (tests/CMakeLists.txt).
# INJECT ("file=header,...") adds include lines to files as read, so that a
# test can show the check catches a forbidden include without editing one.

set(TYPES_HEADERS
  server/tiling/types.h
  server/tiling/schedule.h
  server/tiling/status_macros.h
  server/tiling/int_math.h
  server/tiling/lazy_text.h
  server/tiling/hardware_constants.h
  server/tiling/tiling_data.h
  server/tiling/chip_fields.h
  server/tiling/plan_fit.h
  server/tiling/kernel_table.h
  server/tiling/operator_table.h
  server/tiling/key_layout.h
  server/tiling/batch_shape.h
  server/tiling/problem_key.h
  server/tiling/quant/quant_dtype.h
  server/tiling/quant/quant_facts.h
  server/tiling/quant/quant_parse.h
  server/tiling/quant/quant_request.h
  server/tiling/weight_quant/wq_facts.h
  server/tiling/weight_quant/wq_parse.h
  server/tiling/transpose/transpose_parse.h
  server/tiling/grouped/gmm_path.h
  server/tiling/grouped/gmm_groups.h)
# The types target's own sources; schedule_internal.h is shared by its
# schedule files and the kernel table, and by nothing else.
set(TYPES_SOURCES
  server/tiling/types.cc
  server/tiling/schedule.cc
  server/tiling/schedule_batch.cc
  server/tiling/kernel_table.cc
  server/tiling/operator_table.cc
  server/tiling/key_layout.cc
  server/tiling/batch_shape.cc
  server/tiling/problem_key.cc
  server/tiling/schedule_quant.cc
  server/tiling/schedule_stream_k.cc
  server/tiling/schedule_coverage.cc
  server/tiling/schedule_internal.h
  server/tiling/tiling_data.cc
  server/tiling/plan_fit.cc
  server/tiling/quant/quant_parse.cc
  server/tiling/quant/quant_request.cc
  server/tiling/schedule_weight_quant.cc
  server/tiling/weight_quant/wq_parse.cc
  server/tiling/schedule_transpose.cc
  server/tiling/schedule_grouped.cc
  server/tiling/transpose/transpose_parse.cc
  server/tiling/grouped/gmm_path.cc
  server/tiling/grouped/gmm_groups.cc)
set(ENGINE_API ${TYPES_HEADERS}
  server/tiling/registry.h
  server/tiling/strategy.h
  server/tiling/builtin_strategies.h
  server/tiling/strategy_id.h
  server/tiling/custom_plans.h
  server/tiling/validate.h)
set(EMULATOR_API
  emulator/emulator.h
  emulator/chip.h
  emulator/kernel_schedule.h
  emulator/stats.h
  emulator/accuracy.h
  emulator/numerics.h
  emulator/quant_emulation.h
  emulator/grouped_emulation.h
  emulator/quant_formats.h
  emulator/quant_numerics.h
  emulator/timing_model.h
  emulator/work_estimate.h)

# Libraries of the RPC and metrics stack, by include path.
set(RPC_STACK "grpcpp/|grpc/|google/protobuf/|prometheus/|\\.pb\\.h")

set(violations "")
string(REPLACE "," ";" injections "${INJECT}")

# Checks every include of `files` (paths relative to ROOT): a project include
# (server/, emulator/, client/, bench/, tests/) must be in `allowed_list` or
# match `allowed_regex`; no include may match `forbidden_regex`.
function(check_layer layer files allowed_list allowed_regex forbidden_regex)
  foreach(file ${files})
    file(STRINGS "${ROOT}/${file}" lines REGEX "^[ \t]*#[ \t]*include")
    foreach(injected ${injections})
      if(injected MATCHES "^${file}=(.*)$")
        list(APPEND lines "#include \"${CMAKE_MATCH_1}\"")
      endif()
    endforeach()
    foreach(line ${lines})
      string(REGEX REPLACE "^[ \t]*#[ \t]*include[ \t]*[<\"]([^>\"]*)[>\"].*$" "\\1" header
                           "${line}")
      set(bad "")
      if(header MATCHES "^(server|emulator|client|bench|tests)/")
        list(FIND allowed_list "${header}" found)
        set(matched FALSE)
        if(allowed_regex)
          if(header MATCHES "${allowed_regex}")
            set(matched TRUE)
          endif()
        endif()
        if(found EQUAL -1 AND NOT matched)
          set(bad "not allowed in ${layer}")
        endif()
      endif()
      if(forbidden_regex)
        if(header MATCHES "${forbidden_regex}")
          set(bad "forbidden in ${layer}")
        endif()
      endif()
      if(bad)
        list(APPEND violations "  ${file}: ${header} (${bad})")
        set(violations "${violations}" PARENT_SCOPE)
      endif()
    endforeach()
  endforeach()
endfunction()

# Source files under `dir` (relative to ROOT), as relative paths.
function(sources_under out dir)
  file(GLOB_RECURSE found RELATIVE "${ROOT}" "${ROOT}/${dir}/*.h" "${ROOT}/${dir}/*.cc")
  list(SORT found)
  set(${out} "${found}" PARENT_SCOPE)
endfunction()

# npu_tiling_types: the value types know nothing of strategies or the registry.
set(types_files ${TYPES_HEADERS} ${TYPES_SOURCES})
check_layer("npu_tiling_types" "${types_files}" "${TYPES_HEADERS};server/tiling/schedule_internal.h"
            "" "${RPC_STACK}")

# The engine: server/tiling only.
sources_under(engine_files server/tiling)
check_layer("the engine" "${engine_files}" "" "^server/tiling/" "${RPC_STACK}")

# The emulator: itself and the value types.
sources_under(emulator_files emulator)
check_layer("the emulator" "${emulator_files}" "${TYPES_HEADERS}" "^emulator/" "${RPC_STACK}")

# The advisor: the public API of the engine and of the emulator.
sources_under(advisor_files server/advisor)
check_layer("the advisor" "${advisor_files}" "${ENGINE_API};${EMULATOR_API}" "^server/advisor/"
            "${RPC_STACK}")

# The graph lowering: ONNX models to the engine's problems.
sources_under(graph_files server/graph)
check_layer("the graph lowering" "${graph_files}" "${ENGINE_API}" "^server/graph/"
            "grpcpp/|grpc/|prometheus/|npu/tiling/v1/")

# The client library: the proto and gRPC, never the engine or the server;
# npy is Abseil only.
check_layer("the client library" "client/tiling_client.h;client/tiling_client.cc"
            "client/tiling_client.h" "" "prometheus/")
check_layer("client/npy" "client/npy.h;client/npy.cc" "client/npy.h" "" "${RPC_STACK}")

# tilingctl: the client side only, except the in-process server of --local.
sources_under(tilingctl_files client/tilingctl)
list(FILTER tilingctl_files EXCLUDE REGEX "^client/tilingctl/local_service\\.cc$")
check_layer("tilingctl" "${tilingctl_files}" "" "^client/" "prometheus/")

# The link lines: the same rules on the targets' direct link libraries.
function(check_links target forbidden_regex)
  if(NOT DEFINED LINKS_${target})
    return()
  endif()
  string(REPLACE "," ";" links "${LINKS_${target}}")
  foreach(link ${links})
    if(link MATCHES "${forbidden_regex}")
      list(APPEND violations "  target ${target} links ${link}")
      set(violations "${violations}" PARENT_SCOPE)
    endif()
  endforeach()
endfunction()

set(RPC_TARGETS "^(npu_proto|npu::proto|gRPC::.*|protobuf::.*|prometheus-cpp::.*)$")
set(SERVER_TARGETS "^(npu_service|npu::service|npu_metrics|npu::metrics|npu_advisor|npu::advisor)$")
set(ENGINE_TARGETS "^(npu_tiling|npu::tiling|npu_tiling_types|npu::tiling_types|npu_emulator|npu::emulator)$")
check_links(npu_tiling_types "${RPC_TARGETS}|${SERVER_TARGETS}|^(npu_tiling|npu_emulator)$")
check_links(npu_tiling "${RPC_TARGETS}|${SERVER_TARGETS}|^(npu_emulator|npu::emulator)$")
check_links(npu_emulator "${RPC_TARGETS}|${SERVER_TARGETS}|^(npu_tiling|npu::tiling)$")
check_links(npu_advisor "${RPC_TARGETS}|^(npu_service|npu::service|npu_metrics|npu::metrics)$")
check_links(npu_graph "^(npu_proto|npu::proto|gRPC::.*|prometheus-cpp::.*)$|${SERVER_TARGETS}|^(npu_emulator|npu::emulator)$")
check_links(npu_client "${SERVER_TARGETS}|${ENGINE_TARGETS}|^prometheus-cpp::")
check_links(npu_npy "${RPC_TARGETS}|${SERVER_TARGETS}|${ENGINE_TARGETS}")
check_links(npu_tilingctl_lib "${SERVER_TARGETS}|${ENGINE_TARGETS}|^prometheus-cpp::")
check_links(tilingctl "${SERVER_TARGETS}|${ENGINE_TARGETS}|^prometheus-cpp::")

if(violations)
  string(REPLACE ";" "\n" violations "${violations}")
  message(FATAL_ERROR "layering violations:\n${violations}")
endif()
message(STATUS "layering ok")
