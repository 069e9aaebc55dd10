// sta-pool: the span layout's slow paths for units with a checked build's switches
// (compiled_checked_key, detail/config.hpp).
#undef STA_POOL_CHECKS
#define STA_POOL_CHECKS 1
#include "span_instantiations.hpp"

static_assert(sta::detail::config_key == sta::detail::compiled_checked_key);
