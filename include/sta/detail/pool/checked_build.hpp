// sta-pool: checked builds (STA_POOL_CHECKS) — misuse is reported, never silent.
//
// Besides the owner-thread rule (diag/owner_mark.hpp), a checked build keeps a registry
// of the blocks each pool has handed out, pointer -> requested bytes, and checks
// every free and realloc against it (a seed-mode pool has one of its own; the pools of
// a per-thread family share one, behind a mutex, so a block freed on another thread
// is checked too):
//
//   double free             the block is already on a free list
//   size mismatch           a sized free (or realloc) whose size is not the size the
//                           block was allocated (or last reallocated) with
//   foreign pointer         a pointer the pool never handed out: not from any page,
//                           or inside a page but not the start of a live block
//
// Each is reported in one line (what, which pointer, which sizes) and aborts.
// Fresh memory is filled with fill_allocated and freed memory with fill_freed, so a
// read of uninitialised or freed memory shows a recognisable pattern in a debugger.
// Under valgrind the fresh fill is marked undefined again (hooks::block_filled), so
// memcheck still reports a read of it as uninitialised.
//
// The registry is a std::unordered_map allocated from the global heap and never
// destroyed, so pools keep working in global destructors. Release builds never call
// any of this (basic_memory_pool's hook sites are `if constexpr` on the switch).
#pragma once

#include "sta/detail/pool/size_class.hpp"
#include "sta/detail/pool/state.hpp"

#include <cstddef>
#include <cstdint>

// Declarations for every build, so a pool's `if constexpr (checks)` sites compile in a
// release build too; the definitions, and the <mutex>, <string> and <unordered_map> they
// need, only in a checked build (below), so a release unit does not parse them.
namespace sta::detail {

/// Fill bytes of checked builds.
inline constexpr unsigned char fill_allocated = 0xCD; ///< fresh memory ("cleared data")
inline constexpr unsigned char fill_freed = 0xDD;     ///< freed memory ("dead data")

struct checked_registry;
checked_registry& registry_of(pool_state& s);
checked_registry* new_checked_registry(bool shared);
void checked_allocated(checked_registry& r, void* p, std::size_t bytes);

/// What the checks ask of a pool's layout core (detail/layout/contract.hpp), as plain
/// function pointers: the reports below are compiled once for every pool, not once for
/// each pool family (a test program has hundreds of families: issue 40).
struct checked_core {
    std::size_t (*free_list_class_of)(const void* p) noexcept;
    std::ptrdiff_t (*offset_in_memory)(const void* p) noexcept;
    std::size_t (*class_bytes_of_block)(const void* p, std::size_t bytes) noexcept;
    std::size_t (*bytes_of_size)(std::size_t bytes) noexcept; // the core's class set's
};
/// The checked_core of a layout core `Core`.
template <class Core>
inline constexpr checked_core checked_core_of{&Core::free_list_class_of, &Core::offset_in_memory,
                                              &Core::class_bytes_of_block,
                                              &bytes_of_size<typename Core::classes>};

void checked_live(checked_registry& r, const checked_core& core, const char* pool_name,
                  const void* p, std::size_t bytes, const char* operation);
void checked_freed(checked_registry& r, const checked_core& core, const char* pool_name, void* p,
                   std::size_t bytes);
void checked_moved(checked_registry& r, std::uintptr_t from, std::uintptr_t to, std::size_t bytes);

} // namespace sta::detail

#if STA_POOL_CHECKS

#include "sta/detail/diag/misuse.hpp"
#include "sta/detail/diag/tool_hooks.hpp"

#include <cstdio>
#include <cstring>
#include <mutex>
#include <string>
#include <unordered_map>

namespace sta::detail {

struct checked_registry {
    /// Used by more than one thread (a per-thread family): every access takes `lock`.
    bool shared = false;
    std::mutex lock;
    // block address -> requested bytes. Addresses, not pointers: realloc records the
    // old address of a block that may be gone.
    std::unordered_map<std::uintptr_t, std::size_t> live;

