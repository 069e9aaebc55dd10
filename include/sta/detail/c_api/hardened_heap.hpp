// sta-pool: the hardened drop-in's semantics (libsta_malloc-hardened.so, issue 41) — the
// drop-in's heap (c_api/malloc_heap.hpp) with the defences of a hardened allocator around
// it, each an option (hardened_options, docs/malloc.md "The hardened library"):
//
//   canary      malloc(n) takes n + 8 from the heap; the block's last 8 bytes hold a
//               canary keyed by the process's secret and the block's address, checked at
//               its free and realloc: a write past the end of what malloc_usable_size
//               says is refused.
//   zero        a free writes zeros over the block (a read after free reads zeros).
//   quarantine  a freed block (up to quarantine_max_block) is not freed yet: it waits,
//               zeroed and marked, in its thread's ring among the last `quarantine` bytes
//               the thread freed, the oldest out first (see HH3 for why not at random),
//               checked (its mark and its zeros; a large block's zeros at its two ends
//               unless check_whole): a block written after its free is refused then, at
//               its thread's end, or at exit.
//   shuffle     (off unless asked) each thread holds one block of each class back: a
//               malloc hands out the heap's next block or the one held back, a random
//               bit deciding (HH4), so the next block's address is not the heap's
//               order's. Off: it made python3 dicts.py with PYTHONMALLOC=malloc 1.6x and
//               lua5.4 binary_trees 1.08x slower (a walk of what a program allocated in
//               a row loses the hardware's prefetching even to swaps of neighbours).
//   sample      one allocation in sample_rate is a guarded block (c_api/guarded_block.hpp):
//               an overflow past it, or a use after free, faults (GWP-ASan's idea).
//   guard_big   every block above page_bytes / 2 is a guarded block.
//   sizes       a sized delete, free_sized and free_aligned_sized must name the block's
//               size: anything else is refused.
//
//   a pooled or heap block, live:                  in quarantine:
//   +--------------------------------+--------+    +-----------+--------------------------+
//   | the caller's usable bytes      | canary |    | mark      | zeros ...                |
//   +--------------------------------+--------+    +-----------+--------------------------+
//   ^ p                usable_size(p) ^             word 0: quarantine_mark(), a secret
//
// Invariants:
//  HH1 Every block the hardened heap hands out that is not guarded was allocated from
//      the heap with `extra` bytes more (8 with the canary, 0 without; fixed at the
//      first call), and with the canary its last 8 bytes hold canary_of(p) while it lives.
//  HH2 A block in quarantine is live to the heap beneath, holds quarantine_mark() in
//      its first word and zeros in every other byte it holds (with zero on) until it
//      leaves, and is in exactly one thread's ring: the thread that freed it.
//  HH3 A thread's ring holds at most ring_blocks blocks and at most `quarantine` bytes
//      (one block more when a single block is larger), in the order they were freed
//      from block[head] on; once it is full, each free's block enters as the oldest
//      leaves, and every block leaves when the thread ends. No lock: a ring is its
//      thread's, in its thread_part (a page of its own, mapped at the thread's first
//      free, unmapped when it ends; only a 16-byte record is in static TLS). (Not at random: reuse
//      in another order than the frees' costs programs that walk what they allocated, as the
//      hardware prefetches blocks handed back in order. python3 dicts.py with PYTHONMALLOC=malloc
//      ran 2x slower with any of the 256 leaving at random, as slow with the oldest of eight, 1.4x
//      with up to 64 of the oldest leaving at once, 1.1x with the ring's length walking at random
//      by 2.)
//  HH4 With shuffle, held_back[slot] of a thread is null or a block of the class at slot
//      that the heap handed to the hardened heap and the hardened heap has handed to no
//      one; a malloc of the class returns the heap's next block or that one (then the
//      heap's next is held back), each with odds of one half, the bits from a per-thread
//      xorshift seeded by the secret. A block is held back a geometric number of the
//      class's mallocs (2 on average), so blocks still come in about the heap's order
//      (addresses mostly rising in a fresh span). Held-back blocks go back to the heap
//      when their thread ends.
#pragma once

