#pragma once
// The one table of SQLSTATE codes Tally emits. Every error carries one of these;
// no code string is written anywhere else (STYLE.md: "SQLSTATEs come from one table").
#include <string_view>

namespace tally {

#define TALLY_SQLSTATES(X)                                            \
  X(successful_completion, "00000")                                   \
  X(warning, "01000")                                                 \
  X(no_data, "02000")                                                 \
  X(connection_exception, "08000")                                    \
  X(connection_failure, "08006")                                      \
  X(protocol_violation, "08P01")                                      \
  X(feature_not_supported, "0A000")                                   \
  X(invalid_transaction_initiation, "0B000")                          \
  X(cardinality_violation, "21000")                                   \
  X(data_exception, "22000")                                          \
  X(string_data_right_truncation, "22001")                            \
  X(null_value_not_allowed, "22004")                                  \
  X(sequence_generator_limit_exceeded, "2200H")                       \
  X(numeric_value_out_of_range, "22003")                              \
  X(invalid_datetime_format, "22007")                                 \
  X(invalid_time_zone_displacement_value, "22009")                    \
  X(datetime_field_overflow, "22008")                                 \
  X(invalid_parameter_value, "22023")                                 \
  X(substring_error, "22011")                                         \
  X(division_by_zero, "22012")                                        \
  X(invalid_preceding_or_following_size, "22013")                     \
  X(invalid_argument_for_ntile_function, "22014")                     \
  X(invalid_argument_for_nth_value_function, "22016")                 \
  X(invalid_argument_for_logarithm, "2201E")                          \
  X(invalid_argument_for_power_function, "2201F")                     \
  X(invalid_argument_for_width_bucket_function, "2201G")              \
  X(invalid_text_representation, "22P02")                             \
  X(invalid_binary_representation, "22P03")                           \
  X(bad_copy_file_format, "22P04")                                    \
  X(untranslatable_character, "22P05")                                \
  X(character_not_in_repertoire, "22021")                             \
  X(invalid_escape_sequence, "22025")                                 \
  X(invalid_regular_expression, "2201B")                              \
  X(invalid_row_count_in_limit_clause, "2201W")                       \
  X(invalid_row_count_in_result_offset_clause, "2201X")               \
  X(invalid_tablesample_repeat, "2202G")                              \
  X(invalid_tablesample_argument, "2202H")                            \
  X(integrity_constraint_violation, "23000")                          \
  X(not_null_violation, "23502")                                      \
  X(unique_violation, "23505")                                        \
  X(invalid_cursor_state, "24000")                                    \
  X(dependent_objects_still_exist, "2BP01")                           \
  X(invalid_transaction_state, "25000")                               \
  X(active_sql_transaction, "25001")                                  \
  X(no_active_sql_transaction, "25P01")                               \
  X(in_failed_sql_transaction, "25P02")                               \
  X(read_only_sql_transaction, "25006")                               \
  X(invalid_sql_statement_name, "26000")                              \
  X(invalid_authorization_specification, "28000")                     \
  X(invalid_password, "28P01")                                        \
  X(invalid_cursor_name, "34000")                                     \
  X(invalid_catalog_name, "3D000")                                    \
  X(invalid_schema_name, "3F000")                                     \
  X(syntax_error_or_access_rule_violation, "42000")                   \
  X(syntax_error, "42601")                                            \
  X(insufficient_privilege, "42501")                                  \
  X(grouping_error, "42803")                                          \
  X(windowing_error, "42P20")                                         \
  X(invalid_recursion, "42P19")                                       \
  X(invalid_foreign_key, "42830")                                     \
  X(invalid_name, "42602")                                            \
  X(name_too_long, "42622")                                           \
  X(reserved_name, "42939")                                           \
  X(datatype_mismatch, "42804")                                       \
  X(indeterminate_datatype, "42P18")                                  \
  X(wrong_object_type, "42809")                                       \
  X(generated_always, "428C9")                                        \
  X(undefined_column, "42703")                                        \
  X(undefined_function, "42883")                                      \
  X(undefined_table, "42P01")                                         \
  X(undefined_parameter, "42P02")                                     \
  X(undefined_object, "42704")                                        \
  X(duplicate_column, "42701")                                        \
  X(duplicate_cursor, "42P03")                                        \
  X(duplicate_database, "42P04")                                      \
  X(duplicate_prepared_statement, "42P05")                            \
  X(duplicate_schema, "42P06")                                        \
  X(duplicate_table, "42P07")                                         \
  X(duplicate_alias, "42712")                                         \
  X(duplicate_object, "42710")                                        \
  X(ambiguous_column, "42702")                                        \
  X(ambiguous_function, "42725")                                      \
  X(ambiguous_parameter, "42P08")                                     \
  X(invalid_column_reference, "42P10")                                \
  X(invalid_column_definition, "42611")                               \
  X(invalid_table_definition, "42P16")                                \
  X(cannot_coerce, "42846")                                           \
  X(program_limit_exceeded, "54000")                                  \
  X(statement_too_complex, "54001")                                   \
  X(too_many_columns, "54011")                                        \
  X(insufficient_resources, "53000")                                  \
  X(disk_full, "53100")                                               \
  X(out_of_memory, "53200")                                           \
  X(too_many_connections, "53300")                                    \
  X(object_not_in_prerequisite_state, "55000")                        \
  X(object_in_use, "55006")                                           \
  X(cant_change_runtime_param, "55P02")                               \
  X(operator_intervention, "57000")                                   \
  X(query_canceled, "57014")                                          \
  X(admin_shutdown, "57P01")                                          \
  X(crash_shutdown, "57P02")                                          \
  X(cannot_connect_now, "57P03")                                      \
  X(io_error, "58030")                                                \
  X(undefined_file, "58P01")                                          \
  X(config_file_error, "F0000")                                       \
  X(internal_error, "XX000")                                          \
  X(data_corrupted, "XX001")                                          \
  X(index_corrupted, "XX002")

enum class SqlState {
#define TALLY_SQLSTATE_ENUM(name, code) name,
  TALLY_SQLSTATES(TALLY_SQLSTATE_ENUM)
#undef TALLY_SQLSTATE_ENUM
};

// The five-character code PostgreSQL sends in the 'C' field.
constexpr std::string_view sqlstate_code(SqlState state) {
  switch (state) {
#define TALLY_SQLSTATE_CODE(name, code) \
  case SqlState::name:                  \
    return code;
    TALLY_SQLSTATES(TALLY_SQLSTATE_CODE)
#undef TALLY_SQLSTATE_CODE
  }
  return "XX000";
}

}  // namespace tally
