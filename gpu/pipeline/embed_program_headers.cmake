# Writes OUT: program_headers() (program_headers.hpp) holding the text of
# each header of HEADERS ('|'-separated paths under ROOT), by its path.
# Rewrites OUT only when its text changes, so that builds stay incremental.
string(REPLACE "|" ";" headers "${HEADERS}")
set(entries "")
foreach(header IN LISTS headers)
  file(READ "${ROOT}/${header}" text)
  string(APPEND entries "    {\"${header}\", R\"tally_header(${text})tally_header\"},\n")
endforeach()
set(body "// Written by gpu/pipeline/embed_program_headers.cmake at build time.
#include \"gpu/pipeline/program_headers.hpp\"

namespace tally::gpu {

const std::vector<ProgramHeader>& program_headers() {
  static const std::vector<ProgramHeader> headers = {
${entries}  };
  return headers;
}

}  // namespace tally::gpu
")
if(EXISTS "${OUT}")
  file(READ "${OUT}" old)
endif()
if(NOT "${old}" STREQUAL "${body}")
  file(WRITE "${OUT}" "${body}")
endif()
