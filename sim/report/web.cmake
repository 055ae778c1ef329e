# The HTML report's scripts are compiled into headroom_report, so report.html is written by the
# binary alone and opens offline: ECharts from web/node_modules (pinned in web/package.json and
# web/package-lock.json, installed by `npm ci` in web/; `make deps` runs it) and the project's own
# chart code web/report.js and web/report.css. Included from sim/CMakeLists.txt after headroom_report.
set(HEADROOM_WEB_DIR ${PROJECT_SOURCE_DIR}/web)
set(_echarts ${HEADROOM_WEB_DIR}/node_modules/echarts/dist/echarts.min.js)
if(NOT EXISTS ${_echarts})
  message(FATAL_ERROR "${_echarts} is missing: the HTML report embeds ECharts from the npm registry. "
                      "Run `npm ci` in ${HEADROOM_WEB_DIR} (`make deps` does it), then configure again.")
endif()

set(_embedded "")
foreach(_pair IN ITEMS "echarts_js|${_echarts}" "report_js|${HEADROOM_WEB_DIR}/report.js"
                       "report_css|${HEADROOM_WEB_DIR}/report.css")
  string(REPLACE "|" ";" _pair "${_pair}")
  list(GET _pair 0 _symbol)
  list(GET _pair 1 _input)
  set(_output ${CMAKE_CURRENT_BINARY_DIR}/report/embedded_${_symbol}.cpp)
  add_custom_command(OUTPUT ${_output}
    COMMAND ${CMAKE_COMMAND} -DINPUT=${_input} -DOUTPUT=${_output} -DSYMBOL=${_symbol}
            -P ${PROJECT_SOURCE_DIR}/cmake/embed_text.cmake
    DEPENDS ${_input} ${PROJECT_SOURCE_DIR}/cmake/embed_text.cmake
    COMMENT "Embedding ${_input}" VERBATIM)
  list(APPEND _embedded ${_output})
endforeach()
target_sources(headroom_report PRIVATE ${_embedded})
# Byte arrays with no headers to share: each stays its own translation unit in a unity build.
set_source_files_properties(${_embedded} PROPERTIES SKIP_UNITY_BUILD_INCLUSION ON)
# Where the CLI finds the renderer for --png/--svg (web/render_charts.mjs with playwright-core);
# HEADROOM_WEB_DIR in the environment overrides it at run time.
target_compile_definitions(headroom_report PRIVATE HEADROOM_WEB_DIR="${HEADROOM_WEB_DIR}")
