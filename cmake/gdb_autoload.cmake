# SPDX-License-Identifier: BSD-2-Clause
# Run at install time (CMakeLists.txt's install(CODE)): put the gdb
# extension where gdb auto-loads it for each library in ult_libs, under
# <prefix>/<ult_datadir>/gdb/auto-load followed by the library's real
# path, with the prefix given to this install.  file(INSTALL) adds
# DESTDIR to where the file goes, not to the path gdb will see.
set(prefix "${CMAKE_INSTALL_PREFIX}")
if("$ENV{DESTDIR}" STREQUAL "" AND IS_DIRECTORY "${prefix}")
  # gdb matches the library's real path: resolve the prefix's links.
  get_filename_component(prefix "${prefix}" REALPATH)
endif()
set(libdir "${ult_libdir}")
if(NOT IS_ABSOLUTE "${libdir}")
  set(libdir "${prefix}/${libdir}")
endif()
set(datadir "${ult_datadir}")
if(NOT IS_ABSOLUTE "${datadir}")
  set(datadir "${CMAKE_INSTALL_PREFIX}/${datadir}")
endif()
foreach(lib ${ult_libs})
  file(INSTALL DESTINATION "${datadir}/gdb/auto-load${libdir}" TYPE FILE
    RENAME "${lib}-gdb.py" FILES "${ult_gdb_script}")
endforeach()
