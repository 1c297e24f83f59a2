# Installs a reducelab build tree (or first configures and builds a library-only one), then
# configures, builds and runs the consumer project against the install tree.
#   -DSOURCE=<reducelab source> -DWORK=<scratch folder> -DGENERATOR=<generator>
#   -DBUILD=<build tree to install>  or  -DLIBRARY_ONLY=ON
#   [-DCUDA_COMPILER=<nvcc> -DCUDA_ARCHITECTURES=<list>]  for the consumer's GPU variant
foreach(var SOURCE WORK GENERATOR)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "run_consumer.cmake: -D${var}= is required")
  endif()
endforeach()
file(REMOVE_RECURSE ${WORK})

function(step)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    list(JOIN ARGN " " line)
    message(FATAL_ERROR "failed (${rc}): ${line}")
  endif()
endfunction()

set(consumer_cuda ON)
if(LIBRARY_ONLY)
  # The lab's packages are declared unfindable: the library must configure without them.
  set(BUILD ${WORK}/library)
  step(${CMAKE_COMMAND} -S ${SOURCE} -B ${BUILD} -G ${GENERATOR} -DCMAKE_BUILD_TYPE=Release
       -DREDUCELAB_LIBRARY_ONLY=ON -DREDUCELAB_CUDA=OFF
       -DCMAKE_DISABLE_FIND_PACKAGE_Boost=ON -DCMAKE_DISABLE_FIND_PACKAGE_fmt=ON
       -DCMAKE_DISABLE_FIND_PACKAGE_nlohmann_json=ON -DCMAKE_DISABLE_FIND_PACKAGE_CLI11=ON
       -DCMAKE_DISABLE_FIND_PACKAGE_GTest=ON)
  step(${CMAKE_COMMAND} --build ${BUILD})
  set(consumer_cuda OFF)
endif()
step(${CMAKE_COMMAND} --install ${BUILD} --prefix ${WORK}/prefix)
foreach(header reducelab/reduce.hpp reducelab/reduce.cuh reducelab/segments.hpp reducelab/version.hpp
               reducelab/detail/portable.cuh)
  if(NOT EXISTS ${WORK}/prefix/include/${header})
    message(FATAL_ERROR "the install tree has no include/${header}")
  endif()
endforeach()
# An installed header may include only installed headers (and the standard library or CUDA's, in
# <>). The one exception: portable.cuh's SIMT branch, which only reducelab's own build takes.
file(GLOB_RECURSE installed RELATIVE ${WORK}/prefix/include ${WORK}/prefix/include/*)
foreach(header ${installed})
  file(STRINGS ${WORK}/prefix/include/${header} includes REGEX "^[ \t]*#[ \t]*include[ \t]*\"")
  foreach(line ${includes})
    string(REGEX REPLACE ".*include[ \t]*\"([^\"]+)\".*" "\\1" target "${line}")
    if(target STREQUAL "simt/runtime.hpp" AND header STREQUAL "reducelab/detail/portable.cuh")
      continue()
    endif()
    if(NOT EXISTS ${WORK}/prefix/include/${target})
      message(FATAL_ERROR "installed ${header} includes \"${target}\", which is not installed")
    endif()
  endforeach()
endforeach()
set(cuda_flags)
if(consumer_cuda AND CUDA_COMPILER)  # the compiler and GPU architecture the library was built with
  list(APPEND cuda_flags -DCMAKE_CUDA_COMPILER=${CUDA_COMPILER} "-DCMAKE_CUDA_ARCHITECTURES=${CUDA_ARCHITECTURES}")
endif()
step(${CMAKE_COMMAND} -S ${SOURCE}/tests/install/consumer -B ${WORK}/consumer -G ${GENERATOR}
     -DCMAKE_PREFIX_PATH=${WORK}/prefix -DCONSUMER_CUDA=${consumer_cuda} ${cuda_flags})
step(${CMAKE_COMMAND} --build ${WORK}/consumer)
step(${WORK}/consumer/consumer_cpu)
if(EXISTS ${WORK}/consumer/consumer_gpu)
  step(${WORK}/consumer/consumer_gpu)
endif()
