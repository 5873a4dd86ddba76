# Included by the top-level CMakeLists.txt when KBENCH_FUZZ is ON, before
# any library is defined: every C and C++ object of the build (kb_base, the
# generated protos, the client sources the targets use) gets libFuzzer's
# coverage instrumentation, AddressSanitizer and UndefinedBehaviorSanitizer,
# so the fuzzer is guided by the parsers' own branches and any UB aborts.
# CUDA sources (kbrunner) are left alone; the fuzz targets never build them.
if(NOT CMAKE_CXX_COMPILER_ID MATCHES "Clang")
  message(FATAL_ERROR
    "KBENCH_FUZZ needs clang (libFuzzer): configure with "
    "-DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++, "
    "or run scripts/fuzz.sh, which does")
endif()
set(KBENCH_FUZZ_SANITIZERS
  -fsanitize=fuzzer-no-link,address,undefined
  -fno-sanitize-recover=undefined -fno-omit-frame-pointer -g -O1)
add_compile_options("$<$<COMPILE_LANGUAGE:C,CXX>:${KBENCH_FUZZ_SANITIZERS}>")
add_link_options("$<$<LINK_LANGUAGE:C,CXX>:-fsanitize=address,undefined>")
# CUDA::nvrtc brings the driver stub (libcuda) along; g++ on Debian links
# --as-needed and so drops it, clang does not unless told. The fuzz targets
# call no driver function and must load on hosts without libcuda.so.1.
add_link_options("LINKER:--as-needed")