#include "sta/detail/c_api/guarded_block.hpp"
#include "sta/detail/c_api/malloc_heap.hpp"
#include "sta/detail/diag/misuse.hpp"
#include "sta/detail/os/process_secret.hpp"
#include "sta/detail/os/thread_exit.hpp"
#include "sta/detail/pool/state.hpp"

#include <bit>
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <new>
#include <utility>

namespace sta::detail {

/// The hardened heap's options (docs/malloc.md): read from the environment at its first
/// call, fixed from then on.
struct hardened_options {
    bool canary = true;
    bool zero = true;
    bool shuffle = false;     // a class's blocks handed out with random swaps (HH4: its cost)
    bool check_whole = false; // a block leaving quarantine: its zeros checked whole, or its ends
    std::size_t quarantine = std::size_t{256} << 10;          // bytes a thread; 0: none
    std::size_t quarantine_max_block = std::size_t{64} << 10; // larger blocks skip it
    std::uint32_t sample_rate = 50000;                        // 0: none
    bool guard_big = true;
    bool sizes = true;
};

template <class Base>
struct hardened_heap : c_derived_functions<hardened_heap<Base>> {
    static constexpr std::size_t max_request = Base::max_request;
    static constexpr std::uint32_t ring_blocks = 256;
    static_assert(std::has_single_bit(ring_blocks), "a ring's places wrap by a mask");

    // ---- the C functions -------------------------------------------------------------

    /// The fast path: a pooled block with its canary, while the thread's sample
    /// countdown runs (a thread's first call, and each sample, take malloc_slow; so do
    /// sizes beyond the classes).
    STA_FORCE_INLINE static void* malloc(std::size_t bytes) noexcept {
        if (--mine.countdown >= 0 && bytes - 1 < fast_below) [[likely]] {
            std::size_t held = 0;
            std::uint32_t slot = 0;
            if (void* const p = Base::malloc_pooled(bytes + extra, held, slot)) [[likely]]
                return armed(p, held);
        }
        return malloc_slow(bytes);
    }
    static void free(void* p) noexcept {
        if (p == nullptr)
            return;
        ready();
        if (const std::size_t held = live_pooled_held(p); held != 0) [[likely]]
            return retire(p, held, entry_pooled);
        free_unpooled(p);
    }

    static void* realloc(void* p, std::size_t bytes) noexcept {
        if (p == nullptr)
            return malloc(bytes);
        ready();
        if (bytes == 0) { // glibc: frees p, returns NULL
            free(p);
            return nullptr;
        }
        const bool guarded = is_guarded(p, "realloc()");
        const std::size_t held = guarded ? 0 : live_held(p, "realloc()");
        const std::size_t usable = guarded ? guarded_block::size_of(p) : held - extra;
        // In place where malloc(bytes) would take the same class: the canary stays at the
        // block's end (HH1), and a sized free of `bytes` names the block.
        if (!guarded && is_pool_segment(p) && bytes <= usable && !big(bytes) &&
            Base::good_size(bytes + extra) == held)
            return p;
        // A big block stays big in place, or its pages move (GB3): no copy.
        if (guarded && big(usable) && big(bytes))
            if (void* const q = guarded_block::resize(p, bytes))
                return q;
        void* const q = big(bytes) ? big_block(bytes, 0) : malloc(bytes);
        if (q == nullptr)
            return nullptr; // p untouched
        std::memcpy(q, p, bytes < usable ? bytes : usable);
        if (guarded)
            free_guarded(p);
        else
            retire(p, held, pooled_entry(p)); // checked above
        return q;
    }

