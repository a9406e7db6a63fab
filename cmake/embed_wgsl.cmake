# Embeds the WGSL kernels of src/kernels/<part>/*.wgsl into the library, run by CMake at build
# time (the build depends on every .wgsl file and on constants.def). Passed with -D:
#   KERNEL_DIR  src/kernels            FILES      every .wgsl below it (absolute paths)
#   CONSTANTS   src/kernels/constants.def        OUT_DIR    <build>/generated
# Writes, each only when its text changes (an edited kernel body rebuilds the table alone):
#   OUT_DIR/wgsl_embed.c            wgf_wgsl_<role> per kernel + the table, in id order
#   OUT_DIR/kernels/ids.h           enum wgf_kernel: WGF_KERNEL_<ROLE> per kernel file
#   OUT_DIR/kernels/constants.h     the C side of constants.def: #define WGF_<NAME> value
#   OUT_DIR/kernels/constants.wgsl  the WGSL side: const <NAME>: <type> = value;
#
# Rules (docs/architecture.md, "Kernels"):
#   - a kernel's role is its file stem, unique across the parts: common/matvec.wgsl is role
#     "matvec", id WGF_KERNEL_MATVEC; a second matvec.wgsl in another folder fails here;
#   - <name>.inc.wgsl is a fragment: no role, no id, only appended to kernels that name it;
#   - a line //#include "<path>" (path below src/kernels, or "constants.wgsl") appends that
#     fragment, and the fragments it names, once each, AFTER the kernel's own text: WGSL
#     declarations are order-free at module scope, and compile errors keep the kernel file's
#     own line numbers.

cmake_policy(VERSION 3.20)

function(wgf_write_if_changed path text)
  file(WRITE "${path}.tmp" "${text}")
  file(COPY_FILE "${path}.tmp" "${path}" ONLY_IF_DIFFERENT)
  file(REMOVE "${path}.tmp")
endfunction()

file(MAKE_DIRECTORY "${OUT_DIR}/kernels")

# ---- constants.def -> kernels/constants.h + kernels/constants.wgsl ----------------------
set(c_text "/* Generated from src/kernels/constants.def by cmake/embed_wgsl.cmake. Do not edit.\n * The same values reach WGSL as kernels/constants.wgsl (//#include \"constants.wgsl\"). */\n#ifndef WGF_KERNELS_CONSTANTS_H\n#define WGF_KERNELS_CONSTANTS_H\n\n")
set(w_text "// Generated from src/kernels/constants.def by cmake/embed_wgsl.cmake. Do not edit.\n// The same values reach C as WGF_<NAME> (kernels/constants.h).\n\n")
# read as text, with the characters a CMake list would take apart ([ ] ;) masked
file(READ "${CONSTANTS}" const_text)
string(REPLACE "[" "<wgf-lb>" const_text "${const_text}")
string(REPLACE "]" "<wgf-rb>" const_text "${const_text}")
string(REPLACE ";" "<wgf-sc>" const_text "${const_text}")
string(REPLACE "\n" ";" const_lines "${const_text}")
foreach(line IN LISTS const_lines)
  if(NOT line MATCHES "^[A-Za-z]")
    continue()
  endif()
  if(NOT line MATCHES "^([A-Z][A-Z0-9_]*)[ \t]+(u32|i32|f32)[ \t]+([^ \t]+)[ \t]*(.*)$")
    message(FATAL_ERROR "${CONSTANTS}: not NAME TYPE VALUE COMMENT: '${line}'")
  endif()
  set(name "${CMAKE_MATCH_1}")
  set(type "${CMAKE_MATCH_2}")
  set(value "${CMAKE_MATCH_3}")
  set(what "${CMAKE_MATCH_4}")
  string(REPLACE "<wgf-lb>" "[" what "${what}")
  string(REPLACE "<wgf-rb>" "]" what "${what}")
  string(REPLACE "<wgf-sc>" "," what "${what}")
  if(value MATCHES "^[0-9]+$")
    if(type STREQUAL "u32")
      set(c_value "${value}u")
    else()
      set(c_value "${value}")
    endif()
  elseif(value MATCHES "^[0-9.]+(e-?[0-9]+)?$")
    set(c_value "${value}f")
  else() # an expression of earlier names
    string(REGEX REPLACE "([A-Z][A-Z0-9_]*)" "WGF_\\1" c_value "${value}")
    set(c_value "(${c_value})")
  endif()
  string(APPEND c_text "#define WGF_${name} ${c_value} /* ${what} */\n")
  string(APPEND w_text "const ${name}: ${type} = ${value}; // ${what}\n")
endforeach()
string(APPEND c_text "\n#endif\n")
wgf_write_if_changed("${OUT_DIR}/kernels/constants.h" "${c_text}")
wgf_write_if_changed("${OUT_DIR}/kernels/constants.wgsl" "${w_text}")

