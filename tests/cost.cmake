# ctest starts the longest tests first (COST: seconds measured under the sanitizers, rounded), so
# that on a fresh clone, with no timings of an earlier run, two cores do not end the suite with one
# long test running alone. Included by ctest after every executable's discovered list
# (TEST_INCLUDE_FILES, tests/CMakeLists.txt). Figures: docs/development.md, "Build and test times".
set(_headroom_test_costs
  "per-layer buffers pin the cache" 36
  "^cli/run --check: the quickstart" 26
  "^cli/run --check: SGLang" 16
  "chunked prefill with default and with optimistic" 15
  "random traffic keeps every invariant" 14
  "property: 600k random operations" 14
  "^cli/run: vLLM replays the Mooncake conversation trace" 11
  "two MPI ranks" 11
  "memory bound: the request table" 9
  "a real H100 recording reads compressed" 9
  "a roomy pool never retracts" 9
  "^engine/paged: 10\\^5 random operations" 9
  "bad input corpus: scenario YAML" 9
  "the request past the cap is refused" 8
  "new GPUs, architectures and weight formats" 8
  "replay H100: one step stream under three configurations" 7
  "tune jointly under an SLO" 7
  "bad input corpus: command-line flags" 7
  "property: 400k random operations" 7
  "replay H100: a serving history recorded with expandable segments" 6)
foreach(_list IN ITEMS test_cli_TESTS test_allocator_TESTS test_engine_TESTS test_scenario_TESTS)
  foreach(_test IN LISTS ${_list})
    set(_pairs ${_headroom_test_costs})
    while(_pairs)
      list(POP_FRONT _pairs _pattern _cost)
      if(_test MATCHES "${_pattern}")
        set_tests_properties("${_test}" PROPERTIES COST ${_cost})
        break()
      endif()
    endwhile()
  endforeach()
endforeach()