    /// Held for one check; a registry of one thread is not locked.
    std::unique_lock<std::mutex> hold() {
        return shared ? std::unique_lock<std::mutex>(lock) : std::unique_lock<std::mutex>();
    }
};

/// A registry, never deleted (see above); `shared` when more than one thread uses it.
inline checked_registry* new_checked_registry(bool shared) {
    auto* const r = new checked_registry;
    r->shared = shared;
    return r;
}

/// The registry of a seed-mode pool, made on first use by its owner.
inline checked_registry& registry_of(pool_state& s) {
    if (s.checked == nullptr)
        s.checked = new_checked_registry(false);
    return *static_cast<checked_registry*>(s.checked);
}

[[noreturn]] STA_COLD inline void report_block_misuse(const char* pool_name, const char* what,
                                                      const void* p, const std::string& detail) {
    char line[512];
    std::snprintf(line, sizeof line, "%s: block %p %s", what, p, detail.c_str());
    report_misuse(pool_name, line);
}

/// Why `p` is not a live block: double free, interior pointer, or foreign pointer.
[[noreturn]] STA_COLD inline void report_unknown_block(const checked_core& core,
                                                       const char* pool_name, const void* p,
                                                       std::size_t bytes, const char* operation) {
    const std::string sized =
        std::string("(") + operation + " with " + std::to_string(bytes) + " bytes)";
    if (const std::size_t class_bytes = core.free_list_class_of(p); class_bytes != 0)
        report_block_misuse(pool_name, "double free", p,
                            "is already on the free list of the " + std::to_string(class_bytes) +
                                " B class " + sized);
    if (const std::ptrdiff_t offset = core.offset_in_memory(p); offset >= 0)
        report_block_misuse(pool_name, "foreign pointer", p,
                            "lies in the pool's memory at " + std::to_string(offset) +
                                " bytes but is not the start of a live block " + sized);
    report_block_misuse(pool_name, is_pooled_size(bytes) ? "foreign pointer" : "unknown block", p,
                        is_pooled_size(bytes)
                            ? "did not come from this pool " + sized
                            : "was not allocated by this pool, or was already freed " + sized);
}

/// A block was handed out: record it and fill it.
inline void checked_allocated(checked_registry& r, void* p, std::size_t bytes) {
    {
        const auto held = r.hold();
        r.live[reinterpret_cast<std::uintptr_t>(p)] = bytes;
    }
    if (is_pooled_size(bytes)) {
        std::memset(p, fill_allocated, bytes);
        hooks::block_filled(p, bytes);
    }
}

/// checked_live with the registry already held.
inline void check_live_held(checked_registry& r, const checked_core& core, const char* pool_name,
                            const void* p, std::size_t bytes, const char* operation) {
    const auto it = r.live.find(reinterpret_cast<std::uintptr_t>(p));
    if (it == r.live.end())
        report_unknown_block(core, pool_name, p, bytes, operation);
    if (it->second != bytes)
        report_block_misuse(pool_name, "size mismatch", p,
                            std::string(operation) + " with " + std::to_string(bytes) +
                                " bytes, but it was allocated with " + std::to_string(it->second) +
                                " bytes");
    if (is_pooled_size(bytes) && core.bytes_of_size(bytes) > core.class_bytes_of_block(p, bytes))
        report_block_misuse(pool_name, "size mismatch", p,
                            std::string(operation) + " with " + std::to_string(bytes) +
                                " bytes, but it lies in a block of the " +
                                std::to_string(core.class_bytes_of_block(p, bytes)) + " B class");
}

/// A block is about to be freed or reallocated: it must be live, with this size.
inline void checked_live(checked_registry& r, const checked_core& core, const char* pool_name,
                         const void* p, std::size_t bytes, const char* operation) {
    const auto held = r.hold();
    check_live_held(r, core, pool_name, p, bytes, operation);
}

/// A live block is freed: forget it and fill it.
inline void checked_freed(checked_registry& r, const checked_core& core, const char* pool_name,
                          void* p, std::size_t bytes) {
    {
        const auto held = r.hold();
        check_live_held(r, core, pool_name, p, bytes, "freed");
        r.live.erase(reinterpret_cast<std::uintptr_t>(p));
    }
    if (is_pooled_size(bytes))
        std::memset(p, fill_freed, bytes);
}

/// realloc kept or moved a block: the registry follows. Addresses, not pointers:
/// `from` may be gone. A zero address is no block (forget only, or record only).
inline void checked_moved(checked_registry& r, std::uintptr_t from, std::uintptr_t to,
                          std::size_t bytes) {
    const auto held = r.hold();
    if (from != 0)
        r.live.erase(from);
    if (to != 0)
        r.live[to] = bytes;
}

} // namespace sta::detail

#endif // STA_POOL_CHECKS
