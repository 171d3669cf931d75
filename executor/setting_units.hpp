#pragma once
// Values of run-time settings with units, as PostgreSQL's GUC code reads and
// prints them: "4MB" is 4096 in a kB setting, 16384 in an 8kB one prints as
// "128MB", "2min" is 120000 in a ms setting and 90000 prints as "90s" (the
// largest unit that divides it exactly). Base units are those of
// pg_settings.unit: "B", "kB", "8kB", "MB", "ms", "s", "min".
#include <optional>
#include <string>
#include <string_view>

namespace tally::executor {

// The number in `text` in `base_unit` ("" = unitless): an optional sign, digits
// with an optional fraction and exponent, optional spaces and a unit of the
// base unit's kind ("kB", "GB", "ms", "min", ...). nullopt when it does not
// parse; `bad_unit` is set when only the unit is wrong.
std::optional<double> parse_with_unit(std::string_view text, std::string_view base_unit, bool* bad_unit = nullptr);

// How SHOW prints an integer setting's value given in its base unit: in the
// largest unit that divides it exactly; zero and negatives without a unit.
std::string format_integer_with_unit(long long value, std::string_view base_unit);
// The same for a real-valued setting ("%g" then the unit).
std::string format_real_with_unit(double value, std::string_view base_unit);
// "%g" as PostgreSQL prints a real setting.
std::string format_real(double value);

// A SHOW value back in the base unit, as pg_settings.setting has it ("4MB" in
// kB: "4096"); text that does not parse comes back unchanged.
std::string in_base_unit(std::string_view shown, std::string_view base_unit, bool real);

// The hint PostgreSQL gives for a unit that does not fit the setting.
std::string unit_hint(std::string_view base_unit);

}  // namespace tally::executor
