# The Python tooling's tests (regress/, plots/, the ci/ entry points), each run
# by ci/python (an interpreter with matplotlib, numpy and scipy; the
# repository on PYTHONPATH). Included from tests/CMakeLists.txt.
#
# Labels: unit (pure unit tests and bad-input cases, seconds), smoke (short
# end to end with this build's binaries), slow (accuracy, Monte-Carlo and
# speed studies, exhaustive fuzzing, the long end-to-end runs, Chromium
# renders).
#
# A test file listed below gets its name, label, arguments and properties
# here; every other tests/test_*.py runs as the unit test named after it
# (test_layers.py: `layers`), so a new tool's test needs no line.
set(PARBENCH_PYTHON ${PROJECT_SOURCE_DIR}/ci/python)
function(parbench_python_test name label script)
  add_test(NAME ${name} COMMAND ${PARBENCH_PYTHON} ${script} ${ARGN})
  set_tests_properties(${name} PROPERTIES LABELS ${label})
  set_property(GLOBAL APPEND PROPERTY parbench_python_listed ${script})
endfunction()

# The loader: schema 1, older files, strict JSON, robustness (every cut,
# random bytes and mutations: 2 s), the tools around it.
parbench_python_test(loader unit ${CMAKE_CURRENT_SOURCE_DIR}/test_loader.py)
# Charts and the report: derived figures, chart data, bad input; then every
# chart drawn end to end; the report rendered in headless Chromium (skipped,
# saying so, without Chromium).
# Every command of README.md's and docs/'s code blocks parses with this build
# (bench lines as listings); bench's checks of Google Benchmark's own flags.
parbench_python_test(doc_commands unit ${CMAKE_CURRENT_SOURCE_DIR}/test_doc_commands.py ${CMAKE_BINARY_DIR})
parbench_python_test(plots unit ${CMAKE_CURRENT_SOURCE_DIR}/test_plots.py)
parbench_python_test(plots_charts slow ${CMAKE_CURRENT_SOURCE_DIR}/test_plots_charts.py)
parbench_python_test(plots_report_html unit ${CMAKE_CURRENT_SOURCE_DIR}/test_report_html.py)
# The smoke run's report within its time budget, timed alone.
parbench_python_test(plots_report_speed slow ${CMAKE_CURRENT_SOURCE_DIR}/test_report_speed.py ${SMOKE_JSON})
set_tests_properties(plots_report_speed PROPERTIES FIXTURES_REQUIRED smoke_json RUN_SERIAL TRUE)
find_program(CHROMIUM NAMES chromium chromium-browser)
if(NOT CHROMIUM)
  set(CHROMIUM /usr/bin/chromium)
endif()
add_test(NAME plots_report_renders
         COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/render_report.sh ${CHROMIUM}
                 ${CMAKE_CURRENT_SOURCE_DIR}/data/gb171.json ${CMAKE_CURRENT_SOURCE_DIR}/data/gb183.json)
set_tests_properties(plots_report_renders PROPERTIES SKIP_RETURN_CODE 77 LABELS slow)
# The fuzzed front door (tests/test_fuzz.py): every tool that reads a
# document fed mutated real documents, bench's command line random arguments:
# 280 documents and 40 command lines with a fixed seed (about 25 s); then
# 10,200 documents and 600 command lines with seed 649604, the draw that last
# found a bug: a red CI run then names a change, not a new draw. A new draw is
# `ci/python tests/test_fuzz.py --slow --bench BENCH` by hand (it prints its seed).
parbench_python_test(fuzz unit ${CMAKE_CURRENT_SOURCE_DIR}/test_fuzz.py --bench $<TARGET_FILE:bench>)
parbench_python_test(fuzz_slow slow ${CMAKE_CURRENT_SOURCE_DIR}/test_fuzz.py --slow --seed 649604
                     --bench $<TARGET_FILE:bench>)
