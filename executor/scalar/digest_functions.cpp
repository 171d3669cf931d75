#include "executor/scalar/digest_functions.hpp"

#include <openssl/evp.h>

#include "common/error.hpp"
#include "executor/scalar/function_support.hpp"

namespace tally::executor::scalar {
namespace {

const EVP_MD* sha2_named(const std::string& name) {
  if (name == "sha224") return EVP_sha224();
  if (name == "sha256") return EVP_sha256();
  if (name == "sha384") return EVP_sha384();
  if (name == "sha512") return EVP_sha512();
  return nullptr;
}

std::string digest(const EVP_MD* md, const std::string& data) {
  unsigned char out[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  if (EVP_Digest(data.data(), data.size(), out, &length, md, nullptr) != 1) {
    throw Error(SqlState::internal_error, "could not compute the digest");
  }
  return std::string(reinterpret_cast<const char*>(out), length);
}

std::string hex(const std::string& bytes) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  out.reserve(bytes.size() * 2);
  for (const unsigned char c : bytes) {
    out += kDigits[c >> 4];
    out += kDigits[c & 0xf];
  }
  return out;
}

}  // namespace

ExprPtr make_digest_function(const std::string& name, std::vector<ExprPtr>& args, BindContext& context) {
  if (args.size() != 1) return nullptr;
  const TypeId type = args[0]->type.id;
  if (name == "md5") {
    // md5(bytea) for a bytea, md5(text) for a string (an untyped literal
    // too); no other type converts implicitly: 42883 as in PostgreSQL.
    if (type != TypeId::bytea && !is_text_kind(type)) return nullptr;
    if (type != TypeId::bytea) args[0] = to_type(std::move(args[0]), TypeId::text, context);
    return call({TypeId::text}, name, std::move(args), [](std::span<const Value> a) -> Value {
      return hex(digest(EVP_md5(), std::get<std::string>(a[0])));
    });
  }
  const EVP_MD* md = sha2_named(name);
  if (md == nullptr || (type != TypeId::bytea && type != TypeId::unknown)) return nullptr;
  args[0] = to_type(std::move(args[0]), TypeId::bytea, context);
  return call({TypeId::bytea}, name, std::move(args), [md](std::span<const Value> a) -> Value {
    return digest(md, std::get<std::string>(a[0]));
  });
}

}  // namespace tally::executor::scalar
