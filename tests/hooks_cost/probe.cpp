// The fast paths as a release build compiles them, for tests/hooks_cost: compiled
// once as is and once with the hook sites cut out (STA_POOL_NO_HOOKS=1); the test
// compares the machine code of the two objects, which must be identical.
#include <sta/memory_pool.hpp>

using table_pool =
    sta::basic_memory_pool<sta::dispatch::self_rewriting_table, void, sta::layout::shared_cursor>;
using branch_pool =
    sta::basic_memory_pool<sta::dispatch::inline_branch, void, sta::layout::shared_cursor>;
using table_spans_pool =
    sta::basic_memory_pool<sta::dispatch::self_rewriting_table, void, sta::layout::spans>;
using branch_spans_pool =
    sta::basic_memory_pool<sta::dispatch::inline_branch, void, sta::layout::spans>;

extern "C" {
void* probe_table_alloc(std::size_t n) {
    return table_pool::alloc(n);
}
void* probe_table_alloc32() {
    return table_pool::alloc<32>();
}
void probe_table_free(void* p, std::size_t n) {
    table_pool::free(p, n);
}
void probe_table_free32(void* p) {
    table_pool::free<32>(p);
}
void* probe_branch_alloc(std::size_t n) {
    return branch_pool::alloc(n);
}
void* probe_branch_alloc32() {
    return branch_pool::alloc<32>();
}
void probe_branch_free(void* p, std::size_t n) {
    branch_pool::free(p, n);
}
void probe_branch_free32(void* p) {
    branch_pool::free<32>(p);
}
void* probe_table_spans_alloc(std::size_t n) {
    return table_spans_pool::alloc(n);
}
void* probe_table_spans_alloc32() {
    return table_spans_pool::alloc<32>();
}
void probe_table_spans_free(void* p, std::size_t n) {
    table_spans_pool::free(p, n);
}
void probe_table_spans_free32(void* p) {
    table_spans_pool::free<32>(p);
}
void* probe_branch_spans_alloc(std::size_t n) {
    return branch_spans_pool::alloc(n);
}
void* probe_branch_spans_alloc32() {
    return branch_spans_pool::alloc<32>();
}
void probe_branch_spans_free(void* p, std::size_t n) {
    branch_spans_pool::free(p, n);
}
void probe_branch_spans_free32(void* p) {
    branch_spans_pool::free<32>(p);
}
}