    static void* memalign(std::size_t alignment, std::size_t bytes) noexcept {
        ready();
        if (alignment <= 16)
            return malloc(bytes);
        if (big(bytes) && alignment <= os_page_bytes && alignment <= SIZE_MAX / 2 + 1)
            return big_block(bytes, std::bit_ceil(alignment));
        if (bytes > Base::max_request - extra)
            return out_of_memory();
        void* const p = Base::memalign(alignment, bytes + extra);
        return armed(p, p != nullptr ? Base::held_bytes(p) : 0);
    }

    static std::size_t usable_size(const void* p) noexcept {
        if (p == nullptr)
            return 0;
        ready();
        if (is_guarded(p, "malloc_usable_size()"))
            return guarded_block::size_of(p);
        return live_held(p, "malloc_usable_size()") - extra;
    }
    static std::size_t good_size(std::size_t bytes) noexcept {
        ready();
        if (big(bytes))
            return bytes;
        return Base::good_size(bytes + extra) - extra;
    }

    /// operator delete(p, bytes): the size checked (option `sizes`), then free.
    static void free_sized(void* p, std::size_t bytes) noexcept {
        free_described(p, bytes, true, "operator delete()");
    }
    static void free_sized_c23(void* p, std::size_t bytes) noexcept {
        free_described(p, bytes == 0 ? 1 : bytes, true, "free_sized()");
    }
    /// An aligned block's class is its aligned request's: the size must fit it.
    static void free_aligned_sized(void* p, std::size_t alignment, std::size_t bytes) noexcept {
        if (p != nullptr && alignment > 1 &&
            (reinterpret_cast<std::uintptr_t>(p) & (alignment - 1)) != 0)
            report_bad_size("sta_malloc", "free_aligned_sized()", p, "alignment", alignment,
                            usable_size(p));
        free_described(p, bytes == 0 ? 1 : bytes, false, "free_aligned_sized()");
    }

    // ---- the library's life ----------------------------------------------------------

    /// The calling thread ends: every block of its ring leaves, checked, and its held-back
    /// blocks go back to the heap (os/thread_exit.hpp).
    /// Its part's pages go back to the OS; a free after this maps a part again.
    static void thread_exit(void*) noexcept {
        thread_part* const t = std::exchange(mine.part, nullptr);
        if (t == nullptr)
            return;
        while (t->count != 0)
            leave_oldest(*t);
        for (void*& p : t->held_back) // HH4
            if (p != nullptr)
                Base::free(std::exchange(p, nullptr));
        os_unmap_pages(t, part_bytes);
    }
    /// At exit: every block of the calling thread's ring must be as its free left it
    /// (HH2); one written after its free is refused. (Another thread's ring is checked
    /// as its blocks leave, and when that thread ends.)
    static void check_at_exit() noexcept {
        const thread_part* const t = mine.part;
        for (std::uint32_t i = 0; t != nullptr && i < t->count; ++i) {
            const std::uint32_t at = (t->head + i) & (ring_blocks - 1);
            check_pristine(t->block[at], t->entry[at] & entry_bytes);
        }
    }
    /// malloc_trim: the heap's free memory and the kept big mappings (GB3) back to the OS.
    static std::size_t trim() noexcept { return Base::trim() + guarded_block::trim(); }
    static void before_fork() noexcept { guarded_block::before_fork(); }
    static void after_fork() noexcept { guarded_block::after_fork(); }

    /// The options, read once (the first call, or the library's load, whichever first).
    static hardened_options read_options() noexcept;
    static inline hardened_options options{};

  private:
    /// The bytes each block has beyond what its caller asked for (HH1).
    static inline std::size_t extra = 8;
    /// process_secret() (odd), kept here so that the canary costs no call.
    static inline std::uint64_t key = 1;
    /// The quarantine's mark, drawn from the secret (quarantine_mark).
    static inline std::uint64_t held_key = 1;
    static inline bool options_read = false;
    /// malloc's fast path takes sizes below it: the classes' with the canary's room, or
    /// none with the shuffle (malloc_slow shuffles: the fast path has no test of it).
    static inline std::size_t fast_below = Base::fast_limit - 8;

