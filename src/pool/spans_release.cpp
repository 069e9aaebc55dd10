// sta-pool: the span layout's slow paths for units with a release build's switches
// (compiled_release_key, detail/config.hpp).
#undef STA_POOL_CHECKS
#define STA_POOL_CHECKS 0
#include "span_instantiations.hpp"

static_assert(sta::detail::config_key == sta::detail::compiled_release_key);
