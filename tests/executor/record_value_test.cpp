// Anonymous records (executor/record_value.hpp): record_out's text, as
// PostgreSQL 15 prints ROW(...) values, read back field by field; shapes
// interned by their fields.
#include <gtest/gtest.h>

#include "common/error.hpp"
#include "executor/record_value.hpp"

using namespace tally;
using namespace tally::executor;

namespace {

TEST(RecordValue, TextAsPostgresPrintsIt) {
  EXPECT_EQ(record_text({std::string("1"), std::string("2")}), "(1,2)");
  EXPECT_EQ(record_text({std::nullopt, std::string("")}), "(,\"\")");
  EXPECT_EQ(record_text({std::string("a b"), std::string("x\"y"), std::string("p\\q")}),
            "(\"a b\",\"x\"\"y\",\"p\\\\q\")");
}

TEST(RecordValue, FieldsReadBack) {
  const std::vector<std::optional<std::string>> fields = {std::string("a b"), std::nullopt, std::string(""),
                                                          std::string("x\"y,(z)")};
  EXPECT_EQ(record_field_texts(record_text(fields)), fields);
  EXPECT_EQ(record_field_texts("(1,2)"), (std::vector<std::optional<std::string>>{"1", "2"}));
  EXPECT_THROW(record_field_texts("1,2"), Error);
}

TEST(RecordValue, ShapesByFields) {
  const SqlType a = record_type({{"x", SqlType{TypeId::int2}}, {"n", SqlType{TypeId::int4}}});
  const SqlType b = record_type({{"x", SqlType{TypeId::int2}}, {"n", SqlType{TypeId::int4}}});
  const SqlType c = record_type({{"x", SqlType{TypeId::oid}}, {"n", SqlType{TypeId::int4}}});
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
  ASSERT_EQ(record_fields(c).size(), 2u);
  EXPECT_EQ(record_fields(c)[0].type.id, TypeId::oid);
  EXPECT_TRUE(record_fields(SqlType{TypeId::record, -1}).empty());
}

}  // namespace