    /// A ring entry's word beside its block: the bytes the block holds, and whether it is
    /// a pooled block (its free then goes to its class's cache without a look at its span).
    static constexpr std::uint32_t entry_pooled = std::uint32_t{1} << 31;
    static constexpr std::uint32_t entry_bytes = entry_pooled - 1;
    static_assert(hardened_options{}.quarantine_max_block < entry_pooled);

    struct thread_part {
        void* block[ring_blocks];         // the thread's quarantine (HH2, HH3)
        std::uint32_t entry[ring_blocks]; // each block's bytes | entry_pooled
        std::uint32_t head = 0;           // the oldest block's place
        std::uint32_t count = 0;          // blocks in the ring, from head on
        std::size_t bytes = 0;
        void* held_back[class_slots] = {}; // a block of each class, not handed out yet (HH4)
        std::uint64_t bits = 0;   // random bits for the shuffle, the lowest next; <= 1: none
        std::uint64_t random = 0; // xorshift64 that draws them; 0: not seeded yet
        bool at_exit = false;     // its ring empties when it ends
    };
    /// A thread_part's mapping: whole OS pages, zero (a new part's every field).
    static constexpr std::size_t part_bytes = os_round_up(sizeof(thread_part));
    /// What a thread keeps in static TLS: 16 bytes, so that the library also loads with
    /// dlopen (glibc leaves a library loaded later a few hundred bytes of static TLS;
    /// the thread_part itself, 3.4 KB, made dlopen fail: "cannot allocate memory in
    /// static TLS block"). The sample countdown, which malloc's fast path reads, and the
    /// thread's part, mapped at its first free or shuffle (new_part).
    struct thread_record {
        /// Allocations before the thread's next sample; -1 before its first allocation.
        std::int32_t countdown = -1;
        thread_part* part = nullptr;
    };
    STA_TLS_MODEL static constinit inline thread_local thread_record mine{};

    /// The calling thread's part, mapped at its first use; nullptr when the OS refuses
    /// the page (the thread then frees without quarantine and allocates without shuffle).
    STA_FORCE_INLINE static thread_part* part() noexcept {
        thread_part* const t = mine.part;
        return t != nullptr ? t : new_part();
    }
    STA_NOINLINE static thread_part* new_part() noexcept {
        void* const pages = os_map_pages(part_bytes);
        return mine.part = pages != nullptr ? new (pages) thread_part{} : nullptr;
    }

    STA_FORCE_INLINE static void ready() noexcept {
        if (!options_read) [[unlikely]]
            set_options(read_options());
    }
    STA_NOINLINE static void set_options(const hardened_options& o) noexcept {
        options = o;
        extra = o.canary ? 8 : 0;
        fast_below = o.shuffle ? 0 : Base::fast_limit - 8;
        key = process_secret();
        held_key = mix64(key + 1) | 1;
        options_read = true;
    }

    /// Everything malloc's fast path does not take: the options read at a thread's first
    /// call, a sample, 0 bytes, big blocks, out of memory, every malloc with the shuffle.
    STA_NOINLINE static void* malloc_slow(std::size_t bytes) noexcept {
        ready();
        if (mine.countdown < 0) {
            if (options.sample_rate == 0)
                mine.countdown = INT32_MAX; // no samples: the fast path runs on
            else if (void* const p = sample(bytes))
                return p;
        }
        if (big(bytes))
            return big_block(bytes, 16);
        if (bytes > Base::max_request - extra)
            return out_of_memory();
        std::size_t held = 0;
        std::uint32_t slot = 0;
        if (void* const p = Base::malloc_pooled(bytes + extra, held, slot)) { // one look for both
            thread_part* const t = options.shuffle ? part() : nullptr;
            return armed(t != nullptr ? shuffled(*t, p, slot) : p, held);
        }
        // malloc's block holds good_size's bytes: its class, or the size asked above them
        return armed(Base::malloc(bytes + extra), Base::good_size(bytes + extra));
    }

