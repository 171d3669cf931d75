#pragma once
// The bytea_output setting ('hex' or 'escape') of the statement running on
// this thread: how bytea values print (append_bytea_out in type_io.hpp). The
// session installs it per statement, and every pool task that encodes the
// statement's rows installs the same, as it does the time zone
// (time_zone.hpp), so that rows print alike whichever thread encodes them.
#include <cstdint>
#include <optional>
#include <string_view>

namespace tally::types {

enum class ByteaOutput : uint8_t { hex, escape };

// The setting's value as SET accepts it ('hex', 'escape'); nullopt otherwise.
std::optional<ByteaOutput> bytea_output_named(std::string_view name);

// This thread's bytea_output (hex when no scope is installed).
ByteaOutput current_bytea_output();

// Installs a bytea_output for this thread while it lives; nests.
class ByteaOutputScope {
 public:
  explicit ByteaOutputScope(ByteaOutput output);
  ~ByteaOutputScope();
  ByteaOutputScope(const ByteaOutputScope&) = delete;
  ByteaOutputScope& operator=(const ByteaOutputScope&) = delete;

 private:
  ByteaOutput previous_;
};

}  // namespace tally::types
