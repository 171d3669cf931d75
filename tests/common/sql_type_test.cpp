#include <gtest/gtest.h>

#include "common/error.hpp"
#include "common/sql_type.hpp"

namespace tally {
namespace {

TEST(SqlType, OidsRoundTrip) {
  for (TypeId id : {TypeId::boolean, TypeId::int2, TypeId::int4, TypeId::int8, TypeId::float4,
                    TypeId::float8, TypeId::numeric, TypeId::text, TypeId::varchar,
                    TypeId::bpchar, TypeId::date, TypeId::timestamp}) {
    auto back = type_from_oid(type_oid(id));
    ASSERT_TRUE(back.has_value());
    EXPECT_EQ(*back, id);
  }
  EXPECT_EQ(type_oid(TypeId::int4), 23u);
  EXPECT_EQ(type_oid(TypeId::numeric), 1700u);
}

TEST(SqlType, FormatTypeMatchesPostgres) {
  EXPECT_EQ(format_type(SqlType::numeric(12, 2)), "numeric(12,2)");
  EXPECT_EQ(format_type(SqlType::varchar(20)), "character varying(20)");
  EXPECT_EQ(format_type(SqlType::bpchar(3)), "character(3)");
  EXPECT_EQ(format_type({TypeId::timestamp}), "timestamp without time zone");
  SqlType n = SqlType::numeric(18, 4);
  EXPECT_EQ(n.numeric_precision(), 18);
  EXPECT_EQ(n.numeric_scale(), 4);
  EXPECT_EQ(n.typmod, (18 << 16 | 4) + 4);
}

TEST(Error, CarriesPostgresFields) {
  Error e(SqlState::undefined_table, "relation \"t\" does not exist");
  e.with_position(15);
  EXPECT_EQ(sqlstate_code(e.state()), "42P01");
  EXPECT_EQ(e.position(), 15);
  EXPECT_EQ(severity_name(e.severity()), "ERROR");
}

}  // namespace
}  // namespace tally