    /// The countdown ran out: this allocation is a guarded block, and the next sample
    /// is sample_rate allocations later. A thread's first allocation draws where its
    /// first sample falls (uniform in its first sample_rate allocations).
    STA_NOINLINE static void* sample(std::size_t bytes) noexcept {
        const std::uint32_t rate = options.sample_rate;
        if (mine.countdown < -1) {
            const auto first = static_cast<std::int32_t>(
                mix64(reinterpret_cast<std::uintptr_t>(&mine) ^ process_secret()) % rate);
            mine.countdown = first - 1; // this allocation counts
            if (first != 0)
                return nullptr;
        }
        mine.countdown = static_cast<std::int32_t>(rate) - 1;
        if (bytes == 0 || bytes > Base::max_request)
            return nullptr;
        return guarded_block::alloc(bytes, 16);
    }

    /// A live guarded block is freed: a big one's mapping kept for reuse (GB2, GB3).
    static void free_guarded(void* p) noexcept {
        guarded_block::free(p, big(guarded_block::size_of(p)));
    }

    /// The drop-in's big blocks: above the private heap's tier (next_tiers.hpp).
    static bool big(std::size_t bytes) noexcept {
        return options.guard_big && bytes > default_page_bytes / 2;
    }
    /// A big block aligned to `alignment`; 0: one that realloc makes big, placed to grow.
    static void* big_block(std::size_t bytes, std::size_t alignment) noexcept {
        if (bytes > Base::max_request)
            return out_of_memory();
        void* const p = alignment == 0 ? guarded_block::alloc_growing(bytes)
                                       : guarded_block::alloc(bytes, alignment);
        return p != nullptr ? p : out_of_memory();
    }

  public:
    /// calloc's test: a guarded block's memory is fresh from the OS, zero.
    static bool zero_already(const void* p, std::size_t) noexcept {
        return !is_pool_segment(p) && guarded_block::lead_of(p) == guarded_live_lead;
    }

  private:
    /// Is p a guarded block (GB1)? One freed already is refused (GB2), and so is one
    /// whose tail is gone (GB1: written past its end).
    static bool is_guarded(const void* p, const char* function) noexcept {
        if (is_pool_segment(p))
            return false;
        const std::size_t lead = guarded_block::lead_of(p);
        if (lead == guarded_freed_lead)
            report_bad_free("sta_malloc", function, p, free_verdict::double_free,
                            guarded_block::size_of(p));
        if (lead != guarded_live_lead && lead != guarded_reused_lead)
            return false;
        if (!guarded_block::tail_intact(p))
            report_bad_free("sta_malloc", function, p, free_verdict::overflowed,
                            guarded_block::size_of(p));
        return true;
    }

    /// The block's address times the process's key (odd: no two blocks share one; one
    /// multiply on the paths of every malloc and free).
    static std::uint64_t canary_of(const void* p) noexcept {
        return reinterpret_cast<std::uintptr_t>(p) * key;
    }
    /// The quarantine's mark (HH2): a word of the process's secret, the same for every
    /// block (one load). A program cannot write one without reading one first, and one
    /// written gains nothing: a free of that block is refused as a double free.
    static std::uint64_t quarantine_mark() noexcept { return held_key; }
    static std::uint64_t word(const void* p, std::size_t at) noexcept {
        std::uint64_t w;
        std::memcpy(&w, static_cast<const std::byte*>(p) + at, sizeof w);
        return w;
    }
    static void set_word(void* p, std::size_t at, std::uint64_t w) noexcept {
        std::memcpy(static_cast<std::byte*>(p) + at, &w, sizeof w);
    }

    /// A block from the heap, of `held` bytes, gets its canary (HH1).
    static void* armed(void* p, std::size_t held) noexcept {
        if (p != nullptr && extra != 0)
            set_word(p, held - 8, canary_of(p));
        return p;
    }

