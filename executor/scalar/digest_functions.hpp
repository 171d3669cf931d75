#pragma once
// md5(text | bytea) and sha224/sha256/sha384/sha512(bytea), with PostgreSQL
// 15's results: md5 as 32 lower-case hex digits, the SHA-2 digests as bytea.
#include <string>
#include <vector>

#include "executor/binder.hpp"

namespace tally::executor::scalar {

// nullptr, the arguments untouched, when `name` is not one of these.
ExprPtr make_digest_function(const std::string& name, std::vector<ExprPtr>& args, BindContext& context);

}  // namespace tally::executor::scalar
