// sta-pool: the inline-branch dispatch — the layout's fast path inlined at the call
// site, no function pointer on the fast path.
//
//   alloc(bytes):  key = bytes - 1
//                  key >= 32 KiB (size 0 wraps too) -> out of line: zero / next tiers
//                  slot = classes::slot_of_key(key)        the layout's class set
//                                                          (pool/size_class.hpp)
//                  core::alloc(slot)                       shared cursor: "list ? pop :
//                                                          bump"; spans: "list ? pop :
//                                                          the window's lowest block"
//   free(p, bytes): the same routing, then the layout's release.
//
// It has no tables to keep in step with the lists, so it has no invariant of its
// own beyond those of its layout.
#pragma once

#include "sta/detail/pool/freed_mark.hpp"
#include "sta/detail/pool/next_tiers.hpp"
#include "sta/detail/pool/state.hpp"

#include <bit>

namespace sta::detail {

/// Config: the unit's switches (config_key, detail/config.hpp), the same in every unit of
/// a program; the compiled part holds the default pool's code out of its fast paths for
/// each of its own two (STA_POOL_DEFAULT_POOL_TEMPLATES, memory_pool.hpp).
template <class Layout, class Threads, class Tag, unsigned long long Config = config_key>
class inline_branch_engine {
  public:
    static constexpr const char* name = "sta::memory_pool<inline_branch>";
    /// The layout's class set: quarter classes on spans (STA_POOL_QUARTER_CLASSES),
    /// the seed's powers of two on the shared cursor.
    using classes = typename Layout::classes;
    using state_type = typename Layout::state;
    using core = typename Layout::template core<inline_branch_engine>;
    /// Where the state lives: one for the program, or one per thread (home/per_thread.hpp).
    using home = typename Threads::template home<state_type, inline_branch_engine>;
    /// One pool per thread (the Threads policy), known without instantiating the home.
    static constexpr bool threaded = Threads::threaded;
    /// Its blocks carry the freed marks (pool/freed_mark.hpp): the drop-in malloc\'s family.
    static constexpr bool freed_marks = family_freed_marks<Tag>;

    STA_FORCE_INLINE static state_type& state() noexcept { return home::state(); }

    STA_FORCE_INLINE static void* alloc(std::size_t bytes) noexcept {
        const std::size_t key = bytes - 1;
        if (key >= max_class_bytes) [[unlikely]]
            return outside<inline_branch_engine>::alloc(bytes);
        return alloc_slot(classes::slot_of_key(key));
    }
    template <std::size_t Bytes>
    STA_FORCE_INLINE static void* alloc() noexcept {
        if constexpr (Bytes == 0 || Bytes > max_class_bytes)
            return outside<inline_branch_engine>::alloc(Bytes);
        else
            return alloc_slot(classes::slot_of_key(Bytes - 1));
    }
    STA_FORCE_INLINE static void free(void* p, std::size_t bytes) noexcept {
        const std::size_t key = bytes - 1;
        if (key >= max_class_bytes) [[unlikely]]
            return outside<inline_branch_engine>::free(p, bytes);
        core::release(classes::slot_of_key(key), p);
    }
    template <std::size_t Bytes>
    STA_FORCE_INLINE static void free(void* p) noexcept {
        if constexpr (Bytes == 0 || Bytes > max_class_bytes)
            outside<inline_branch_engine>::free(p, Bytes);
        else
            core::release(classes::slot_of_key(Bytes - 1), p);
    }

    /// A pooled block goes back to the layout (carving and refills use it).
    STA_FORCE_INLINE static void push(std::uint32_t slot, void* p) noexcept {
        core::release(slot, p);
    }
    /// The smallest class, for a request of 0 bytes.
    static void* alloc_smallest() noexcept { return alloc_slot(classes::slot_of_key(0)); }

    static bool slot_serves_list(std::uint32_t) noexcept { return true; } // no slots to keep

    /// A block of the class of a canonical pooled slot (classes::slot_of_key): the
    /// layout's fast path, inlined.
    STA_FORCE_INLINE static void* alloc_slot(std::uint32_t slot) noexcept {
        return core::alloc(slot);
    }
};

} // namespace sta::detail
