#include "executor/cast_catalog.hpp"

#include "common/sql_type.hpp"
#include "executor/cast.hpp"
#include "executor/function_catalog.hpp"

namespace tally::executor {
namespace {

constexpr PostgresCast kCasts[] = {
#include "executor/postgres_casts.inc"
};

CastContext context_of(char castcontext) {
  if (castcontext == 'i') return CastContext::implicit;
  if (castcontext == 'a') return CastContext::assignment;
  return CastContext::explicit_;
}

bool supported(const PostgresCast& c) {
  const auto from = type_from_oid(c.source), to = type_from_oid(c.target);
  if (!from || !to || !can_cast(*from, *to, context_of(c.context))) return false;
  return c.method != 'f' || supported_function(c.function) != nullptr;
}

}  // namespace

const std::vector<const PostgresCast*>& supported_casts() {
  static const std::vector<const PostgresCast*> casts = [] {
    std::vector<const PostgresCast*> out;
    for (const auto& c : kCasts) {
      if (supported(c)) out.push_back(&c);
    }
    return out;
  }();
  return casts;
}

}  // namespace tally::executor