# ---- kernels -------------------------------------------------------------------------------
set(entries "")
foreach(f IN LISTS FILES)
  file(RELATIVE_PATH rel "${KERNEL_DIR}" "${f}")
  if(rel MATCHES "\\.inc\\.wgsl$")
    continue()
  endif()
  get_filename_component(role "${f}" NAME_WE)
  if(NOT role MATCHES "^[a-z][a-z0-9_]*$")
    message(FATAL_ERROR "src/kernels/${rel}: a kernel file name is its role: lower case, digits, _")
  endif()
  if(DEFINED seen_${role})
    message(FATAL_ERROR "kernel role '${role}' is defined twice: src/kernels/${seen_${role}} and src/kernels/${rel} "
                        "(roles are unique across the parts; name the variant, e.g. ${role}_f16)")
  endif()
  set(seen_${role} "${rel}")
  list(APPEND entries "${role} ${rel}")
endforeach()
list(SORT entries)

set(body "/* Generated from src/kernels/<part>/<role>.wgsl by cmake/embed_wgsl.cmake. Do not edit. */\n#include \"gpu/kernels.h\"\n\n")
set(table "")
set(ids "")
set(count 0)
foreach(entry IN LISTS entries)
  string(REPLACE " " ";" parts "${entry}")
  list(GET parts 0 role)
  list(GET parts 1 rel)
  # the kernel, then every fragment it names (transitively), each once
  set(queue "${rel}")
  set(done "")
  set(hex "")
  while(queue)
    list(POP_FRONT queue p)
    if(p IN_LIST done)
      continue()
    endif()
    list(APPEND done "${p}")
    if(p STREQUAL "constants.wgsl")
      set(path "${OUT_DIR}/kernels/constants.wgsl")
    else()
      set(path "${KERNEL_DIR}/${p}")
    endif()
    if(NOT EXISTS "${path}")
      message(FATAL_ERROR "src/kernels/${rel}: //#include \"${p}\": no such fragment below src/kernels")
    endif()
    if(NOT p STREQUAL rel)
      if(NOT p MATCHES "\\.inc\\.wgsl$" AND NOT p STREQUAL "constants.wgsl")
        message(FATAL_ERROR "src/kernels/${rel}: //#include \"${p}\": only fragments (*.inc.wgsl) can be included")
      endif()
      string(HEX "\n// ---- ${p}: appended by //#include (cmake/embed_wgsl.cmake) ----\n" mark)
      string(APPEND hex "${mark}")
    endif()
    file(READ "${path}" text HEX)
    string(APPEND hex "${text}")
    file(STRINGS "${path}" incs REGEX "^//#include \"[^\"]+\"")
    foreach(line IN LISTS incs)
      string(REGEX REPLACE "^//#include \"([^\"]+)\".*$" "\\1" q "${line}")
      list(APPEND queue "${q}")
    endforeach()
  endwhile()
  string(LENGTH "${hex}" hexlen)
  math(EXPR nbytes "${hexlen} / 2")
  string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," bytes "${hex}")
  string(REGEX REPLACE "((0x..,){24})" "\\1\n    " bytes "${bytes}")
  string(APPEND body "const char wgf_wgsl_${role}[${nbytes} + 1] = {\n    ${bytes}0x00};\n")
  string(APPEND table "    {\"${role}\", \"${rel}\", wgf_wgsl_${role}, ${nbytes}},\n")
  string(TOUPPER "${role}" up)
  string(APPEND ids "    WGF_KERNEL_${up}, /* src/kernels/${rel} */\n")
  math(EXPR count "${count} + 1")
endforeach()
string(APPEND body "\nconst struct wgf_kernel_src wgf_kernel_table[] = {\n${table}    {0, 0, 0, 0}};\nconst int wgf_kernel_table_count = ${count};\n")
wgf_write_if_changed("${OUT_DIR}/wgsl_embed.c" "${body}")

set(h "/* Generated from the file names src/kernels/<part>/<role>.wgsl by cmake/embed_wgsl.cmake. Do not
 * edit: a new kernel file gets its id at the next build, WGF_KERNEL_<ROLE> for <role>.wgsl.
 * A misspelt id fails to compile; wgf_kernel_source(\"role\") still finds kernels by name. */
#ifndef WGF_KERNELS_IDS_H
#define WGF_KERNELS_IDS_H

enum wgf_kernel {
${ids}    WGF_KERNEL_COUNT
};

/* The embedded WGSL of kernel k, its //#include fragments appended (NUL-terminated, static). */
const char *wgf__kernel_wgsl(enum wgf_kernel k);
/* Its role: the file stem (\"matvec\"), the name wgf_kernel_source() and pipeline labels use. */
const char *wgf__kernel_role(enum wgf_kernel k);

#endif
")
wgf_write_if_changed("${OUT_DIR}/kernels/ids.h" "${h}")
