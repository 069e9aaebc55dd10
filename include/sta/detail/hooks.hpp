// sta-pool: the one place where sanitizers and valgrind are told about pool memory.
//
// Every call site in the pool calls these functions unconditionally; in a build
// without a tool they are empty inline functions and compile to nothing, so the
// fast path is the same instruction for instruction. A backend for ASan and one for
// valgrind fill them in (the safety work); until then only the empty backend exists.
//
//   page_mapped      a fresh page joins the pool (all of it is unallocated)
//   block_allocated  a block leaves the pool for a caller who asked for `requested`
//   block_freed      a block of `class_bytes` comes back from a caller
//   block_resized    realloc kept the block in place; the caller now asks for
//                    `requested` bytes of a block of `class_bytes`
//   link_reading     the pool is about to read the free-list link in a free block
//   link_written     the pool wrote the free-list link in a free block
//   region_handed_out  an arena handed out [p, p + bytes) to a caller
//   region_released    an arena took [p, p + bytes) back (release/reset/rewind)
#pragma once

#include <cstddef>

namespace sta::detail::hooks {

inline void page_mapped(void* /*page*/, std::size_t /*bytes*/) noexcept {}
inline void block_allocated(void* /*p*/, std::size_t /*requested*/,
                            std::size_t /*class_bytes*/) noexcept {}
inline void block_freed(void* /*p*/, std::size_t /*class_bytes*/) noexcept {}
inline void block_resized(void* /*p*/, std::size_t /*requested*/,
                          std::size_t /*class_bytes*/) noexcept {}
inline void link_reading(void* /*p*/) noexcept {}
inline void link_written(void* /*p*/, std::size_t /*class_bytes*/) noexcept {}

inline void region_handed_out(void* /*p*/, std::size_t /*bytes*/) noexcept {}
inline void region_released(void* /*p*/, std::size_t /*bytes*/) noexcept {}

} // namespace sta::detail::hooks
