#pragma once
// The headers a compiled column-program kernel includes, by the name it
// includes them with and their text as this build's sources hold it
// (written into program_headers.cpp at build time by
// embed_program_headers.cmake), so that NVRTC compiles the very code the
// interpreting kernel runs. Host-only.
#include <vector>

namespace tally::gpu {

struct ProgramHeader {
  const char* name;
  const char* text;
};

const std::vector<ProgramHeader>& program_headers();

}  // namespace tally::gpu
