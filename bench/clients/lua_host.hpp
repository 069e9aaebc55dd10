// sta-pool clients: a Lua 5.4 allocator (lua_Alloc) on the pool's sized API.
//
// Lua tells its allocator the size of every block it frees or resizes (`osize`),
// so Lua needs no header: lua_Alloc maps one to one onto alloc / free / realloc.
// Two points of the lua_Alloc contract (Lua 5.4 manual, section 4.6) need care:
//   - with ptr == NULL, osize is not a size but a type tag (LUA_TSTRING, ...): it
//     is ignored; and nsize == 0 with ptr == NULL allocates nothing.
//   - "Lua assumes that the allocator never fails when osize >= nsize". The pool
//     keeps that promise within its classes, but a shrink from above 32 KiB into a
//     class moves the block (the sized free must find it where its size says) and so
//     can fail when no page can be mapped. Then the host hands the old block back
//     to Lua unchanged and remembers it in `kept`: the block's real size stays the
//     old one, and every later free or resize of that pointer is given that size.
//
// Invariants of lua_pool_host:
//  L1  kept[0, kept_count) lists distinct live blocks that Lua believes smaller than
//      they are; `real_bytes` is the size the pool allocated them with.
//  L2  Every other live block was allocated by Pool with the size Lua last gave it.
//  L3  kept_count == 0 on the fast path's branch: the table costs one predictable
//      compare until a shrink has failed, which needs the OS to refuse a page.
// When the table is full (kept_capacity blocks Lua believes shrunk while the OS
// refuses memory), the host aborts with a message rather than break L1.
#pragma once

#include "sta/detail/config.hpp"

#include <lua.hpp>

#include <cstddef>
#include <cstdio>
#include <cstdlib>

namespace sta_clients {

template <class Pool>
class lua_pool_host {
  public:
    static constexpr std::size_t kept_capacity = 64;

    /// The lua_Alloc; `ud` is the host.
    static void* allocate(void* ud, void* ptr, std::size_t osize, std::size_t nsize) noexcept {
        auto& host = *static_cast<lua_pool_host*>(ud);
        if (host.kept_count_ != 0) [[unlikely]]
            return host.allocate_with_kept(ptr, osize, nsize);
        if (nsize == 0) {
            Pool::free(ptr, osize); // free(nullptr, n) does nothing
            return nullptr;
        }
        if (ptr == nullptr)
            return Pool::alloc(nsize); // osize is a type tag here
        void* q = Pool::realloc(ptr, osize, nsize);
        if (q == nullptr && nsize <= osize) [[unlikely]]
            return host.keep(ptr, osize);
        return q;
    }

    /// A Lua state whose every allocation goes through this host.
    lua_State* new_state() noexcept { return lua_newstate(&allocate, this); }

    std::size_t kept_count() const noexcept { return kept_count_; }

  private:
    struct kept_block {
        void* block;
        std::size_t real_bytes;
    };
    kept_block kept_[kept_capacity] = {}; // L1
    std::size_t kept_count_ = 0;

    /// A shrink the pool could not do: Lua keeps the block it has.
    void* keep(void* ptr, std::size_t real_bytes) noexcept {
        if (kept_count_ == kept_capacity) {
            std::fprintf(stderr,
                         "sta-pool lua host: %zu shrinks failed while the OS refused "
                         "memory; Lua requires shrinks never to fail, giving up\n",
                         kept_capacity);
            std::abort();
        }
        kept_[kept_count_++] = {ptr, real_bytes};
        return ptr;
    }

    STA_NOINLINE void* allocate_with_kept(void* ptr, std::size_t osize,
                                          std::size_t nsize) noexcept {
        std::size_t i = 0;
        while (i < kept_count_ && (ptr == nullptr || kept_[i].block != ptr))
            ++i;
        if (i == kept_count_) { // not a kept block: the ordinary path
            if (nsize == 0) {
                Pool::free(ptr, osize);
                return nullptr;
            }
            if (ptr == nullptr)
                return Pool::alloc(nsize);
            void* q = Pool::realloc(ptr, osize, nsize);
            return q == nullptr && nsize <= osize ? keep(ptr, osize) : q;
        }
        const std::size_t real_bytes = kept_[i].real_bytes;
        if (nsize == 0) {
            Pool::free(ptr, real_bytes);
            kept_[i] = kept_[--kept_count_];
            return nullptr;
        }
        void* q = Pool::realloc(ptr, real_bytes, nsize);
        if (q == nullptr)
            return nsize <= osize ? ptr : nullptr; // still kept; a failed grow is Lua's to handle
        kept_[i] = kept_[--kept_count_];
        return q;
    }
};

} // namespace sta_clients
