# Third-party packages (Debian 12: see scripts/deps.sh).
find_package(Threads REQUIRED)
find_package(Protobuf REQUIRED)
find_package(gRPC CONFIG REQUIRED)
find_package(absl CONFIG REQUIRED)
find_package(spdlog CONFIG REQUIRED)
# The tsan preset compiles spdlog into kbench (header-only): Debian's
# libspdlog is not built with TSan, and the lazy init of its registry, seen
# from a second thread through uninstrumented code, reads as a race.
option(KBENCH_SPDLOG_HEADER_ONLY "Use spdlog header-only (the tsan preset)" OFF)
if(KBENCH_SPDLOG_HEADER_ONLY)
  set(KB_SPDLOG spdlog::spdlog_header_only)
else()
  set(KB_SPDLOG spdlog::spdlog)
endif()
find_package(CLI11 CONFIG REQUIRED)
find_package(nlohmann_json CONFIG REQUIRED)
find_package(SQLite3 REQUIRED)
find_package(OpenSSL REQUIRED)
# cpp-httplib (kbd's HTTP/JSON tools): Debian ships it as a shared library
# with a pkg-config file; its flags (SSL, zlib, brotli) must match the build.
find_package(PkgConfig REQUIRED)
pkg_check_modules(HTTPLIB REQUIRED IMPORTED_TARGET cpp-httplib)
find_program(KBENCH_GRPC_CPP_PLUGIN grpc_cpp_plugin REQUIRED)
