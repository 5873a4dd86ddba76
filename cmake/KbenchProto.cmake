# kbench_proto_library(NAME [ROOT dir] PROTOS a.proto ... GRPC a.proto ...)
# Generates C++ for every proto into the build tree, with include paths
# rooted at ROOT (default proto/): the messages are library NAME (protobuf
# only), the gRPC stubs of the protos under GRPC are library NAME_grpc. Code
# below the gRPC front ends links NAME alone and so cannot use gRPC.
function(kbench_proto_library name)
  cmake_parse_arguments(ARG "" "ROOT" "PROTOS;GRPC" ${ARGN})
  set(root ${CMAKE_SOURCE_DIR}/proto)
  if(ARG_ROOT)
    set(root ${ARG_ROOT})
  endif()
  set(out ${CMAKE_BINARY_DIR}/gen)
  file(MAKE_DIRECTORY ${out})
  set(srcs)
  set(grpc_srcs)
  foreach(p ${ARG_PROTOS})
    get_filename_component(dir ${p} DIRECTORY)
    get_filename_component(base ${p} NAME_WE)
    set(gen ${out}/${dir}/${base}.pb.cc ${out}/${dir}/${base}.pb.h)
    set(plugin_args)
    set(grpc_gen)
    if(${p} IN_LIST ARG_GRPC)
      set(grpc_gen ${out}/${dir}/${base}.grpc.pb.cc ${out}/${dir}/${base}.grpc.pb.h)
      set(plugin_args --grpc_out=${out} --plugin=protoc-gen-grpc=${KBENCH_GRPC_CPP_PLUGIN})
    endif()
    add_custom_command(
      OUTPUT ${gen} ${grpc_gen}
      COMMAND protobuf::protoc --proto_path=${root} --cpp_out=${out} ${plugin_args} ${root}/${p}
      DEPENDS ${root}/${p} protobuf::protoc
      COMMENT "protoc ${p}")
    list(APPEND srcs ${gen})
    list(APPEND grpc_srcs ${grpc_gen})
  endforeach()
  add_library(${name} STATIC ${srcs})
  target_include_directories(${name} PUBLIC ${out})
  target_link_libraries(${name} PUBLIC protobuf::libprotobuf)
  set_target_properties(${name} PROPERTIES POSITION_INDEPENDENT_CODE ON)
  if(grpc_srcs)
    add_library(${name}_grpc STATIC ${grpc_srcs})
    target_link_libraries(${name}_grpc PUBLIC ${name} gRPC::grpc++)
    set_target_properties(${name}_grpc PROPERTIES POSITION_INDEPENDENT_CODE ON)
  endif()
endfunction()
