# CMake toolchain: C to wasm32-wasi with Debian's clang + lld (wasm-ld) + wasi-libc +
# libclang-rt-14-dev-wasm32 (scripts/setup.sh installs them). Used by web/CMakeLists.txt
# (`make web`). The sysroot is Debian's split layout: headers in /usr/include/wasm32-wasi,
# libraries in /usr/lib/wasm32-wasi. -nostdinc keeps the host's glibc headers in
# /usr/include out of the search path (clang would fall through to them).
set(CMAKE_SYSTEM_NAME Generic)
set(CMAKE_SYSTEM_PROCESSOR wasm32)
set(CMAKE_C_COMPILER clang)
set(CMAKE_C_COMPILER_TARGET wasm32-wasi)
set(CMAKE_C_COMPILER_WORKS ON) # a test program would need the host's JS runtime
execute_process(COMMAND ${CMAKE_C_COMPILER} -print-resource-dir OUTPUT_VARIABLE WGFW_CLANG_RESOURCE
                OUTPUT_STRIP_TRAILING_WHITESPACE)
set(WGFW_WASI_INCLUDE /usr/include/wasm32-wasi)
set(WGFW_WASI_LIB /usr/lib/wasm32-wasi)
set(CMAKE_C_FLAGS_INIT "-nostdinc -isystem ${WGFW_CLANG_RESOURCE}/include -isystem ${WGFW_WASI_INCLUDE} -Wno-unused-command-line-argument")
set(CMAKE_EXE_LINKER_FLAGS_INIT "-L${WGFW_WASI_LIB}")
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_EXECUTABLE_SUFFIX ".wasm")
# C++ (only ICU's common library, from Debian's source): libc++ for WASI
# (libc++-14-dev-wasm32, libc++abi-14-dev-wasm32), single-threaded and without exceptions
set(CMAKE_CXX_COMPILER clang++)
set(CMAKE_CXX_COMPILER_TARGET wasm32-wasi)
set(CMAKE_CXX_COMPILER_WORKS ON)
set(WGFW_LIBCXX_INCLUDE /usr/lib/llvm-14/include/wasm32-wasi/c++/v1)
set(CMAKE_CXX_FLAGS_INIT "-nostdinc -nostdinc++ -isystem ${WGFW_LIBCXX_INCLUDE} -isystem ${WGFW_CLANG_RESOURCE}/include -isystem ${WGFW_WASI_INCLUDE} -fno-exceptions -Wno-unused-command-line-argument")
