# HEADROOM_SANITIZE=ON: every target of ours (the sim layers, the headroom binary, the tests and the
# test tools) is compiled and linked with AddressSanitizer (with LeakSanitizer) and
# UndefinedBehaviorSanitizer, and any finding ends the process (-fno-sanitize-recover=all), so a
# test that triggers one fails. `make sanitize` builds this in build-asan with clang-14 (Debian's
# clang-14 and libclang-rt-14-dev, the sanitizer runtimes), the compiler libFuzzer targets need too.
# Included from the top-level CMakeLists.txt before any target is defined; the options apply to
# every target from here on (the third-party libraries are prebuilt Debian packages, not rebuilt).
option(HEADROOM_SANITIZE "Build everything with AddressSanitizer and UndefinedBehaviorSanitizer" OFF)

if(HEADROOM_SANITIZE)
  if(NOT CMAKE_CXX_COMPILER_ID MATCHES "Clang|GNU")
    message(FATAL_ERROR "HEADROOM_SANITIZE needs clang or GCC, not ${CMAKE_CXX_COMPILER_ID}")
  endif()
  # `undefined` covers signed overflow, shifts, misaligned and null access, out-of-range enum and
  # bool loads; float-cast-overflow (an out-of-range double -> integer conversion) is in clang's
  # `undefined` but not in GCC's, so it is named.
  set(_headroom_sanitizers -fsanitize=address,undefined,float-cast-overflow -fno-sanitize-recover=all)
  # -O1 -g1 come after the build type's flags, so they win: -O1 keeps the ASan build quick to
  # compile and readable in stack traces (clang's AddressSanitizer docs recommend -O1);
  # -fno-omit-frame-pointer gives the sanitizers' fast unwinder full stacks.
  # _GLIBCXX_ASSERTIONS adds libstdc++'s bounds checks (operator[] on vector, string, span...),
  # which catch an index past size() but inside capacity(), where ASan sees valid memory.
  add_compile_options(${_headroom_sanitizers} -fno-omit-frame-pointer -O1 -g1)
  add_compile_definitions(_GLIBCXX_ASSERTIONS)
  add_link_options(${_headroom_sanitizers})
  # LLVM's linker where it is installed (Debian's lld): with the sanitizer runtimes and -g1 a test
  # executable's link is 2.0 CPU-s with GNU ld and 0.45 with lld (test_engine, clang 14, measured
  # alternately twice); the build links about thirty executables. Without lld, GNU ld as before.
  include(CheckLinkerFlag)
  check_linker_flag(CXX -fuse-ld=lld HEADROOM_HAVE_LLD)
  if(HEADROOM_HAVE_LLD)
    add_link_options(-fuse-ld=lld)
  endif()
  message(STATUS "HEADROOM_SANITIZE: AddressSanitizer + UndefinedBehaviorSanitizer on every target")
endif()
