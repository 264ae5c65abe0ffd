# Install rules: the header, libdsml.so.<ABI> (component Runtime), libdsml.a,
# the CMake package (dsml::dsml, dsml::dsml_static), a relocatable dsml.pc
# (component Development), and dsml-render with its man page (component CLI).
include(CMakePackageConfigHelpers)

set(DSML_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/dsml
    CACHE STRING "Where to install dsmlConfig.cmake, relative to the prefix")
set(DSML_INSTALL_PKGCONFIGDIR ${CMAKE_INSTALL_LIBDIR}/pkgconfig
    CACHE STRING "Where to install dsml.pc, relative to the prefix")

install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/dsml
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
        COMPONENT Development
        FILES_MATCHING PATTERN "*.h")

install(TARGETS ${DSML_LIBRARY_TARGETS}
        EXPORT dsmlTargets
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
          COMPONENT Runtime
          NAMELINK_COMPONENT Development
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
          COMPONENT Development
        RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR}
          COMPONENT Runtime
        INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})

install(EXPORT dsmlTargets
        NAMESPACE dsml::
        DESTINATION ${DSML_INSTALL_CMAKEDIR}
        COMPONENT Development)

# Before 1.0 a minor release may change the API, so only the same minor
# matches; from 1.0 on, any release of the same major does.
if(PROJECT_VERSION_MAJOR EQUAL 0)
  set(_dsml_compat SameMinorVersion)
else()
  set(_dsml_compat SameMajorVersion)
endif()
configure_package_config_file(
  ${CMAKE_CURRENT_LIST_DIR}/dsmlConfig.cmake.in
  ${PROJECT_BINARY_DIR}/dsmlConfig.cmake
  INSTALL_DESTINATION ${DSML_INSTALL_CMAKEDIR})
write_basic_package_version_file(
  ${PROJECT_BINARY_DIR}/dsmlConfigVersion.cmake
  VERSION ${PROJECT_VERSION}
  COMPATIBILITY ${_dsml_compat})
install(FILES ${PROJECT_BINARY_DIR}/dsmlConfig.cmake
              ${PROJECT_BINARY_DIR}/dsmlConfigVersion.cmake
        DESTINATION ${DSML_INSTALL_CMAKEDIR}
        COMPONENT Development)

# dsml.pc finds its prefix from its own place (${pcfiledir}), so the installed
# tree can be moved.  Absolute install directories are written as they are.
if(IS_ABSOLUTE "${DSML_INSTALL_PKGCONFIGDIR}")
  set(DSML_PC_PREFIX "${CMAKE_INSTALL_PREFIX}")
else()
  file(RELATIVE_PATH _dsml_up "/prefix/${DSML_INSTALL_PKGCONFIGDIR}" "/prefix")
  string(REGEX REPLACE "/$" "" _dsml_up "${_dsml_up}")
  set(DSML_PC_PREFIX "\${pcfiledir}/${_dsml_up}")
endif()
foreach(_dir LIBDIR INCLUDEDIR)
  if(IS_ABSOLUTE "${CMAKE_INSTALL_${_dir}}")
    set(DSML_PC_${_dir} "${CMAKE_INSTALL_${_dir}}")
  else()
    set(DSML_PC_${_dir} "\${prefix}/${CMAKE_INSTALL_${_dir}}")
  endif()
endforeach()
configure_file(${CMAKE_CURRENT_LIST_DIR}/dsml.pc.in ${PROJECT_BINARY_DIR}/dsml.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/dsml.pc
        DESTINATION ${DSML_INSTALL_PKGCONFIGDIR}
        COMPONENT Development)

if(DSML_BUILD_CLI AND TARGET dsml-render)
  # Find libdsml.so beside the installed tree when the prefix is not a
  # system one.
  file(RELATIVE_PATH _dsml_bin_to_lib
       "/prefix/${CMAKE_INSTALL_BINDIR}" "/prefix/${CMAKE_INSTALL_LIBDIR}")
  set_target_properties(dsml-render PROPERTIES
    INSTALL_RPATH "$ORIGIN/${_dsml_bin_to_lib}")
  install(TARGETS dsml-render
          RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR}
          COMPONENT CLI)
  if(EXISTS ${PROJECT_SOURCE_DIR}/docs/dsml-render.1)
    install(FILES ${PROJECT_SOURCE_DIR}/docs/dsml-render.1
            DESTINATION ${CMAKE_INSTALL_MANDIR}/man1
            COMPONENT CLI)
  endif()
endif()

# The Python binding (component Python): the package dsml, and a _library.py
# that names libdsml.so.<ABI> relative to the package, so the installed tree
# can be moved.  The default directory is the one Debian's python3 reads for
# the /usr prefix; other prefixes go on PYTHONPATH.
if(BUILD_SHARED_LIBS)
  set(DSML_INSTALL_PYTHONDIR ${CMAKE_INSTALL_LIBDIR}/python3/dist-packages
      CACHE STRING "Where to install the Python package dsml, relative to the prefix")
  set(_dsml_soname libdsml.so.${DSML_ABI_VERSION})
  if(IS_ABSOLUTE "${DSML_INSTALL_PYTHONDIR}" OR IS_ABSOLUTE "${CMAKE_INSTALL_LIBDIR}")
    set(_dsml_py_lib "${CMAKE_INSTALL_FULL_LIBDIR}/${_dsml_soname}")
  else()
    file(RELATIVE_PATH _dsml_py_lib "/prefix/${DSML_INSTALL_PYTHONDIR}/dsml"
         "/prefix/${CMAKE_INSTALL_LIBDIR}/${_dsml_soname}")
  endif()
  file(CONFIGURE OUTPUT ${PROJECT_BINARY_DIR}/python/_library.py
       CONTENT "\"\"\"Where `cmake --install` put libdsml, from this directory.\"\"\"\nPATH = \"${_dsml_py_lib}\"\n")
  install(DIRECTORY ${PROJECT_SOURCE_DIR}/bindings/python/dsml
          DESTINATION ${DSML_INSTALL_PYTHONDIR}
          COMPONENT Python
          FILES_MATCHING PATTERN "*.py"
          PATTERN "__pycache__" EXCLUDE)
  install(FILES ${PROJECT_BINARY_DIR}/python/_library.py
          DESTINATION ${DSML_INSTALL_PYTHONDIR}/dsml
          COMPONENT Python)
endif()
