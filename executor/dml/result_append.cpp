#include "executor/dml/result_append.hpp"

#include "common/error.hpp"
#include "executor/cast.hpp"
#include "storage/numeric_slot.hpp"
#include "storage/table_appender.hpp"

namespace tally::executor::dml {

void check_assignable(const ResultSet& result, const std::vector<int>& targets,
                      const std::vector<TableColumn>& columns) {
  for (size_t i = 0; i < targets.size() && i < result.columns.size(); ++i) {
    const TableColumn& column = columns[static_cast<size_t>(targets[i])];
    const SqlType from = result.columns[i].type, to = column.type;
    if (!can_cast(from.id, to.id, CastContext::assignment)) {
      throw Error(SqlState::datatype_mismatch, "column \"" + column.name + "\" is of type " + format_type(to) +
                                                   " but expression is of type " + format_type(from))
          .with_hint("You will need to rewrite or cast the expression.");
    }
  }
}

uint64_t append_result_rows(storage::TableAppender& appender, const ResultSet& result,
                            const std::vector<int>& targets, const std::vector<TableColumn>& columns,
                            const std::string& table_name) {
  const size_t ncols = columns.size();
  std::vector<int> source_of(ncols, -1);
  for (size_t i = 0; i < targets.size(); ++i) source_of[static_cast<size_t>(targets[i])] = static_cast<int>(i);
  for (size_t row = 0; row < result.rows; ++row) {
    for (size_t c = 0; c < ncols; ++c) {
      const SqlType type = columns[c].type;
      Value v = Null{};
      if (source_of[c] >= 0) {
        const Vector& src = result.columns[static_cast<size_t>(source_of[c])];
        v = cast_value(src.get(row), src.type, type, false);
      }
      if (is_null(v)) {
        if (columns[c].not_null) {
          throw Error(SqlState::not_null_violation, "null value in column \"" + columns[c].name + "\" of relation \"" +
                                                        table_name + "\" violates not-null constraint");
        }
        appender.set_null(static_cast<int>(c));
        continue;
      }
      void* slot = nullptr;
      if (!is_text_kind(type.id)) slot = appender.value_slot(static_cast<int>(c));
      switch (type.id) {
        case TypeId::boolean: *static_cast<uint8_t*>(slot) = std::get<bool>(v) ? 1 : 0; break;
        case TypeId::int2: *static_cast<int16_t*>(slot) = static_cast<int16_t>(std::get<int64_t>(v)); break;
        case TypeId::int4:
        case TypeId::date: *static_cast<int32_t*>(slot) = static_cast<int32_t>(std::get<int64_t>(v)); break;
        case TypeId::int8:
        case TypeId::timestamp:
        case TypeId::timestamptz: *static_cast<int64_t*>(slot) = std::get<int64_t>(v); break;
        case TypeId::float4: *static_cast<float*>(slot) = static_cast<float>(std::get<double>(v)); break;
        case TypeId::float8: *static_cast<double*>(slot) = std::get<double>(v); break;
        case TypeId::numeric: {
          // cast_value applied the typmod; unconstrained columns keep each value's scale.
          const Numeric& n = std::get<Numeric>(v);
          storage::store_numeric(type, slot, n.mantissa, n.scale);
          break;
        }
        default: appender.set_text(static_cast<int>(c), std::get<std::string>(v)); break;
      }
    }
    appender.finish_row();
  }
  return result.rows;
}

}  // namespace tally::executor::dml
