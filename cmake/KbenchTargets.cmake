# kb_cc_library / kb_cc_binary / kb_cc_test: one target per folder, with
# explicit sources and dependencies, as Abseil's CMake helpers do.
#
# Every target is also written to the layer manifest (build/layers.txt, see
# kb_write_layer_manifest): its sources and direct dependencies. The unit
# test testing/layering_test.cc reads it and fails when a file includes a
# header that its target's dependencies do not provide, so a layer rule
# broken in code is a failing test, not a review comment.

# kb_cc_library(NAME name SRCS a.cc ... [DEPS ...] [PRIVATE_DEPS ...])
function(kb_cc_library)
  cmake_parse_arguments(KB "" "NAME" "SRCS;DEPS;PRIVATE_DEPS" ${ARGN})
  add_library(${KB_NAME} STATIC ${KB_SRCS})
  target_include_directories(${KB_NAME} PUBLIC ${PROJECT_SOURCE_DIR})
  target_link_libraries(${KB_NAME} PUBLIC ${KB_DEPS} PRIVATE ${KB_PRIVATE_DEPS})
  set_target_properties(${KB_NAME} PROPERTIES POSITION_INDEPENDENT_CODE ON)
  _kb_record(${KB_NAME} library "${KB_SRCS}" "${KB_DEPS};${KB_PRIVATE_DEPS}")
endfunction()

# kb_cc_binary(NAME name SRCS main.cc [DEPS ...] [NO_INSTALL])
function(kb_cc_binary)
  cmake_parse_arguments(KB "NO_INSTALL" "NAME" "SRCS;DEPS" ${ARGN})
  add_executable(${KB_NAME} ${KB_SRCS})
  target_link_libraries(${KB_NAME} PRIVATE ${KB_DEPS})
  if(NOT KB_NO_INSTALL)
    install(TARGETS ${KB_NAME} RUNTIME DESTINATION bin)
  endif()
  _kb_record(${KB_NAME} binary "${KB_SRCS}" "${KB_DEPS}")
endfunction()

# kb_cc_test(NAME name SRCS a_test.cc ... DEPS ... [LABEL unit]
#            [TIMEOUT 120] [NO_INSTALL])
# One GoogleTest binary, its cases discovered into ctest with the label.
# A unit test links the library it tests (and testing/ helpers), nothing
# more, so touching one library relinks only its own tests.
function(kb_cc_test)
  cmake_parse_arguments(KB "NO_INSTALL" "NAME;LABEL;TIMEOUT" "SRCS;DEPS" ${ARGN})
  if(NOT KB_LABEL)
    set(KB_LABEL unit)
  endif()
  if(NOT KB_TIMEOUT)
    set(KB_TIMEOUT 120)
  endif()
  add_executable(${KB_NAME} ${KB_SRCS})
  target_link_libraries(${KB_NAME} PRIVATE ${KB_DEPS} GTest::gtest GTest::gmock
    GTest::gtest_main)
  gtest_discover_tests(${KB_NAME} PROPERTIES LABELS "${KB_LABEL}"
    TIMEOUT ${KB_TIMEOUT} DISCOVERY_TIMEOUT 60)
  if(NOT KB_NO_INSTALL)
    install(TARGETS ${KB_NAME} RUNTIME DESTINATION tests)
  endif()
  if(KB_LABEL STREQUAL "unit")
    set_property(GLOBAL APPEND PROPERTY KB_UNIT_TESTS ${KB_NAME})
  elseif(KB_LABEL STREQUAL "integration")
    set_property(GLOBAL APPEND PROPERTY KB_INTEGRATION_TESTS ${KB_NAME})
  endif()
  _kb_record(${KB_NAME} test "${KB_SRCS}" "${KB_DEPS};GTest::gtest")
endfunction()

function(_kb_record name kind srcs deps)
  set(rel)
  foreach(s ${srcs})
    get_filename_component(abs ${s} ABSOLUTE BASE_DIR ${CMAKE_CURRENT_SOURCE_DIR})
    file(RELATIVE_PATH r ${PROJECT_SOURCE_DIR} ${abs})
    list(APPEND rel ${r})
  endforeach()
  file(RELATIVE_PATH folder ${PROJECT_SOURCE_DIR} ${CMAKE_CURRENT_SOURCE_DIR})
  list(REMOVE_ITEM deps "")
  string(REPLACE ";" " " rel "${rel}")
  string(REPLACE ";" " " deps "${deps}")
  set_property(GLOBAL APPEND PROPERTY KB_LAYER_LINES
    "${name}|${kind}|${folder}|${rel}|${deps}")
endfunction()

# Writes build/layers.txt: one line per target,
# "name|kind|folder|sources|deps" (space-separated lists).
function(kb_write_layer_manifest path)
  get_property(lines GLOBAL PROPERTY KB_LAYER_LINES)
  string(REPLACE ";" "\n" text "${lines}")
  file(WRITE ${path} "${text}\n")
endfunction()
