# symbols.cmake - compares the dynamic symbols that libdsml.so exports with
# the checked-in list, or rewrites the list.
#
#   cmake -DNM=nm -DLIBRARY=libdsml.so -DLIST=tests/abi/dsml.symbols
#         [-DMODE=update] -P cmake/symbols.cmake
#
# The list holds one symbol name per line, sorted, without version nodes.
cmake_minimum_required(VERSION 3.25)
foreach(_v NM LIBRARY LIST)
  if(NOT DEFINED ${_v} OR "${${_v}}" STREQUAL "")
    message(FATAL_ERROR "symbols.cmake: -D${_v}=... is required")
  endif()
endforeach()
if(NOT DEFINED MODE)
  set(MODE check)
endif()

execute_process(
  COMMAND "${NM}" -D --defined-only --format=posix "${LIBRARY}"
  OUTPUT_VARIABLE _out ERROR_VARIABLE _err RESULT_VARIABLE _rc)
if(NOT _rc EQUAL 0)
  message(FATAL_ERROR "${NM} failed on ${LIBRARY}: ${_err}")
endif()

# Lines: "name[@[@]VERSION] TYPE [value [size]]".  Version nodes are absolute
# ("A") symbols; they are not part of the list.
string(REPLACE "\n" ";" _lines "${_out}")
set(_actual "")
foreach(_line IN LISTS _lines)
  if(_line MATCHES "^([^ @]+)(@[^ ]*)? ([A-Za-z]) ")
    if(NOT CMAKE_MATCH_3 STREQUAL "A")
      list(APPEND _actual "${CMAKE_MATCH_1}")
    endif()
  endif()
endforeach()
list(REMOVE_DUPLICATES _actual)
list(SORT _actual)

if(MODE STREQUAL "update")
  list(JOIN _actual "\n" _text)
  file(WRITE "${LIST}" "${_text}\n")
  list(LENGTH _actual _n)
  message(STATUS "wrote ${_n} symbols to ${LIST}")
  return()
endif()

if(NOT EXISTS "${LIST}")
  message(FATAL_ERROR "${LIST} does not exist; create it with cmake/update-symbols.sh")
endif()
file(STRINGS "${LIST}" _expected)
list(FILTER _expected EXCLUDE REGEX "^(#.*|[ \t]*)$")

set(_added ${_actual})
list(REMOVE_ITEM _added ${_expected})
set(_removed ${_expected})
list(REMOVE_ITEM _removed ${_actual})
if(NOT _added AND NOT _removed)
  list(LENGTH _actual _n)
  message(STATUS "${_n} exported symbols match ${LIST}")
  return()
endif()

# Show the difference as a unified diff against the list (written beside
# the library), or as +/- lines when diff is not installed.
list(JOIN _actual "\n" _text)
set(_actual_file "${LIBRARY}.symbols")
file(WRITE "${_actual_file}" "${_text}\n")
find_program(_diff_program diff)
if(_diff_program)
  execute_process(COMMAND "${_diff_program}" -u "${LIST}" "${_actual_file}")
else()
  foreach(_s IN LISTS _removed)
    execute_process(COMMAND "${CMAKE_COMMAND}" -E echo "-${_s}")
  endforeach()
  foreach(_s IN LISTS _added)
    execute_process(COMMAND "${CMAKE_COMMAND}" -E echo "+${_s}")
  endforeach()
endif()
message(FATAL_ERROR
  "The exported symbols of ${LIBRARY} differ from ${LIST} (diff above).  "
  "If the change is intended (new public API), run cmake/update-symbols.sh "
  "and commit tests/abi/dsml.symbols.  Removing or renaming a symbol breaks "
  "the ABI: bump DSML_ABI_VERSION.")
