# Source lists. Globbed so that adding a file under csrc/ needs no CMake edit;
# CONFIGURE_DEPENDS re-globs on every build.
file(GLOB OPDISPATCH_CORE_SOURCES CONFIGURE_DEPENDS
  ${CMAKE_CURRENT_LIST_DIR}/../csrc/opdispatch/*.cpp
  ${CMAKE_CURRENT_LIST_DIR}/../csrc/opdispatch/core/*.cpp
  ${CMAKE_CURRENT_LIST_DIR}/../csrc/opdispatch/schema/*.cpp
  ${CMAKE_CURRENT_LIST_DIR}/../csrc/opdispatch/dispatch/*.cpp)
file(GLOB OPDISPATCH_PYTHON_SOURCES CONFIGURE_DEPENDS
  ${CMAKE_CURRENT_LIST_DIR}/../csrc/python/*.cpp)
