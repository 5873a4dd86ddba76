# kbench_proto_library(NAME [ROOT dir] PROTOS a.proto ... GRPC a.proto ...)
# Generates C++ for every proto (and gRPC stubs for those under GRPC) into
# the build tree, with include paths rooted at ROOT (default proto/).
function(kbench_proto_library name)
  cmake_parse_arguments(ARG "" "ROOT" "PROTOS;GRPC" ${ARGN})
  set(root ${CMAKE_SOURCE_DIR}/proto)
  if(ARG_ROOT)
    set(root ${ARG_ROOT})
  endif()
  set(out ${CMAKE_BINARY_DIR}/gen)
  file(MAKE_DIRECTORY ${out})
  set(srcs)
  foreach(p ${ARG_PROTOS})
    get_filename_component(dir ${p} DIRECTORY)
    get_filename_component(base ${p} NAME_WE)
    set(gen ${out}/${dir}/${base}.pb.cc ${out}/${dir}/${base}.pb.h)
    set(plugin_args)
    if(${p} IN_LIST ARG_GRPC)
      list(APPEND gen ${out}/${dir}/${base}.grpc.pb.cc ${out}/${dir}/${base}.grpc.pb.h)
      set(plugin_args --grpc_out=${out} --plugin=protoc-gen-grpc=${KBENCH_GRPC_CPP_PLUGIN})
    endif()
    add_custom_command(
      OUTPUT ${gen}
      COMMAND protobuf::protoc --proto_path=${root} --cpp_out=${out} ${plugin_args} ${root}/${p}
      DEPENDS ${root}/${p} protobuf::protoc
      COMMENT "protoc ${p}")
    list(APPEND srcs ${gen})
  endforeach()
  add_library(${name} STATIC ${srcs})
  target_include_directories(${name} PUBLIC ${out})
  target_link_libraries(${name} PUBLIC protobuf::libprotobuf gRPC::grpc++)
  set_target_properties(${name} PROPERTIES POSITION_INDEPENDENT_CODE ON)
endfunction()