    /// The bytes p holds when it is a live pooled block by the fast test, else 0: a
    /// pooled block's start whose canary is there (keyed by its address: a freed block's
    /// was zeroed, an interior address finds none) and, without zero on free, whose first
    /// word is no quarantine mark. (0 says nothing: live_held_checked decides.)
    STA_FORCE_INLINE static std::size_t live_pooled_held(const void* p) noexcept {
        if (const std::size_t held = extra != 0 ? Base::pooled_block_held(p) : 0; held != 0)
            [[likely]] {
            if (word(p, held - 8) == canary_of(p) && (options.zero || options.quarantine == 0 ||
                                                      word(p, 0) != quarantine_mark())) [[likely]]
                return held;
        }
        return 0;
    }
    /// The bytes p holds, after the checks of a live block: the fast test, else every check.
    STA_FORCE_INLINE static std::size_t live_held(const void* p, const char* function) noexcept {
        if (const std::size_t held = live_pooled_held(p); held != 0) [[likely]]
            return held;
        return live_held_checked(p, function);
    }
    /// free() of anything the fast test did not take: a guarded block, a block of the
    /// private heap or with a header, or what is refused.
    STA_NOINLINE static void free_unpooled(void* p) noexcept {
        if (is_guarded(p, "free()"))
            return free_guarded(p);
        retire(p, live_held_checked(p, "free()"), pooled_entry(p));
    }
    static std::uint32_t pooled_entry(const void* p) noexcept {
        return is_pool_segment(p) ? entry_pooled : 0;
    }
    /// The heap's checks (a block's start, not free), the quarantine's mark (HH2: freed
    /// already), the canary (HH1): the bytes p holds, or one line and abort.
    STA_NOINLINE static std::size_t live_held_checked(const void* p,
                                                      const char* function) noexcept {
        Base::check_live(p, function);
        const std::size_t held = Base::held_bytes(p);
        if (options.quarantine != 0 && held >= 16 && word(p, 0) == quarantine_mark() &&
            word(p, 8) == 0)
            report_bad_free("sta_malloc", function, p, free_verdict::double_free, held - extra);
        if (extra != 0 && word(p, held - 8) != canary_of(p))
            report_bad_free("sta_malloc", function, p, free_verdict::overflowed, held - extra);
        return held;
    }
    /// A block in quarantine was written after its free, or by an overflow (HH2).
    [[noreturn]] STA_NOINLINE static void refuse_written(const void* p) noexcept {
        report_bad_free("sta_malloc", "quarantine", p, free_verdict::overwritten,
                        Base::held_bytes(p) - extra);
    }

