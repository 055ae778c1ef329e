# ctest starts the longest tests first (COST: seconds measured under the sanitizers, rounded), so
# that on a fresh clone, with no timings of an earlier run, two cores do not end the suite with one
# long test running alone. Included by ctest after every executable's discovered list
# (TEST_INCLUDE_FILES, tests/CMakeLists.txt). Figures: docs/development.md, "Build and test times".
set(_headroom_test_costs
  "^cli/run --check: the quickstart" 33
  "per-layer buffers pin the cache" 26
  "^cli/run --check: SGLang" 17
  "^cli/run: vLLM replays the Mooncake conversation trace" 12
  "chunked prefill with default and with optimistic" 11
  "random traffic keeps every invariant" 10
  "property: 600k random operations" 10
  "two MPI ranks" 9
  "a roomy pool never retracts" 7
  "property: 400k random operations" 7
  "replay H100: one step stream under three configurations" 6
  "the request past the cap is refused" 6
  "bad input corpus: scenario YAML" 6
  "^cli/tune on the quickstart: run at the value found" 6
  "replay H100: a serving history recorded with expandable segments" 6
  "a real H100 recording reads compressed" 6
  "new GPUs, architectures and weight formats" 6
  "^engine/paged: 10\^5 random operations" 6
  "memory bound: the request table" 5
  "truncated, corrupt and bomb files" 5
  "an optimistic ratio without chunked prefill" 5
  "tune jointly under an SLO" 5
  "bad input corpus: command-line flags" 4)
foreach(_list IN ITEMS test_cli_TESTS test_allocator_TESTS test_engine_TESTS test_scenario_TESTS test_workload_TESTS)
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
