#include "executor/introspection/sequence_scan.hpp"

#include <string>

namespace tally::executor::introspection {

std::shared_ptr<const MaterializedRelation> sequence_scan(const catalog::SequenceStore& sequences,
                                                          std::string_view schema,
                                                          std::string_view name) {
  if (!schema.empty() && schema != "public") return nullptr;
  const auto def = sequences.find(name);
  if (!def) return nullptr;
  auto relation = std::make_shared<MaterializedRelation>();
  relation->name = std::string(name);
  const SqlType int8{TypeId::int8}, boolean{TypeId::boolean};
  relation->columns = {{"last_value", int8}, {"log_cnt", int8}, {"is_called", boolean}};
  for (const auto& c : relation->columns) relation->rows.columns.emplace_back(c.type);
  const uint32_t oid = def->oid;
  const int64_t start = def->start;
  relation->rows_at_run = [&sequences, oid, start](const std::vector<Value>*) {
    const catalog::SequenceValue value = sequences.value(oid);
    DataChunk rows;
    rows.columns.emplace_back(SqlType{TypeId::int8});
    rows.columns.emplace_back(SqlType{TypeId::int8});
    rows.columns.emplace_back(SqlType{TypeId::boolean});
    // Before the first nextval the sequence holds its start, uncalled. Tally
    // logs every value it hands out: no values are pre-logged (log_cnt 0).
    rows.columns[0].push(Value{value.is_called ? value.last_value : start});
    rows.columns[1].push(Value{int64_t{0}});
    rows.columns[2].push(Value{value.is_called});
    rows.rows = 1;
    return rows;
  };
  return relation;
}

}  // namespace tally::executor::introspection
