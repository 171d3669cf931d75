#pragma once
// The aggregator's sources include the rule book by this path.
#include "gpu/rules/variant_rules.hpp"
