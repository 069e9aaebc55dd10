// Under wine (or Windows): what reading a thread's own pointer costs, each way Windows
// offers one (issue 28: how the per-thread pool finds its state, os/thread_slot.hpp).
// Each row is a call to a function the compiler does not inline that returns the
// pointer; self-timed (bench/self_timed.hpp), rows interleaved, ns per call (the call
// included: the first row, a global, is that floor).
//
//   thread_slot_benchmark [iterations=10000000] [repetitions=11]
//
//   a global                  one load: the seed's mode reaches its state so
//   thread_local              the compiler's TLS: with mingw-w64 g++ emulated
//                             (__emutls_get_address), with clang and MSVC native
//                             (gs:[0x58][_tls_index] + offset)
//   TlsGetValue, FlsGetValue  the Windows calls
//   the TEB's TlsSlots        a TlsAlloc index below 64 read straight from the thread's
//                             TEB, gs:[0x1480 + 8 * index]: one gs-relative load after
//                             the index's (x86-64)
//   sta thread_slot           what the per-thread pool reads (os/thread_slot.hpp): with
//                             g++ a TlsAlloc index of its own read from the TEB, as
//                             the row above; elsewhere the compiler's thread_local
#include "../self_timed.hpp"

#include <sta/detail/os/thread_slot.hpp>

#include <cstdint>
#include <cstdio>
#include <vector>

namespace {

int target = 0;
int other = 0;
void* volatile sink = nullptr;

void* volatile global_pointer = &target;
STA_NOINLINE void* read_global() {
    return global_pointer;
}

thread_local void* thread_pointer = &target;
STA_NOINLINE void* read_thread_local() {
    return thread_pointer;
}

DWORD tls_index = TLS_OUT_OF_INDEXES;
STA_NOINLINE void* read_tls() {
    return ::TlsGetValue(tls_index);
}

/// The TLS slot's offset in the TEB (TEB.TlsSlots, 64 slots of 8 bytes at 0x1480).
std::uintptr_t teb_offset = 0;
STA_NOINLINE void* read_teb() {
    void* p;
    __asm__("movq %%gs:(%1), %0" : "=r"(p) : "r"(teb_offset));
    return p;
}

DWORD fls_index = FLS_OUT_OF_INDEXES;
STA_NOINLINE void* read_fls() {
    return ::FlsGetValue(fls_index);
}

void at_exit(int*) noexcept {}
using slot = sta::detail::thread_slot<int, &other, &at_exit>;
STA_NOINLINE void* read_thread_slot() {
    return slot::get();
}

void global_row() {
    sink = read_global();
}
void thread_local_row() {
    sink = read_thread_local();
}
void tls_row() {
    sink = read_tls();
}
void teb_row() {
    sink = read_teb();
}
void fls_row() {
    sink = read_fls();
}
void thread_slot_row() {
    sink = read_thread_slot();
}

} // namespace

int main(int argc, char** argv) {
    const auto [iterations, repetitions] =
        self_timed::parse_arguments(argc, argv, "thread_slot_benchmark", 10000000, 11);
    tls_index = ::TlsAlloc();
    fls_index = ::FlsAlloc(nullptr);
    if (tls_index >= 64) {
        std::fprintf(stderr, "thread_slot_benchmark: no TLS index below 64\n");
        return 1;
    }
    teb_offset = 0x1480 + 8 * std::uintptr_t{tls_index};
    if (fls_index == FLS_OUT_OF_INDEXES || !slot::set(&target) ||
        !::TlsSetValue(tls_index, &target) || !::FlsSetValue(fls_index, &target)) {
        std::fprintf(stderr, "thread_slot_benchmark: no TLS or FLS index\n");
        return 1;
    }
    if (read_thread_slot() != &target || read_thread_local() != &target || read_tls() != &target ||
        read_teb() != &target || read_fls() != &target) {
        std::fprintf(stderr, "thread_slot_benchmark: a row read the wrong pointer\n");
        return 1;
    }
    std::vector<self_timed::row> rows = {
        {"a global", &global_row, {}},
        {"`thread_local`", &thread_local_row, {}},
        {"`TlsGetValue`", &tls_row, {}},
        {"the TEB's TlsSlots, gs:[0x1480 + 8 × index]", &teb_row, {}},
        {"`FlsGetValue`", &fls_row, {}},
        {"sta `thread_slot` (os/thread_slot.hpp)", &thread_slot_row, {}},
    };
    self_timed::run(rows, iterations, repetitions);
    std::printf("thread_slot_benchmark (%s): %ld calls x %d repetitions, ns per call\n\n"
                "| a thread's pointer, read by | median | min | max | minus a global |\n"
                "|---|---:|---:|---:|---:|\n",
                self_timed::compiler().c_str(), iterations, repetitions);
    const double floor = self_timed::median(rows[0].ns);
    for (const auto& r : rows)
        std::printf("| %s | %.2f | %.2f | %.2f | %.2f |\n", r.name, self_timed::median(r.ns),
                    self_timed::lowest(r.ns), self_timed::highest(r.ns),
                    self_timed::median(r.ns) - floor);
    return 0;
}