set_tests_properties(fuzz_slow PROPERTIES TIMEOUT 1800)
# The comparator: statistics and the command; then its accuracy on synthetic
# suites (Monte Carlo) and its speed.
parbench_python_test(compare unit ${CMAKE_CURRENT_SOURCE_DIR}/test_compare.py)
parbench_python_test(compare_accuracy slow ${CMAKE_CURRENT_SOURCE_DIR}/test_compare_accuracy.py)
# Change points of the nightly history: E-Divisive and placed steps; then its
# accuracy on synthetic series and its speed.
parbench_python_test(changepoint unit ${CMAKE_CURRENT_SOURCE_DIR}/test_changepoint.py)
parbench_python_test(changepoint_accuracy slow ${CMAKE_CURRENT_SOURCE_DIR}/test_changepoint_accuracy.py)
# ci/bisect on a fake Google Benchmark project in a temporary git repository:
# its refusals and step logic; then whole bisections (a step, an unbuildable
# commit, two opposite steps, a noisy benchmark, a range of one, no change).
parbench_python_test(bisect unit ${CMAKE_CURRENT_SOURCE_DIR}/test_bisect.py BadInput Evidence)
parbench_python_test(bisect_e2e slow ${CMAKE_CURRENT_SOURCE_DIR}/test_bisect.py Bisections)
# The history store: ingest, series, rebuilds from the archive, bad input;
# then the same store on PostgreSQL (a server the test starts on a local
# socket; skipped, saying so, without Debian's postgresql and psycopg2), four
# processes at once on each backend, a server gone mid-ingest.
parbench_python_test(history unit ${CMAKE_CURRENT_SOURCE_DIR}/test_history.py)
parbench_python_test(history_backends unit ${CMAKE_CURRENT_SOURCE_DIR}/test_history_backends.py)
# Trends of the nightly history: the stepped history's changes, page and
# charts; then the command's longer runs and the page rendered in Chromium.
parbench_python_test(trends unit ${CMAKE_CURRENT_SOURCE_DIR}/test_trends.py)
parbench_python_test(alerts unit ${CMAKE_CURRENT_SOURCE_DIR}/test_alerts.py)
parbench_python_test(trends_e2e slow ${CMAKE_CURRENT_SOURCE_DIR}/test_trends_e2e.py)
# The nightly job: what it selects (roles, run names); then two nights on a
# few instances with this build's bench.
parbench_python_test(nightly_select unit ${CMAKE_CURRENT_SOURCE_DIR}/test_nightly_select.py)
parbench_python_test(nightly smoke ${CMAKE_CURRENT_SOURCE_DIR}/test_nightly.py ${CMAKE_BINARY_DIR})
set_tests_properties(nightly PROPERTIES TIMEOUT 300 RESOURCE_LOCK gpu_nightly)
# A night survives every fault: its locks, killed calls and resumed steps
# part by part; then the fault matrix (killed in each step, a full disk,
# PostgreSQL restarted mid-ingest, two nights at once, each resumed to a
# clean night) and a whole night on PostgreSQL.
parbench_python_test(nightly_guard unit ${CMAKE_CURRENT_SOURCE_DIR}/test_nightly_guard.py)
parbench_python_test(nightly_faults slow ${CMAKE_CURRENT_SOURCE_DIR}/test_nightly_faults.py ${CMAKE_BINARY_DIR})
set_tests_properties(nightly_faults PROPERTIES TIMEOUT 900 RESOURCE_LOCK gpu_nightly)
# The crash-safe suite runner with the real bench and its fault switch
# (a crash, a hang killed at its time limit, GPU memory exhausted).
parbench_python_test(run_suite slow ${CMAKE_CURRENT_SOURCE_DIR}/test_run_suite.py $<TARGET_FILE:bench>)
# Its gpu-oom fault takes every byte of the GPU: it holds the lock of every
# test that uses the GPU (tests/CMakeLists.txt), so none runs beside it.
set_tests_properties(run_suite PROPERTIES TIMEOUT 300 RESOURCE_LOCK "gpu_tests;gpu_smoke;gpu_nightly")
# The scale-out driver with a stand-in bench: steps kept, a failure, a cut-off.
# clang-format and flake8 over the tree (skipped where they are not installed).
add_test(NAME check_format COMMAND ${PROJECT_SOURCE_DIR}/ci/check-format)
set_tests_properties(check_format PROPERTIES SKIP_RETURN_CODE 77 LABELS unit)
# sor-solve (the converged SOR field and its residuals) and the report's SOR pictures.
parbench_python_test(sor_solve smoke ${CMAKE_CURRENT_SOURCE_DIR}/test_sor_solve.py $<TARGET_FILE:sor-solve>)
set_tests_properties(sor_solve PROPERTIES TIMEOUT 300)
# kmeans-inputs and the k-means peers script (peers/kmeans_peers.py).
parbench_python_test(kmeans_peers smoke ${CMAKE_CURRENT_SOURCE_DIR}/test_kmeans_peers.py $<TARGET_FILE:kmeans-inputs>)
set_tests_properties(kmeans_peers PROPERTIES TIMEOUT 300)
# Every other test file: a unit test of its own name (called at the end of
# tests/CMakeLists.txt, after the tests it registers by hand). Among them the
# comparator's and the trends' outputs held byte for byte (behaviour), the
# layers of the Python package (layers), the CI workflows (workflows).
function(parbench_python_rest)
  get_property(listed GLOBAL PROPERTY parbench_python_listed)
  file(GLOB scripts CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/test_*.py)
  foreach(script IN LISTS scripts)
    if(NOT script IN_LIST listed)
      get_filename_component(stem ${script} NAME_WE)
      string(REGEX REPLACE "^test_" "" name ${stem})
      parbench_python_test(${name} unit ${script})
    endif()
  endforeach()
endfunction()
