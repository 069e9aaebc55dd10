// sta-pool: the span layout's slow paths, and the per-thread families' over them,
// instantiated for every class set and thread mode under this unit's switches, and the
// default pool's code off its fast paths (STA_POOL_DEFAULT_POOL_TEMPLATES, memory_pool.hpp).
// Included only by spans_release.cpp and spans_checked.cpp, which choose STA_POOL_CHECKS first;
// every other switch that enters config_key is put back to its default here, whatever the build's
// flags say, so the instantiations carry exactly compiled_release_key or compiled_checked_key.
#pragma once

#undef STA_POOL_VALGRIND // the default that follows from STA_POOL_CHECKS
#undef STA_POOL_STATS
#undef STA_POOL_NO_HOOKS
#undef STA_POOL_BIG_FROM_OS
#undef STA_POOL_INITIAL_EXEC
#undef STA_POOL_PREFAULT
#undef STA_POOL_HUGE_PAGES
#undef STA_POOL_PURGE_DELAY_MS

#include "sta/memory_pool.hpp"

namespace sta::detail {

STA_POOL_SPAN_TEMPLATES(template, config_key);
STA_POOL_DEFAULT_POOL_TEMPLATES(template, config_key);

} // namespace sta::detail
