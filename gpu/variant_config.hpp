#pragma once
// The aggregator's kernels include the variant configuration by this path.
#include "gpu/rules/variant_config.hpp"
