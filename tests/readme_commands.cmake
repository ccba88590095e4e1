# SPDX-License-Identifier: Apache-2.0
# ctest readme.ci_command: the README's test command (the shell line that ends in
# `ctest --preset default`) and the one .ci/run runs must be the same line, character for
# character, so CI runs what the README tells users to run.
#   cmake -DREADME=README.md -DCI_RUN=.ci/run -P tests/readme_commands.cmake
foreach(var README CI_RUN)
  if(NOT DEFINED ${var} OR NOT EXISTS "${${var}}")
    message(FATAL_ERROR "readme_commands: pass -D${var}=<file> (got '${${var}}')")
  endif()
endforeach()

# The lines of `file` that run the default test preset.
function(test_command_lines file out)
  file(STRINGS "${file}" lines)
  set(found "")
  foreach(line IN LISTS lines)
    string(STRIP "${line}" line)
    if(line MATCHES "ctest --preset default$" AND NOT line MATCHES "^#")
      list(APPEND found "${line}")
    endif()
  endforeach()
  set(${out} "${found}" PARENT_SCOPE)
endfunction()

test_command_lines("${README}" readme_lines)
test_command_lines("${CI_RUN}" ci_lines)
list(LENGTH readme_lines readme_count)
list(LENGTH ci_lines ci_count)
if(NOT readme_count EQUAL 1)
  message(FATAL_ERROR "readme_commands: ${README} has ${readme_count} lines ending in "
                      "'ctest --preset default' (expected exactly one, its test command): ${readme_lines}")
endif()
if(NOT ci_count EQUAL 1)
  message(FATAL_ERROR "readme_commands: ${CI_RUN} has ${ci_count} lines ending in "
                      "'ctest --preset default' (expected exactly one): ${ci_lines}")
endif()
if(NOT readme_lines STREQUAL ci_lines)
  message(FATAL_ERROR "readme_commands: the README's test command and .ci/run's differ:\n"
                      "  README.md: ${readme_lines}\n  .ci/run:   ${ci_lines}\n"
                      "Change both, so CI runs what the README tells users to run.")
endif()
message(STATUS "ok: .ci/run runs the README's test command verbatim: ${ci_lines}")
