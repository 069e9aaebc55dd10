// sta-pool: sta::thread_heap — an unsynchronized TLSF heap for mid-size blocks (32 KiB
// to a few MiB), the pool's second tier, usable on its own (docs/thread_heap.md).
//
// The class lives in detail/heaps/tlsf_heap.hpp (its header comment states its contract,
// chunks, thread rule and invariants), so that the pool's tiers use it without the
// internals including a public header.
#pragma once

#include "sta/detail/heaps/tlsf_heap.hpp"
