// Column programs evaluated by the device kernel (gpu/pipeline/column_programs.cu)
// give, row for row and bit for bit, what the host evaluator gives
// (common/column_program_run.hpp) over random columns of every width with
// NULLs: the row filter's mask, int64 and float64 inputs (rows the filter
// drops NULL), and the overflow flag; lookups of a joined relation's values
// by key (copied to the device once) and CASE's choose; a LIKE's verdicts
// by dictionary code, matched in the entries' bytes the device keeps.
// Skips without a GPU.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cstring>
#include <random>
#include <string>

#include "common/column_program_run.hpp"
#include "gpu/pipeline/column_programs.hpp"
#include "gpu/pipeline/program_compiler.hpp"
#include "gpu/rules/device_info.hpp"

namespace tally {
namespace {

ProgramStep step(ProgramOp o, int32_t arg = 0, int64_t v = 0, double f = 0) { return ProgramStep{o, arg, v, f}; }

// The programs on the device by the interpreting kernel and by the kernel
// compiled for them (gpu/pipeline/program_compiler.hpp): the same mask,
// inputs, validity and error flags, bit for bit.
gpu::DeviceProgramResult on_device(const ColumnProgram& filter, const std::vector<ColumnProgram>& inputs,
                                   const std::vector<ColumnView>& columns, int64_t rows,
                                   const std::vector<LookupColumn>& lookups = {}) {
  gpu::DeviceProgramResult interpreted =
      gpu::evaluate_programs_on_device(filter, inputs, columns, rows, lookups, gpu::ProgramKernel::interpret);
  const gpu::DeviceProgramResult compiled =
      gpu::evaluate_programs_on_device(filter, inputs, columns, rows, lookups, gpu::ProgramKernel::compile_now);
  EXPECT_FALSE(interpreted.compiled);
  EXPECT_TRUE(compiled.compiled) << gpu::program_compiler_state();
  EXPECT_EQ(compiled.mask, interpreted.mask);
  EXPECT_EQ(compiled.validity, interpreted.validity);
  EXPECT_EQ(compiled.errors, interpreted.errors);
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (inputs[i].empty()) continue;
    size_t differ = 0;
    for (size_t r = 0; r < static_cast<size_t>(rows); ++r) {
      differ += interpreted.validity[i][r] && compiled.inputs[i][r] != interpreted.inputs[i][r] ? 1 : 0;
    }
    EXPECT_EQ(differ, 0u) << "input " << i;
  }
  return interpreted;
}

TEST(GpuColumnPrograms, DeviceKernelMatchesTheHostEvaluator) {
  if (gpu::device_count() == 0) GTEST_SKIP() << "no CUDA device";
  const size_t rows = 100000;
  std::mt19937_64 rng(5);
  std::vector<int32_t> a(rows);
  std::vector<int64_t> b(rows);
  std::vector<double> f(rows);
  std::vector<float> g(rows);
  std::vector<uint8_t> a_valid(rows), f_valid(rows);
  for (size_t r = 0; r < rows; ++r) {
    a[r] = rng() % 300 == 0 ? 2000000000 : static_cast<int32_t>(rng() % 2001) - 1000;
    b[r] = static_cast<int64_t>(rng() % 20000001) - 10000000;  // a numeric(12,2) as scaled int64
    f[r] = static_cast<double>(static_cast<int>(rng() % 4001) - 2000) / 8.0;
    g[r] = static_cast<float>(rng() % 100) / 4.0f;
    a_valid[r] = rng() % 7 != 0;
    f_valid[r] = rng() % 9 != 0;
  }
  const std::vector<ColumnView> columns = {{ColumnWidth::int32, a.data(), a_valid.data(), {}},
                                           {ColumnWidth::int64, b.data(), nullptr, {}},
                                           {ColumnWidth::float64, f.data(), f_valid.data(), {}},
                                           {ColumnWidth::float32, g.data(), nullptr, {}}};
  // WHERE (a > 0 OR f IS NULL) AND b * 2 >= -500000.00 AND NOT g = 3.25
  ColumnProgram filter;
  filter.steps = {step(ProgramOp::load, 0), step(ProgramOp::const_int, 0, 0), step(ProgramOp::gt_int),
                  step(ProgramOp::load, 2), step(ProgramOp::is_null), step(ProgramOp::or_),
                  step(ProgramOp::load, 1), step(ProgramOp::const_int, 0, 2), step(ProgramOp::mul_int),
                  step(ProgramOp::const_int, 0, -50000000), step(ProgramOp::ge_int), step(ProgramOp::and_),
                  step(ProgramOp::load, 3), step(ProgramOp::const_float, 0, 0, 3.25), step(ProgramOp::eq_float),
                  step(ProgramOp::not_), step(ProgramOp::and_)};
  // b * (100 - a) at scale 2; f * g - 1 as float8; a * 2 as int4 (overflows on 2000000000 rows).
  ColumnProgram scaled;
  scaled.result = ProgramResult::int64;
  scaled.scale = 2;
  scaled.steps = {step(ProgramOp::load, 1), step(ProgramOp::const_int, 0, 100), step(ProgramOp::load, 0),
                  step(ProgramOp::sub_int), step(ProgramOp::check_range, 32), step(ProgramOp::mul_int)};
  ColumnProgram floating;
  floating.result = ProgramResult::float64;
  floating.steps = {step(ProgramOp::load, 2), step(ProgramOp::load, 3), step(ProgramOp::mul_float),
                    step(ProgramOp::const_float, 0, 0, 1.0), step(ProgramOp::sub_float)};
  ColumnProgram overflowing;
  overflowing.result = ProgramResult::int64;
  overflowing.steps = {step(ProgramOp::load, 0), step(ProgramOp::const_int, 0, 2), step(ProgramOp::mul_int),
                       step(ProgramOp::check_range, 32)};
  // a IN (-1000, -7, 0, 3, ..., 999): one in_list step over sorted data steps
  // (more values than the typed loops compare in turn), AND b NOT IN
  // (scaled values), as the compiler emits IN lists of constants.
  ColumnProgram in_lists;
  in_lists.steps = {step(ProgramOp::load, 0), step(ProgramOp::in_list, 20)};
  for (int v = -1000; v < 1000; v += 100) in_lists.steps.push_back(step(ProgramOp::const_int, 0, v + (v < 0 ? 7 : 3)));
  in_lists.steps.push_back(step(ProgramOp::load, 1));
  in_lists.steps.push_back(step(ProgramOp::in_list, 3));
  for (const int64_t v : {-500000, 0, 1234567}) in_lists.steps.push_back(step(ProgramOp::const_int, 0, v));
  in_lists.steps.push_back(step(ProgramOp::not_));
  in_lists.steps.push_back(step(ProgramOp::and_));
  {
    const gpu::DeviceProgramResult device = on_device(in_lists, {}, columns, rows);
    std::vector<uint8_t> mask(rows, 1);
    EXPECT_EQ(evaluate_program(in_lists, columns, rows, mask.data(), nullptr, nullptr), 0u);
    EXPECT_EQ(device.mask, mask);
    EXPECT_GT(std::count(mask.begin(), mask.end(), 1), 50);
  }
  {
    // Lookup columns after the chunk's: a's rows by key a in [-300, 700)
    // (some keys without a row), an int64 value and a float value by row.
    const int64_t base = -300;
    const size_t span = 1000, dim_rows = 600;
    std::vector<int32_t> row_of(span, 0);
    std::vector<uint8_t> present(span, 0);
    for (size_t k = 0; k < span; ++k) {
      if (rng() % 5 == 0) continue;
      present[k] = 1;
      row_of[k] = static_cast<int32_t>(rng() % dim_rows);
    }
    std::vector<int64_t> value(dim_rows);
    std::vector<double> weight(dim_rows);
    std::vector<uint8_t> value_valid(dim_rows);
    for (size_t d = 0; d < dim_rows; ++d) {
      value[d] = static_cast<int64_t>(rng() % 100000) - 50000;
      weight[d] = static_cast<double>(rng() % 100) / 16;
      value_valid[d] = rng() % 6 != 0;
    }
    const std::vector<LookupColumn> lookups = {
        {{row_of.data(), present.data(), static_cast<uint8_t>(ColumnWidth::int32), base, span}},
        {{value.data(), value_valid.data(), static_cast<uint8_t>(ColumnWidth::int64), 0, dim_rows}},
        {{weight.data(), nullptr, static_cast<uint8_t>(ColumnWidth::float64), 0, dim_rows}}};
    // WHERE a has a row AND its weight > 1.5; CASE WHEN b > 0 THEN value ELSE b END.
    ColumnProgram joined;
    joined.steps = {step(ProgramOp::load, 0), step(ProgramOp::lookup, 4), step(ProgramOp::is_not_null),
                    step(ProgramOp::load, 0), step(ProgramOp::lookup, 4), step(ProgramOp::lookup, 6),
                    step(ProgramOp::const_float, 0, 0, 1.5), step(ProgramOp::gt_float), step(ProgramOp::and_)};
    ColumnProgram chosen;
    chosen.result = ProgramResult::int64;
    chosen.steps = {step(ProgramOp::load, 1), step(ProgramOp::const_int, 0, 0), step(ProgramOp::gt_int),
                    step(ProgramOp::load, 0), step(ProgramOp::lookup, 4), step(ProgramOp::lookup, 5),
                    step(ProgramOp::load, 1), step(ProgramOp::choose)};
    const gpu::DeviceProgramResult device = on_device(joined, {chosen}, columns, rows, lookups);
    std::vector<uint8_t> mask(rows, 1), valid(rows);
    std::vector<int64_t> values(rows);
    EXPECT_EQ(evaluate_program(joined, columns, rows, mask.data(), nullptr, nullptr, lookups), 0u);
    EXPECT_EQ(evaluate_program(chosen, columns, rows, mask.data(), values.data(), valid.data(), lookups), 0u);
    EXPECT_EQ(device.mask, mask);
    EXPECT_GT(std::count(mask.begin(), mask.end(), 1), 1000);
    EXPECT_EQ(device.validity[0], valid);
    for (size_t r = 0; r < rows; ++r) {
      if (valid[r]) ASSERT_EQ(device.inputs[0][r], values[r]) << "row " << r;
    }
    EXPECT_EQ(device.errors, 0u);
    // The same rows by key in a hash table (ProgramColumn::hashed): the
    // answers of the array, on the device and the host.
    const uint64_t slot_count = std::bit_ceil(2 * span);
    std::vector<LookupSlot> slots(slot_count, LookupSlot{0, -1});
    for (size_t k = 0; k < span; ++k) {
      if (!present[k]) continue;
      const int64_t key = base + static_cast<int64_t>(k);
      uint64_t at = hash_lookup_key(key, slot_count);
      while (slots[at].row >= 0) at = (at + 1) & (slot_count - 1);
      slots[at] = LookupSlot{key, row_of[k]};
    }
    std::vector<LookupColumn> hashed = lookups;
    hashed[0] = LookupColumn{{slots.data(), nullptr, static_cast<uint8_t>(ColumnWidth::int64), 0, slot_count, true}};
    const gpu::DeviceProgramResult by_hash = on_device(joined, {chosen}, columns, rows, hashed);
    std::vector<uint8_t> hashed_mask(rows, 1), hashed_valid(rows);
    std::vector<int64_t> hashed_values(rows);
    EXPECT_EQ(evaluate_program(joined, columns, rows, hashed_mask.data(), nullptr, nullptr, hashed), 0u);
    EXPECT_EQ(evaluate_program(chosen, columns, rows, hashed_mask.data(), hashed_values.data(), hashed_valid.data(), hashed),
              0u);
    EXPECT_EQ(hashed_mask, mask);
    EXPECT_EQ(by_hash.mask, mask);
    EXPECT_EQ(hashed_valid, valid);
    EXPECT_EQ(by_hash.validity[0], valid);
    for (size_t r = 0; r < rows; ++r) {
      if (valid[r]) ASSERT_EQ(by_hash.inputs[0][r], values[r]) << "row " << r;
    }
    // The rows column made from the build rows' ascending keys instead (a
    // NULL key among them): on the device by its scatter, on the host as
    // evaluate_program makes it; both as the array they make.
    std::vector<int64_t> keys;
    std::vector<uint8_t> key_nulls;
    for (int64_t k = base; k < base + static_cast<int64_t>(span); k += 3) {
      keys.push_back(k);
      key_nulls.push_back(keys.size() % 11 == 0 ? 1 : 0);
    }
    std::vector<LookupColumn> from_keys = lookups;
    from_keys[0] = LookupColumn{{nullptr, nullptr, static_cast<uint8_t>(ColumnWidth::int32), base, span},
                                keys.data(), key_nulls.data(), keys.size()};
    std::vector<int32_t> made_rows(span);
    std::vector<uint8_t> made_present(span);
    scatter_lookup_keys(from_keys[0], made_rows.data(), made_present.data());
    std::vector<LookupColumn> made = lookups;
    made[0].column.data = made_rows.data();
    made[0].column.validity = made_present.data();
    const gpu::DeviceProgramResult scattered =
        on_device(joined, {chosen}, columns, rows, from_keys);
    std::vector<uint8_t> made_mask(rows, 1), made_valid(rows);
    std::vector<int64_t> made_values(rows);
    EXPECT_EQ(evaluate_program(joined, columns, rows, made_mask.data(), nullptr, nullptr, made), 0u);
    EXPECT_EQ(evaluate_program(chosen, columns, rows, made_mask.data(), made_values.data(), made_valid.data(), made), 0u);
    std::vector<uint8_t> host_mask(rows, 1);
    EXPECT_EQ(evaluate_program(joined, columns, rows, host_mask.data(), nullptr, nullptr, from_keys), 0u);
    EXPECT_EQ(host_mask, made_mask);
    EXPECT_EQ(scattered.mask, made_mask);
    EXPECT_GT(std::count(made_mask.begin(), made_mask.end(), 1), 300);
    EXPECT_EQ(scattered.validity[0], made_valid);
    for (size_t r = 0; r < rows; ++r) {
      if (made_valid[r]) ASSERT_EQ(scattered.inputs[0][r], made_values[r]) << "row " << r;
    }
    // A presence test (a lookup column without data: an inner join's
    // condition): WHERE a has a row.
    std::vector<LookupColumn> presence = lookups;
    presence[0].column.data = nullptr;
    ColumnProgram has_row;
    has_row.steps = {step(ProgramOp::load, 0), step(ProgramOp::lookup, 4), step(ProgramOp::is_not_null)};
    const gpu::DeviceProgramResult tested = on_device(has_row, {}, columns, rows, presence);
    std::vector<uint8_t> tested_mask(rows, 1);
    EXPECT_EQ(evaluate_program(has_row, columns, rows, tested_mask.data(), nullptr, nullptr, presence), 0u);
    EXPECT_EQ(tested.mask, tested_mask);
    EXPECT_GT(std::count(tested_mask.begin(), tested_mask.end(), 1), 1000);
    EXPECT_LT(std::count(tested_mask.begin(), tested_mask.end(), 1), static_cast<std::ptrdiff_t>(rows));
  }
  {
    // The filter's conditions behind short circuits, as the compiler emits
    // an AND chain and an OR: a > 0 AND (b * 2 >= -500000.00 OR f IS NULL).
    ColumnProgram short_circuits;
    short_circuits.steps = {step(ProgramOp::load, 0), step(ProgramOp::const_int, 0, 0), step(ProgramOp::gt_int),
                            step(ProgramOp::skip_if_false, 10),
                            step(ProgramOp::load, 1), step(ProgramOp::const_int, 0, 2), step(ProgramOp::mul_int),
                            step(ProgramOp::const_int, 0, -50000000), step(ProgramOp::ge_int),
                            step(ProgramOp::skip_if_true, 3),
                            step(ProgramOp::load, 2), step(ProgramOp::is_null), step(ProgramOp::or_),
                            step(ProgramOp::and_)};
    const gpu::DeviceProgramResult device = on_device(short_circuits, {}, columns, rows);
    std::vector<uint8_t> mask(rows, 1);
    EXPECT_EQ(evaluate_program(short_circuits, columns, rows, mask.data(), nullptr, nullptr), 0u);
    EXPECT_EQ(device.mask, mask);
    EXPECT_GT(std::count(mask.begin(), mask.end(), 1), 1000);
    EXPECT_LT(std::count(mask.begin(), mask.end(), 1), static_cast<long>(rows) - 1000);
  }
  for (const bool with_filter : {true, false}) {
    for (const bool with_overflow : {false, true}) {
      const ColumnProgram f0 = with_filter ? filter : ColumnProgram{};
      std::vector<ColumnProgram> inputs = {scaled, ColumnProgram{}, floating};
      if (with_overflow) inputs.push_back(overflowing);
      const gpu::DeviceProgramResult device = on_device(f0, inputs, columns, rows);
      std::vector<uint8_t> mask(rows, 1);
      uint32_t host_errors = 0;
      if (with_filter) host_errors |= evaluate_program(f0, columns, rows, mask.data(), nullptr, nullptr);
      EXPECT_EQ(device.mask, mask);
      for (size_t i = 0; i < inputs.size(); ++i) {
        if (inputs[i].empty()) continue;
        std::vector<int64_t> values(rows);
        std::vector<uint8_t> valid(rows);
        host_errors |= evaluate_program(inputs[i], columns, rows, with_filter ? mask.data() : nullptr, values.data(), valid.data());
        EXPECT_EQ(device.validity[i], valid) << "input " << i;
        for (size_t r = 0; r < rows; ++r) {
          if (!valid[r]) continue;
          ASSERT_EQ(device.inputs[i][r], values[r]) << "input " << i << " row " << r;
        }
      }
      EXPECT_EQ(device.errors, host_errors) << with_filter << with_overflow;
      EXPECT_EQ(host_errors != 0, with_overflow);
    }
  }
}

// A dictionary's entries as a vector: entries of one vector share its identity.
class VectorEntries final : public TextEntries {
 public:
  VectorEntries(std::shared_ptr<std::vector<std::string>> texts, int32_t size) : texts_(std::move(texts)), size_(size) {}
  int32_t size() const override { return size_; }
  std::string_view at(int32_t code) const override { return (*texts_)[static_cast<size_t>(code)]; }
  std::weak_ptr<const void> identity() const override { return std::shared_ptr<const void>(texts_); }

