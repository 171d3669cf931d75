#include "executor/introspection/catalog_relations.hpp"

#include <array>

// The names of the functions the catalogs name by OID without pg_proc
// listing them (regproc and regprocedure output and input): the types' I/O
// functions (pg_type), the access methods' handlers (pg_am) and plpgsql's
// handlers (pg_language).
namespace tally::executor::introspection {
namespace {

struct FunctionName {
  uint32_t oid;
  const char* name;
};
constexpr std::array<FunctionName, 174> kTypeFunctionNames{{
    {6180, "raw_array_subscript_handler"}, {6179, "array_subscript_handler"}, {1242, "boolin"}, {1243, "boolout"},
    {2436, "boolrecv"}, {2437, "boolsend"}, {1244, "byteain"}, {31, "byteaout"},
    {2412, "bytearecv"}, {2413, "byteasend"}, {1245, "charin"}, {33, "charout"},
    {2434, "charrecv"}, {2435, "charsend"}, {34, "namein"}, {35, "nameout"},
    {2422, "namerecv"}, {2423, "namesend"}, {460, "int8in"}, {461, "int8out"},
    {2408, "int8recv"}, {2409, "int8send"}, {38, "int2in"}, {39, "int2out"},
    {2404, "int2recv"}, {2405, "int2send"}, {40, "int2vectorin"}, {41, "int2vectorout"},
    {2410, "int2vectorrecv"}, {2411, "int2vectorsend"}, {42, "int4in"}, {43, "int4out"},
    {2406, "int4recv"}, {2407, "int4send"}, {44, "regprocin"}, {45, "regprocout"},
    {2444, "regprocrecv"}, {2445, "regprocsend"}, {46, "textin"}, {47, "textout"},
    {2414, "textrecv"}, {2415, "textsend"}, {1798, "oidin"}, {1799, "oidout"},
    {2418, "oidrecv"}, {2419, "oidsend"}, {54, "oidvectorin"}, {55, "oidvectorout"},
    {2420, "oidvectorrecv"}, {2421, "oidvectorsend"}, {200, "float4in"}, {201, "float4out"},
    {2424, "float4recv"}, {2425, "float4send"}, {214, "float8in"}, {215, "float8out"},
    {2426, "float8recv"}, {2427, "float8send"}, {109, "unknownin"}, {110, "unknownout"},
    {2416, "unknownrecv"}, {2417, "unknownsend"}, {750, "array_in"}, {751, "array_out"},
    {2400, "array_recv"}, {2401, "array_send"}, {3816, "array_typanalyze"}, {1044, "bpcharin"},
    {1045, "bpcharout"}, {2430, "bpcharrecv"}, {2431, "bpcharsend"}, {2913, "bpchartypmodin"},
    {2914, "bpchartypmodout"}, {1046, "varcharin"}, {1047, "varcharout"}, {2432, "varcharrecv"},
    {2433, "varcharsend"}, {2915, "varchartypmodin"}, {2916, "varchartypmodout"}, {1084, "date_in"},
    {1085, "date_out"}, {2468, "date_recv"}, {2469, "date_send"}, {1143, "time_in"}, {1144, "time_out"},
    {2470, "time_recv"}, {2471, "time_send"}, {2909, "timetypmodin"}, {2910, "timetypmodout"},
    {1350, "timetz_in"}, {1351, "timetz_out"}, {2472, "timetz_recv"}, {2473, "timetz_send"},
    {2911, "timetztypmodin"}, {2912, "timetztypmodout"}, {1312, "timestamp_in"},
    {1313, "timestamp_out"}, {2474, "timestamp_recv"}, {2475, "timestamp_send"}, {2905, "timestamptypmodin"},
    {2906, "timestamptypmodout"}, {1150, "timestamptz_in"}, {1151, "timestamptz_out"}, {2476, "timestamptz_recv"},
    {2477, "timestamptz_send"}, {2907, "timestamptztypmodin"}, {2908, "timestamptztypmodout"}, {1701, "numeric_in"},
    {1702, "numeric_out"}, {2460, "numeric_recv"}, {2461, "numeric_send"}, {2917, "numerictypmodin"},
    {2918, "numerictypmodout"}, {2214, "regoperin"}, {2215, "regoperout"}, {2448, "regoperrecv"},
    {2449, "regopersend"}, {2212, "regprocedurein"}, {2213, "regprocedureout"}, {2446, "regprocedurerecv"},
    {2447, "regproceduresend"}, {2218, "regclassin"}, {2219, "regclassout"}, {2452, "regclassrecv"},
    {2453, "regclasssend"}, {2220, "regtypein"}, {2221, "regtypeout"}, {2454, "regtyperecv"},
    {2455, "regtypesend"}, {2296, "anyarray_in"}, {2297, "anyarray_out"}, {2502, "anyarray_recv"},
    {2503, "anyarray_send"}, {2300, "trigger_in"}, {2301, "trigger_out"}, {2304, "internal_in"},
    {2305, "internal_out"}, {4084, "regnamespacein"}, {4085, "regnamespaceout"}, {4087, "regnamespacerecv"},
    {4088, "regnamespacesend"}, {2290, "record_in"}, {2291, "record_out"}, {2402, "record_recv"},
    {2403, "record_send"}, {2298, "void_in"}, {2299, "void_out"}, {3120, "void_recv"},
    {3121, "void_send"}, {2294, "any_in"}, {2295, "any_out"}, {2312, "anyelement_in"},
    {2313, "anyelement_out"}, {2777, "anynonarray_in"}, {2778, "anynonarray_out"}, {5086, "anycompatible_in"},
    {5087, "anycompatible_out"}, {5088, "anycompatiblearray_in"}, {5089, "anycompatiblearray_out"}, {5090, "anycompatiblearray_recv"},
    {5091, "anycompatiblearray_send"}, {5092, "anycompatiblenonarray_in"}, {5093, "anycompatiblenonarray_out"},
    {1160, "interval_in"}, {1161, "interval_out"}, {2478, "interval_recv"}, {2479, "interval_send"},
    {2903, "intervaltypmodin"}, {2904, "intervaltypmodout"},
    // pg_am's handlers (amhandler), for psql's \dA+.
    {3, "heap_tableam_handler"}, {330, "bthandler"},
    // plpgsql's handlers (pg_language), members of its extension (pg_depend).
    {13560, "plpgsql_call_handler"}, {13561, "plpgsql_inline_handler"}, {13562, "plpgsql_validator"},
}};

// Those handlers as regprocedure prints them (psql's \dL+, \dx+).
constexpr std::array<FunctionName, 3> kLanguageHandlerSignatures{{
    {13560, "plpgsql_call_handler()"}, {13561, "plpgsql_inline_handler(internal)"}, {13562, "plpgsql_validator(oid)"},
}};

}  // namespace

std::optional<std::string> language_handler_signature(int64_t oid) {
  for (const auto& f : kLanguageHandlerSignatures) {
    if (f.oid == oid) return std::string(f.name);
  }
  return std::nullopt;
}

std::optional<std::string> type_function_name(int64_t oid) {
  for (const auto& f : kTypeFunctionNames) {
    if (f.oid == oid) return std::string(f.name);
  }
  return std::nullopt;
}

std::optional<int64_t> type_function_oid(std::string_view name) {
  for (const auto& f : kTypeFunctionNames) {
    if (name == f.name) return f.oid;
  }
  return std::nullopt;
}

}  // namespace tally::executor::introspection
