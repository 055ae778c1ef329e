# libFuzzer builds (docs/fuzzing.md). Included from the top-level CMakeLists.txt before the layers,
# so that every library is compiled with coverage instrumentation (-fsanitize=fuzzer-no-link) and
# only the fuzz/ targets link libFuzzer's main (-fsanitize=fuzzer, see fuzz/CMakeLists.txt).
# Without HEADROOM_FUZZ the fuzz targets are still built, each with a small main that runs given
# files, so that their regression inputs run in the ordinary test suite.
option(HEADROOM_FUZZ "Build the fuzz/ targets with libFuzzer (Clang only), with ASan and UBSan" OFF)

if(HEADROOM_FUZZ)
  if(NOT CMAKE_CXX_COMPILER_ID MATCHES "Clang")
    message(FATAL_ERROR "HEADROOM_FUZZ needs Clang (libFuzzer is part of compiler-rt); this is "
                        "${CMAKE_CXX_COMPILER_ID}. Configure with CXX=clang++-14 (Debian's clang-14 and "
                        "libclang-rt-14-dev; `make fuzz` does it).")
  endif()
  # Assertions stay on (-UNDEBUG after the build type's -DNDEBUG): a broken precondition is a finding.
  add_compile_options(-fsanitize=fuzzer-no-link -UNDEBUG)
  # The sanitizers the fuzzer's findings are reported by. HEADROOM_SANITIZE, where it is set, adds
  # the same ones to every target itself; adding them twice is harmless but left to it.
  if(NOT HEADROOM_SANITIZE)
    add_compile_options(-fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer -g)
    add_link_options(-fsanitize=address,undefined)
  endif()
  message(STATUS "HEADROOM_FUZZ: libFuzzer targets in fuzz/, run them with scripts/fuzz.sh")
endif()