 private:
  std::shared_ptr<std::vector<std::string>> texts_;
  int32_t size_;
};

TEST(GpuColumnPrograms, TextVerdictsMatchTheHost) {
  if (gpu::device_count() == 0) GTEST_SKIP() << "no CUDA device";
  std::mt19937_64 rng(9);
  const char* words[] = {"special", "requests", "pending", "ironic", "", "deposits", "spec", "ial"};
  auto texts = std::make_shared<std::vector<std::string>>();
  for (int e = 0; e < 300000; ++e) {
    std::string t;
    for (uint64_t w = rng() % 7; w > 0; --w) t += std::string(words[rng() % 8]) + (rng() % 3 == 0 ? " " : "");
    texts->push_back(t);
  }
  const size_t rows = 400000;
  std::vector<int32_t> codes(rows);
  std::vector<uint8_t> valid(rows);
  for (size_t r = 0; r < rows; ++r) {
    codes[r] = static_cast<int32_t>(rng() % 200000);
    valid[r] = rng() % 13 != 0;
  }
  const std::vector<ColumnView> columns = {{ColumnWidth::int32, codes.data(), valid.data(), {}}};
  ColumnProgram filter;  // WHERE t LIKE pattern
  filter.steps = {step(ProgramOp::load, 0), step(ProgramOp::lookup, 1), step(ProgramOp::const_int, 0, 1),
                  step(ProgramOp::eq_int)};
  // The first query copies 200,000 entries; the second reads that copy;
  // the third, of more entries (the dictionary grew), makes a new one.
  for (const auto& [pattern, count] : std::vector<std::pair<std::string, int32_t>>{
           {"%special%requests%", 200000}, {"spec%ial", 150000}, {"%ing%ironic", 300000}}) {
    auto verdicts = std::make_shared<TextVerdicts>();
    verdicts->entries = std::make_shared<VectorEntries>(texts, count);
    verdicts->count = count;
    verdicts->pattern = *runs_pattern(pattern);
    LookupColumn by_code;
    by_code.column = ProgramColumn{nullptr, nullptr, static_cast<uint8_t>(ColumnWidth::int32), 0, static_cast<uint64_t>(count)};
    by_code.text = verdicts;
    const gpu::DeviceProgramResult device = on_device(filter, {}, columns, rows, {by_code});
    std::vector<uint8_t> mask(rows, 1);
    EXPECT_EQ(evaluate_program(filter, columns, rows, mask.data(), nullptr, nullptr, {by_code}), 0u);
    EXPECT_EQ(device.mask, mask) << pattern;
    EXPECT_GT(std::count(mask.begin(), mask.end(), 1), 1000) << pattern;
    EXPECT_LT(std::count(mask.begin(), mask.end(), 1), static_cast<long>(rows) * 9 / 10) << pattern;
  }
}

}  // namespace
}  // namespace tally
