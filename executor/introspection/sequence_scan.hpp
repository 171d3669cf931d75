#pragma once
// A sequence read as a relation, as PostgreSQL allows (pg_dump asks
// `SELECT last_value, is_called FROM public.s` for every sequence it
// dumps): one row of last_value, log_cnt and is_called, read from the
// sequence store when the scan runs, so a prepared plan sees the value of
// the moment.
#include <memory>
#include <string_view>

#include "catalog/sequence_store.hpp"
#include "executor/system_relation_provider.hpp"

namespace tally::executor::introspection {

// The relation of sequence `schema.name` ("" is public); null when there is no such sequence.
std::shared_ptr<const MaterializedRelation> sequence_scan(const catalog::SequenceStore& sequences,
                                                          std::string_view schema,
                                                          std::string_view name);

}  // namespace tally::executor::introspection
