// sta-pool: a probe for docs/dispatch.md, "The free-list floor (pure get)" — does the
// addressing mode of a free-list head change the cost of popping from the list?
//
// Every variant runs the same loop, 1024 times over a warm 1024-block list:
//
//     head = *H;  next = *head;  *H = next;  out[i] = head;
//
// (H is where the list head lives), which is what a pool's inlined alloc does when a
// compiler barrier follows each call. Only the addressing mode of the load and the
// store of *H changes:
//
//     register     the head stays in a register (a pure pointer chase: the floor)
//     [rsp+disp]   a stack slot, as a local peer object is addressed
//     [base]       through a pointer held in a register
//     [base+index] through a pointer and an index register (constant in the loop)
//     [rip+disp]   a global addressed relative to the instruction pointer, as the
//                  compiler addresses the pool's state
//
// x86-64, GCC or Clang (inline assembly); not built by CMake. Build and run:
//     g++ -O2 -std=c++20 bench/store_forwarding_probe.cpp -o probe && ./probe
// Prints ns per pop: for each variant the fastest of 200 timed loops, median of 31
// such figures, the thread CPU clock's own cost included (the `empty` row).
#include "measure.hpp" // bench::thread_cpu_seconds

#include <algorithm>
#include <array>
#include <cstdio>

namespace {

constexpr int blocks = 1024;
constexpr int words_per_block = 4; // 32-byte blocks
alignas(64) void* arena[blocks * words_per_block];
alignas(64) void* out[blocks];

/// Link the blocks into a LIFO list, lowest first; *head = the first block.
void build(void** head) {
    for (int i = 0; i < blocks; ++i)
        arena[i * words_per_block] =
            i + 1 < blocks ? static_cast<void*>(&arena[(i + 1) * words_per_block]) : nullptr;
    *head = &arena[0];
}

} // namespace

extern "C" {
// The global list head of the [rip+disp] variant: extern "C" so the assembly can name it.
alignas(64) void* sta_probe_global_head;
}

namespace {

__attribute__((noinline)) void pop_register(void** dst, void* first) {
    __asm__ __volatile__("xor %%ecx, %%ecx\n"
                         "mov %1, %%rax\n"
                         "1:\n"
                         "mov %%rax, (%0,%%rcx,8)\n"
                         "mov (%%rax), %%rax\n"
                         "inc %%rcx\n"
                         "cmp $1024, %%rcx\n"
                         "jne 1b\n"
                         :
                         : "r"(dst), "r"(first)
                         : "rax", "rcx", "memory");
}

__attribute__((noinline)) void pop_stack(void** dst, void* first) {
    // 256 bytes below the stack pointer: past the 128-byte red zone the compiler may use
    __asm__ __volatile__("sub $256, %%rsp\n"
                         "mov %1, 96(%%rsp)\n"
                         "xor %%ecx, %%ecx\n"
                         "1:\n"
                         "mov 96(%%rsp), %%rax\n"
                         "mov (%%rax), %%rdx\n"
                         "mov %%rdx, 96(%%rsp)\n"
                         "mov %%rax, (%0,%%rcx,8)\n"
                         "inc %%rcx\n"
                         "cmp $1024, %%rcx\n"
                         "jne 1b\n"
                         "add $256, %%rsp\n"
                         :
                         : "r"(dst), "r"(first)
                         : "rax", "rcx", "rdx", "memory");
}

__attribute__((noinline)) void pop_base(void** dst, void** head) {
    __asm__ __volatile__("xor %%ecx, %%ecx\n"
                         "1:\n"
                         "mov (%1), %%rax\n"
                         "mov (%%rax), %%rdx\n"
                         "mov %%rdx, (%1)\n"
                         "mov %%rax, (%0,%%rcx,8)\n"
                         "inc %%rcx\n"
                         "cmp $1024, %%rcx\n"
                         "jne 1b\n"
                         :
                         : "r"(dst), "r"(head)
                         : "rax", "rcx", "rdx", "memory");
}

__attribute__((noinline)) void pop_base_index(void** dst, void** head) {
    __asm__ __volatile__("xor %%ecx, %%ecx\n"
                         "mov $3, %%r9d\n"
                         "lea -24(%1), %%r8\n" // r8 + 3 * 8 == head
                         "1:\n"
                         "mov (%%r8,%%r9,8), %%rax\n"
                         "mov (%%rax), %%rdx\n"
                         "mov %%rdx, (%%r8,%%r9,8)\n"
                         "mov %%rax, (%0,%%rcx,8)\n"
                         "inc %%rcx\n"
                         "cmp $1024, %%rcx\n"
                         "jne 1b\n"
                         :
                         : "r"(dst), "r"(head)
                         : "rax", "rcx", "rdx", "r8", "r9", "memory");
}

__attribute__((noinline)) void pop_rip(void** dst) {
    __asm__ __volatile__("xor %%ecx, %%ecx\n"
                         "1:\n"
                         "mov sta_probe_global_head(%%rip), %%rax\n"
                         "mov (%%rax), %%rdx\n"
                         "mov %%rdx, sta_probe_global_head(%%rip)\n"
                         "mov %%rax, (%0,%%rcx,8)\n"
                         "inc %%rcx\n"
                         "cmp $1024, %%rcx\n"
                         "jne 1b\n"
                         :
                         : "r"(dst)
                         : "rax", "rcx", "rdx", "memory");
}

__attribute__((noinline)) void pop_nothing(void** dst) {
    __asm__ __volatile__("" : : "r"(dst) : "memory");
}

/// ns per pop: `prepare` rebuilds the list (untimed), `pop` runs the loop (timed).
template <class Prepare, class Pop>
double ns_per_pop(Prepare prepare, Pop pop) {
    std::array<double, 31> figures{};
    for (double& figure : figures) {
        double fastest = 1.0;
        for (int k = 0; k < 200; ++k) {
            prepare();
            const double t0 = bench::thread_cpu_seconds();
            pop();
            const double t1 = bench::thread_cpu_seconds();
            fastest = std::min(fastest, t1 - t0);
        }
        figure = fastest;
    }
    std::nth_element(figures.begin(), figures.begin() + 15, figures.end());
    return figures[15] / blocks * 1e9;
}

} // namespace

int main() {
    void* local_head = nullptr;
    void* heap_like[8] = {}; // the [base] and [base+index] heads: a slot reached by pointer
    void** pointed = &heap_like[4];
    for (int round = 0; round < 3; ++round) {
        const double reg =
            ns_per_pop([&] { build(&local_head); }, [&] { pop_register(out, local_head); });
        const double stack =
            ns_per_pop([&] { build(&local_head); }, [&] { pop_stack(out, local_head); });
        const double base = ns_per_pop([&] { build(pointed); }, [&] { pop_base(out, pointed); });
        const double indexed =
            ns_per_pop([&] { build(pointed); }, [&] { pop_base_index(out, pointed); });
        const double rip =
            ns_per_pop([&] { build(&sta_probe_global_head); }, [&] { pop_rip(out); });
        const double empty = ns_per_pop([&] { build(&local_head); }, [&] { pop_nothing(out); });
        std::printf("ns per pop: register %.2f  [rsp+disp] %.2f  [base] %.2f  "
                    "[base+index] %.2f  [rip+disp] %.2f  (empty %.2f)\n",
                    reg, stack, base, indexed, rip, empty);
    }
    return 0;
}
