# ctest starts the longest tests first (COST: seconds measured under the sanitizers, rounded), so
# that on a fresh clone, with no timings of an earlier run, two cores do not end the suite with one
# long test running alone. Included by ctest after every executable's discovered list
# (TEST_INCLUDE_FILES, tests/CMakeLists.txt). Figures: docs/development.md, "Build and test times".
set(_headroom_test_costs
  "per-layer buffers pin the cache" 30
  "^cli/run --check: the quickstart" 25
  "^cli/run --check: SGLang" 21
  "^cli/run: vLLM replays the Mooncake conversation trace" 12
  "two MPI ranks" 11
  "property: 600k random operations" 11
  "property: 400k random operations" 9
  "new GPUs, architectures and weight formats" 8
  "replay H100: one step stream under three configurations" 8
  "replay H100: a serving history recorded with expandable segments" 6
  "a real H100 recording reads compressed" 6
  "bad input corpus: scenario YAML" 6
  "truncated, corrupt and bomb files" 6
  "^cli/tune on the quickstart: run at the value found" 5
  "tune jointly under an SLO" 5
  "the request past the cap is refused" 5
  "memory bound: the request table" 5
  "random traffic keeps every invariant" 5
  "bad input corpus: trace files" 5
  "tune jointly: the fraction's answer" 4
  "bad input corpus: command-line flags" 4
  "a sweep stopped halfway resumes" 4
  "per-layer MLA decode buffers the profile run never saw" 4
  "tune's answer: the cliff bisected" 3
  "a sampler spike at 1024 sequences" 3
  "^cli/run: LightLLM replays the Mooncake conversation trace" 3
  "^cli/run: the same scenario and seed give byte-identical outputs" 3
  "^cli/run: the quickstart serves its workload" 3
  "a snapshot written as JSON reads back equal" 3
  "a 1,000,000-row Azure trace streams in bounded memory" 3)
foreach(_list IN ITEMS test_cli_TESTS test_allocator_TESTS test_engine_TESTS test_scenario_TESTS test_workload_TESTS
                       test_core_TESTS test_device_TESTS test_model_TESTS test_latency_TESTS test_policy_TESTS
                       test_report_TESTS)
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