    /// p, checked and live, of `held` bytes (`pooled`: entry_pooled for a pooled block,
    /// else 0), is freed: zeroed, and into its thread's ring (the oldest block leaving
    /// when the ring is full, HH3) or back to the heap.
    STA_FORCE_INLINE static void retire(void* p, std::size_t held, std::uint32_t pooled) noexcept {
        if (options.zero)
            zero(p, held);
        if (options.quarantine == 0 || held > options.quarantine_max_block || held < 16)
            return free_checked(p, held, pooled);
        thread_part* const t = part();
        if (t == nullptr) [[unlikely]]
            return free_checked(p, held, pooled);
        set_word(p, 0, quarantine_mark()); // HH2
        if (t->count == ring_blocks && t->bytes + held <= options.quarantine) [[likely]] {
            leave_oldest(*t); // p enters as the oldest leaves
            return append(*t, p, held, pooled);
        }
        enter(*t, p, held, pooled);
    }
    /// p joins a ring that is filling, or over its bytes with it (HH3): the oldest
    /// blocks leave until p fits.
    STA_NOINLINE static void enter(thread_part& t, void* p, std::size_t held,
                                   std::uint32_t pooled) noexcept {
        if (!t.at_exit) [[unlikely]]
            t.at_exit = call_at_thread_exit<&thread_exit>(&t);
        while (t.count != 0 && (t.count == ring_blocks || t.bytes + held > options.quarantine))
            leave_oldest(t);
        append(t, p, held, pooled);
    }
    /// p becomes the ring's newest block (its place is free: count < ring_blocks).
    STA_FORCE_INLINE static void append(thread_part& t, void* p, std::size_t held,
                                        std::uint32_t pooled) noexcept {
        const std::uint32_t at = (t.head + t.count) & (ring_blocks - 1);
        t.block[at] = p;
        t.entry[at] = static_cast<std::uint32_t>(held) | pooled;
        ++t.count;
        t.bytes += held;
    }
    /// The ring's oldest block leaves (HH3).
    STA_FORCE_INLINE static void leave_oldest(thread_part& t) noexcept {
        const std::uint32_t at = t.head;
        t.head = (at + 1) & (ring_blocks - 1);
        --t.count;
        t.bytes -= t.entry[at] & entry_bytes;
        leave(t.block[at], t.entry[at]);
    }
    /// HH4: p, the heap's next block of the class at `slot`, or the block held back for
    /// the class — a draw's bit decides, and the other is held back.
    STA_FORCE_INLINE static void* shuffled(thread_part& t, void* p, std::uint32_t slot) noexcept {
        void* const back = t.held_back[slot];
        if (back == nullptr) [[unlikely]]
            return hold_first(t, p, slot);
        if (t.bits <= 1) [[unlikely]]
            t.bits = next_random(t) | std::uint64_t{1} << 63; // 63 draws, then the marker
        const bool swap = (t.bits & 1) != 0;
        t.bits >>= 1;
        if (!swap)
            return p;
        t.held_back[slot] = p;
        return back;
    }
    /// The class has no block held back: p is, and the heap's next is handed out (the
    /// thread's draws seeded, and its end noted, at its first).
    STA_NOINLINE static void* hold_first(thread_part& t, void* p, std::uint32_t slot) noexcept {
        if (!t.at_exit)
            t.at_exit = call_at_thread_exit<&thread_exit>(&t);
        if (t.random == 0)
            t.random = mix64(process_secret() ^ reinterpret_cast<std::uintptr_t>(&t)) | 1;
        void* const next = Base::malloc_slot(slot);
        if (next == nullptr)
            return p; // out of memory: nothing held back
        t.held_back[slot] = p;
        return next;
    }
    /// xorshift64 (seeded by hold_first, before the first draw).
    STA_FORCE_INLINE static std::uint64_t next_random(thread_part& t) noexcept {
        std::uint64_t x = t.random;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        t.random = x;
        return x;
    }
    /// Zeros over `held` bytes (a multiple of 16): small blocks by stores of their own,
    /// without a call.
    STA_FORCE_INLINE static void zero(void* p, std::size_t held) noexcept {
        if (held > 256)
            return (void)std::memset(p, 0, held);
        for (std::size_t at = 0; at < held; at += 16) { // held: a multiple of 16
            set_word(p, at, 0);
            set_word(p, at + 8, 0);
#if defined(__GNUC__)
            __asm__("" ::: "memory"); // no memset idiom: `rep stos` costs small blocks ~30 cycles
#endif
        }
    }
    /// A block leaves quarantine: checked (HH2), unmarked, freed in the heap — a pooled
    /// one onto its class's cache, as a sized free (it was checked live when it came in,
    /// and nothing else could free it since: HH2).
    STA_FORCE_INLINE static void leave(void* p, std::uint32_t entry) noexcept {
        check_pristine(p, entry & entry_bytes);
        set_word(p, 0, 0);
        free_checked(p, entry & entry_bytes, entry & entry_pooled);
    }
    /// A block checked live (live_held) goes back to the heap: a pooled one onto its
    /// class's cache, as a sized free, without a second look at its span.
    STA_FORCE_INLINE static void free_checked(void* p, std::size_t held,
                                              std::uint32_t pooled) noexcept {
        if (pooled != 0)
            return Base::free_pooled(p, held);
        Base::free(p);
    }
    /// HH2: the mark, and zeros in the rest of the `held` bytes — of a block of more than
    /// 2 * checked_end bytes, in its first and last checked_end bytes only, unless the
    /// option `check_whole` (a whole block's check costs reading it again: larson's
    /// blocks of up to 1000 bytes, freed long after their last use, ran 35 % slower).
    STA_FORCE_INLINE static void check_pristine(const void* p, std::size_t held) noexcept {
        const std::uint64_t mark_off = word(p, 0) ^ quarantine_mark(); // 0 when it is there
        if (!options.zero) {
            if (mark_off != 0)
                refuse_written(p);
            return;
        }
        // held is a multiple of 16 (and checked_end too): the words two at a time
        const bool whole = held <= 2 * checked_end || options.check_whole;
        std::uint64_t any = mark_off | word(p, 8);
        for (std::size_t at = 16; at < (whole ? held : checked_end); at += 16)
            any |= word(p, at) | word(p, at + 8);
        if (!whole)
            for (std::size_t at = held - checked_end; at < held; at += 16)
                any |= word(p, at) | word(p, at + 8);
        if (any != 0)
            refuse_written(p);
    }
    /// The bytes a quarantine's check reads at each end of a large block (check_pristine).
    static constexpr std::size_t checked_end = 64;
    static_assert(checked_end % 16 == 0, "the check reads 16 bytes at a time");

