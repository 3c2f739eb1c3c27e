# Writes the man pages and shell completions by asking the built binary, so they come from the
# same tables as --help (src/cli/man_page.h, src/cli/completion.h):
#   OUT/man1/hammer.1             hammer --help-man
#   OUT/man1/hammer-COMMAND.1     hammer COMMAND --help-man, for each command of `hammer --help`
#   OUT/completions/hammer        hammer --completion bash
#   OUT/completions/_hammer       hammer --completion zsh
#   OUT/completions/hammer.fish   hammer --completion fish
#
#   cmake -DHAMMER=<path to hammer> -DOUT=<dir> -P cmake/generate_docs.cmake
cmake_minimum_required(VERSION 3.22)
if(NOT DEFINED HAMMER OR NOT DEFINED OUT)
  message(FATAL_ERROR "generate_docs.cmake: pass -DHAMMER=<binary> -DOUT=<directory>")
endif()

function(run_hammer out_file)
  execute_process(COMMAND ${HAMMER} ${ARGN} OUTPUT_FILE ${out_file} RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "generate_docs.cmake: `hammer ${ARGN}` failed (${rc})")
  endif()
endfunction()

execute_process(COMMAND ${HAMMER} --help OUTPUT_VARIABLE help RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "generate_docs.cmake: `${HAMMER} --help` failed (${rc})")
endif()
# The command list: the lines "  NAME  summary" after "commands:".
string(REGEX REPLACE ".*\ncommands:\n" "" listing "${help}")
string(REGEX MATCHALL "(^|\n)  [a-z][a-z0-9-]*" names "${listing}")
set(commands "")
foreach(entry IN LISTS names)
  string(STRIP "${entry}" name)
  list(APPEND commands ${name})
endforeach()
if(NOT commands)
  message(FATAL_ERROR "generate_docs.cmake: no commands in `hammer --help`")
endif()

file(REMOVE_RECURSE ${OUT}/man1 ${OUT}/completions)
file(MAKE_DIRECTORY ${OUT}/man1 ${OUT}/completions)
run_hammer(${OUT}/man1/hammer.1 --help-man)
foreach(command IN LISTS commands)
  run_hammer(${OUT}/man1/hammer-${command}.1 ${command} --help-man)
endforeach()
run_hammer(${OUT}/completions/hammer --completion bash)
run_hammer(${OUT}/completions/_hammer --completion zsh)
run_hammer(${OUT}/completions/hammer.fish --completion fish)
