# The Python tooling's tests (plots/, the regression engine, ci/ entry points).
# Included from tests/CMakeLists.txt.
# Plotting tools: unit tests with a Python that has matplotlib, and the
# report rendered in headless Chromium (skipped, saying so, without Chromium).
add_test(NAME plots_unit COMMAND ${PROJECT_SOURCE_DIR}/plots/with-python ${CMAKE_CURRENT_SOURCE_DIR}/test_plots.py)
add_test(NAME plots_loader COMMAND ${PROJECT_SOURCE_DIR}/plots/with-python ${CMAKE_CURRENT_SOURCE_DIR}/test_loader.py)
add_test(NAME plots_report_html COMMAND ${PROJECT_SOURCE_DIR}/plots/with-python ${CMAKE_CURRENT_SOURCE_DIR}/test_report_html.py)
# The nightly job end to end, twice, on the smoke suite with this build's bench.
add_test(NAME nightly COMMAND Python3::Interpreter ${CMAKE_CURRENT_SOURCE_DIR}/test_nightly.py ${CMAKE_BINARY_DIR})
set_tests_properties(nightly PROPERTIES TIMEOUT 900 RUN_SERIAL TRUE)
# The CI workflows parse and name only commands and options that exist.
add_test(NAME workflows COMMAND ${PROJECT_SOURCE_DIR}/plots/with-python ${CMAKE_CURRENT_SOURCE_DIR}/test_workflows.py)
# The crash-safe suite runner with the real bench and its fault switch.
add_test(NAME run_suite COMMAND Python3::Interpreter ${CMAKE_CURRENT_SOURCE_DIR}/test_run_suite.py $<TARGET_FILE:bench>)
set_tests_properties(run_suite PROPERTIES TIMEOUT 300)
# The comparator: statistics, accuracy on synthetic suites, the command.
add_test(NAME compare COMMAND ${PROJECT_SOURCE_DIR}/plots/with-python ${CMAKE_CURRENT_SOURCE_DIR}/test_compare.py)
add_test(NAME gemm_tune COMMAND ${PROJECT_SOURCE_DIR}/plots/with-python ${CMAKE_CURRENT_SOURCE_DIR}/test_gemm_tune.py)
# Change points of the nightly history: E-Divisive, accuracy on synthetic series, speed.
# clang-format and flake8 over the tree (skipped where they are not installed).
add_test(NAME check_format COMMAND ${PROJECT_SOURCE_DIR}/ci/check-format)
set_tests_properties(check_format PROPERTIES SKIP_RETURN_CODE 77)
add_test(NAME ptx_diff COMMAND Python3::Interpreter ${CMAKE_CURRENT_SOURCE_DIR}/test_ptx_diff.py)
add_test(NAME changepoint COMMAND ${PROJECT_SOURCE_DIR}/plots/with-python ${CMAKE_CURRENT_SOURCE_DIR}/test_changepoint.py)
# The history store: ingest, series, rebuilds from the archive, bad input.
add_test(NAME history COMMAND ${PROJECT_SOURCE_DIR}/plots/with-python ${CMAKE_CURRENT_SOURCE_DIR}/test_history.py)
# Trends of the nightly history: change points per segment, the page and its charts (rendered in Chromium when installed).
add_test(NAME trends COMMAND ${PROJECT_SOURCE_DIR}/plots/with-python ${CMAKE_CURRENT_SOURCE_DIR}/test_trends.py)
find_program(CHROMIUM NAMES chromium chromium-browser)
if(NOT CHROMIUM)
  set(CHROMIUM /usr/bin/chromium)
endif()
add_test(NAME plots_report_renders
         COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/render_report.sh ${CHROMIUM}
                 ${CMAKE_CURRENT_SOURCE_DIR}/data/gb171.json ${CMAKE_CURRENT_SOURCE_DIR}/data/gb183.json)
set_tests_properties(plots_report_renders PROPERTIES SKIP_RETURN_CODE 77)
# sor-solve (the converged SOR field and its residuals) and the report's SOR pictures.
add_test(NAME sor_solve COMMAND ${PROJECT_SOURCE_DIR}/plots/with-python ${CMAKE_CURRENT_SOURCE_DIR}/test_sor_solve.py
                               $<TARGET_FILE:sor-solve>)
set_tests_properties(sor_solve PROPERTIES TIMEOUT 300)
# kmeans-inputs and the k-means peers script (peers/kmeans_peers.py).
add_test(NAME kmeans_peers COMMAND ${PROJECT_SOURCE_DIR}/plots/with-python ${CMAKE_CURRENT_SOURCE_DIR}/test_kmeans_peers.py
                                   $<TARGET_FILE:kmeans-inputs>)
set_tests_properties(kmeans_peers PROPERTIES TIMEOUT 300)
