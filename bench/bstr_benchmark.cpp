// sta-pool: the BSTR seed's program, measured — n appends alternating "hiya" and "bye"
// (the loop counts down, as in the seed) onto one string, four ways:
//
//   original   ATL's old CComBSTR::Append: SysAllocStringLen(n1 + n2) + copy both
//              parts + SysFreeString, on every append (over sta's Sys* functions on
//              the system heap). O(n^2) bytes copied.
//   system     sta::CComBSTR over the system heap (malloc / realloc): every append is
//              SysReAllocStringLen, i.e. realloc, which extends the block in place
//              whenever it can.
//   pool       sta::CComBSTR over sta::memory_pool: realloc within a power-of-two class
//              is free, the last block bumped grows in place, and above 32 KiB the
//              pool hands over to realloc.
//   pool-cursor, pool-spans   the same over a pool of each layout (the seed's shared
//              cursor, spans), named explicitly whatever sta::memory_pool's default is:
//              scripts/report.py judges the ">= 38x the original" target on them.
//   u16string  std::u16string::append: geometric capacity growth, the reference.
//
// Names: bstr/<way>/<appends>. Items processed = appends, so items_per_second stays
// flat for a linear algorithm and falls in proportion to n for a quadratic one.
// The original algorithm stops at 3 * 10^4 appends (about 1.6 GB copied per run, near
// a second); 10^5 took 13 s per run here and 10^6 would copy ~170 GB.
#include "harness.hpp"
#include "sta/com_bstr.hpp"

#include <benchmark/benchmark.h>

#include <cstring>
#include <string>

namespace {

using system_functions = sta::bstr_functions<sta::bstr_heap::system>;
using pool_functions = sta::bstr_functions<sta::bstr_heap::pool<>>;
struct bstr_tag {};
using cursor_functions =
    sta::bstr_functions<sta::bstr_heap::pool<bench::pool_of<bench::pools::sta_cursor, bstr_tag>>>;
using spans_functions =
    sta::bstr_functions<sta::bstr_heap::pool<bench::pool_of<bench::pools::sta_spans, bstr_tag>>>;

/// ATL's old Append(lpsz, nLen), as the seed quotes it: allocate, copy, free.
class original_bstr {
  public:
    original_bstr() = default;
    original_bstr(const original_bstr&) = delete;
    original_bstr& operator=(const original_bstr&) = delete;
    ~original_bstr() { system_functions::SysFreeString(m_str); }

    sta::HRESULT Append(sta::LPCOLESTR lpsz) noexcept {
        return Append(lpsz, static_cast<int>(std::char_traits<char16_t>::length(lpsz)));
    }
    sta::HRESULT Append(sta::LPCOLESTR lpsz, int nLen) noexcept {
        if (lpsz == nullptr)
            return nLen != 0 ? sta::E_INVALIDARG : sta::S_OK;
        const int n1 = static_cast<int>(Length());
        if (n1 + nLen < n1)
            return sta::E_OUTOFMEMORY;
        sta::BSTR b =
            system_functions::SysAllocStringLen(nullptr, static_cast<sta::UINT>(n1 + nLen));
        if (b == nullptr)
            return sta::E_OUTOFMEMORY;
        if (m_str != nullptr)
            std::memcpy(b, m_str, static_cast<std::size_t>(n1) * sizeof(sta::OLECHAR));
        std::memcpy(b + n1, lpsz, static_cast<std::size_t>(nLen) * sizeof(sta::OLECHAR));
        b[n1 + nLen] = 0;
        system_functions::SysFreeString(m_str);
        m_str = b;
        return sta::S_OK;
    }
    unsigned Length() const noexcept { return system_functions::SysStringLen(m_str); }

    sta::BSTR m_str = nullptr;
};

/// std::u16string with the members the loop uses.
struct u16string_bstr {
    std::u16string s;
    sta::HRESULT Append(const char16_t* p) {
        s.append(p);
        return sta::S_OK;
    }
    unsigned Length() const noexcept { return static_cast<unsigned>(s.size()); }
};

template <class String>
void seed_program(benchmark::State& state) {
    const int appends = static_cast<int>(state.range(0));
    for (auto _ : state) {
        String append_play;
        for (int xy = appends; xy > 0; xy--) {
            const char16_t* zy = xy % 2 == 0 ? u"hiya" : u"bye";
            benchmark::DoNotOptimize(append_play.Append(zy));
        }
        benchmark::DoNotOptimize(append_play.Length());
        benchmark::ClobberMemory();
    }
    state.SetItemsProcessed(state.iterations() * appends);
}

void linear_sizes(benchmark::internal::Benchmark* b) {
    b->Arg(1000)->Arg(10000)->Arg(100000)->Arg(1000000);
}

void original_sizes(benchmark::internal::Benchmark* b) {
    b->Arg(1000)->Arg(3000)->Arg(10000)->Arg(30000);
}

BENCHMARK(seed_program<original_bstr>)->Name("bstr/original")->Apply(original_sizes);
BENCHMARK(seed_program<sta::basic_com_bstr<system_functions>>)
    ->Name("bstr/system")
    ->Apply(linear_sizes);
BENCHMARK(seed_program<sta::basic_com_bstr<pool_functions>>)
    ->Name("bstr/pool")
    ->Apply(linear_sizes);
BENCHMARK(seed_program<sta::basic_com_bstr<cursor_functions>>)
    ->Name("bstr/pool-cursor")
    ->Apply(linear_sizes);
BENCHMARK(seed_program<sta::basic_com_bstr<spans_functions>>)
    ->Name("bstr/pool-spans")
    ->Apply(linear_sizes);
BENCHMARK(seed_program<u16string_bstr>)->Name("bstr/u16string")->Apply(linear_sizes);

} // namespace

BENCHMARK_MAIN();
