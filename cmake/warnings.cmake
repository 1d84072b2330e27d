# Warnings for every project target; -Werror only when GPUMETER_WERROR (CI) is on.
function(gpumeter_warnings target)
  target_compile_options(${target} PRIVATE
    -Wall -Wextra -Wpedantic -Wshadow -Wconversion -Wsign-conversion
    -Wnon-virtual-dtor -Wold-style-cast -Wcast-align -Woverloaded-virtual
    # not -Wnull-dereference: GCC 12 at -O2 reports false positives inside libstdc++ (via CLI11)
    -Wdouble-promotion -Wformat=2 -Wimplicit-fallthrough)
  if(GPUMETER_WERROR)
    target_compile_options(${target} PRIVATE -Werror)
  endif()
endfunction()

# After the build type's flags on the command line, so it replaces their -g.
if(GPUMETER_LINE_DEBUG_INFO)
  add_compile_options(-g1)
endif()

if(GPUMETER_SANITIZE)
  add_compile_options(-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all)
  add_link_options(-fsanitize=address,undefined)
endif()

# One test executable per module, registered with CTest.
function(gpumeter_test name)
  cmake_parse_arguments(T "" "" "SOURCES;LIBS" ${ARGN})
  add_executable(${name} ${T_SOURCES})
  target_link_libraries(${name} PRIVATE ${T_LIBS} GTest::gtest GTest::gtest_main GTest::gmock)
  target_include_directories(${name} PRIVATE ${PROJECT_SOURCE_DIR}/tests)
  target_compile_definitions(${name} PRIVATE
    GPUMETER_TEST_SOURCE_DIR="${PROJECT_SOURCE_DIR}" GPUMETER_TEST_BINARY_DIR="${PROJECT_BINARY_DIR}")
  gpumeter_warnings(${name})
  gtest_discover_tests(${name} DISCOVERY_TIMEOUT 60)
endfunction()
