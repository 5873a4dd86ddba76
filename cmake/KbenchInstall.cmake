# What `cmake --install` (and so `make bundle`) puts beside the binaries:
# the problems and example kernels, the docs agents read, and the scripts.
install(DIRECTORY ${CMAKE_SOURCE_DIR}/kernels/ DESTINATION share/kbench
        FILES_MATCHING PATTERN "*.textproto" PATTERN "*.cu")
install(FILES ${CMAKE_SOURCE_DIR}/docs/kernel-contract.md
        DESTINATION share/kbench/docs OPTIONAL)