    /// A free that names the block's size: with `exact`, the size malloc, calloc or
    /// realloc was asked (a pooled block: its class is that size's; another: its header
    /// holds it), else one the block holds (option `sizes`).
    static void free_described(void* p, std::size_t bytes, bool exact,
                               const char* function) noexcept {
        if (p == nullptr)
            return;
        ready();
        if (!options.sizes)
            return free(p);
        if (is_guarded(p, function)) {
            const std::size_t usable = guarded_block::size_of(p);
            if (exact ? bytes != usable : bytes > usable)
                report_bad_size("sta_malloc", function, p, "size", bytes, usable);
            return free_guarded(p);
        }
        const std::size_t held = live_held(p, function);
        const bool named = bytes <= held - extra &&
                           (!exact || (is_pool_segment(p) ? Base::good_size(bytes + extra) == held
                                                          : bytes + extra == held));
        if (!named)
            report_bad_size("sta_malloc", function, p, "size", bytes, held - extra);
        retire(p, held, pooled_entry(p)); // checked above
    }
};

template <class Base>
hardened_options hardened_heap<Base>::read_options() noexcept {
    hardened_options o;
    const auto number = [](const char* name, unsigned long long fallback) {
        const char* const text = std::getenv(name);
        if (text == nullptr || *text == '\0')
            return fallback;
        char* end = nullptr;
        const unsigned long long value = std::strtoull(text, &end, 10);
        return end != text && *end == '\0' ? value : fallback;
    };
    o.canary = number("STA_MALLOC_CANARY", 1) != 0;
    o.zero = number("STA_MALLOC_ZERO_ON_FREE", 1) != 0;
    o.shuffle = number("STA_MALLOC_SHUFFLE", 0) != 0;
    o.check_whole = number("STA_MALLOC_QUARANTINE_CHECK_WHOLE", 0) != 0;
    o.quarantine = static_cast<std::size_t>(number("STA_MALLOC_QUARANTINE_KIB", 256)) << 10;
    o.sample_rate = static_cast<std::uint32_t>(number("STA_MALLOC_SAMPLE_RATE", 50000));
    o.guard_big = number("STA_MALLOC_GUARD_BIG", 1) != 0;
    o.sizes = number("STA_MALLOC_SIZE_CHECKS", 1) != 0;
    return o;
}

} // namespace sta::detail
