// Passing a boxed value to a COM method that reads it (issue 15; Windows only, run under
// wine here): the seed's static bool box against a pool box and the conventional
// interlocked heap box (com_box_peer.hpp), and for an int32_t the pool box against the
// heap box. The baseline passes a pointer the caller already holds (a box made once):
// what remains above it is the cost of boxing. Each call is the method's virtual call
// through an interface pointer the compiler cannot see through, the method's virtual
// get_Value, and, for the boxes made per call, their creation and last Release.
// Self-timed (self_timed.hpp); prints a Markdown table and the ratios, or with `jsonl`
// the JSON result lines of every row and repetition (scripts/report.sh: measures
// box/bool and box/int32).
//
//   com_box_benchmark [iterations=1000000] [repetitions=15] [jsonl]
#include "com_box_peer.hpp"
#include "self_timed.hpp"
#include "sta/com_box.hpp"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

using sta::com::com_ptr;
using sta::com::reference;

// The interface and the callee have external linkage: inside an anonymous namespace
// g++ sees every implementation of IToggle and calls toggle's methods directly.
MIDL_INTERFACE("8e3c1a7d-2b4f-4c69-9d0e-5a1f3b7c9e01")
IToggle : public IUnknown {
    /// ToggleButton::IsChecked's shape: an optional bool (null: indeterminate).
    virtual HRESULT STDMETHODCALLTYPE put_IsChecked(reference<bool> * value) = 0;
    /// An optional int32_t property.
    virtual HRESULT STDMETHODCALLTYPE put_Count(reference<std::int32_t> * value) = 0;
};
#ifdef __CRT_UUID_DECL
__CRT_UUID_DECL(IToggle, 0x8e3c1a7d, 0x2b4f, 0x4c69, 0x9d, 0x0e, 0x5a, 0x1f, 0x3b, 0x7c, 0x9e, 0x01)
#endif

/// The callee: reads the value and stores it; it keeps no reference (as WinRT's
/// property setters do not for value arguments).
class toggle : public sta::com::immortal<IToggle> {
  public:
    HRESULT STDMETHODCALLTYPE put_IsChecked(reference<bool>* value) override {
        bool v = false;
        if (value != nullptr && FAILED(value->get_Value(&v)))
            return E_FAIL;
        checked_ = value == nullptr ? 2 : v ? 1 : 0;
        return S_OK;
    }
    HRESULT STDMETHODCALLTYPE put_Count(reference<std::int32_t>* value) override {
        std::int32_t v = 0;
        if (value != nullptr && FAILED(value->get_Value(&v)))
            return E_FAIL;
        count_ = v;
        return S_OK;
    }
    [[nodiscard]] int checked() const { return checked_; }
    [[nodiscard]] std::int32_t count() const { return count_; }

  private:
    int checked_ = 2;
    std::int32_t count_ = 0;
};
namespace {

toggle the_toggle;
/// The caller sees only the interface pointer, loaded through a volatile: every call
/// is a real virtual call.
IToggle* volatile toggle_interface = &the_toggle;

unsigned long counter = 0; // the value alternates from call to call
bool next_bool() {
    return (++counter & 1) != 0;
}
std::int32_t next_int() {
    return static_cast<std::int32_t>(++counter);
}

// Boxes made once, for the baselines.
reference<bool>* const existing_bool[2] = {sta::com::make_box(false).detach(),
                                           sta::com::make_box(true).detach()};
reference<std::int32_t>* const existing_int = sta::com::make_box(std::int32_t{7}).detach();

// ---- bool --------------------------------------------------------------------------

void bool_existing_pointer() {
    toggle_interface->put_IsChecked(existing_bool[next_bool()]);
}
void bool_static_box() {
    toggle_interface->put_IsChecked(sta::com::box(next_bool()));
}
void bool_pool_box() {
    toggle_interface->put_IsChecked(sta::com::make_box(next_bool()).get());
}
/// The same pool box from a seed-mode pool (threads::one_owner): a constant address on
/// the way where sta::memory_pool reads its thread's slot (os/thread_slot.hpp).
using seed_pool = sta::basic_memory_pool<sta::dispatch::default_policy, void,
                                         sta::layout::default_layout, sta::threads::one_owner>;
void bool_seed_pool_box() {
    toggle_interface->put_IsChecked(sta::com::make_box<bool, seed_pool>(next_bool()).get());
}
void bool_heap_box() {
    auto b = com_ptr<reference<bool>>::attach(new heap_box<bool>(next_bool()));
    toggle_interface->put_IsChecked(b.get());
}

// ---- int32_t -----------------------------------------------------------------------

void int_existing_pointer() {
    ++counter;
    toggle_interface->put_Count(existing_int);
}
void int_pool_box() {
    toggle_interface->put_Count(sta::com::box(next_int()).get());
}
void int_heap_box() {
    auto b = com_ptr<reference<std::int32_t>>::attach(new heap_box<std::int32_t>(next_int()));
    toggle_interface->put_Count(b.get());
}

void print_table(const char* title, const std::vector<self_timed::row>& rows) {
    const double base = self_timed::median(rows[0].ns);
    std::printf("| %s | ns per call | ratio to passing a pointer |\n|---|---:|---:|\n", title);
    for (const auto& r : rows) {
        const double m = self_timed::median(r.ns);
        std::printf("| %s | %.2f | %.2f |\n", r.name, m, m / base);
    }
    std::printf("\n");
}

} // namespace

int main(int argc, char** argv) {
    const auto [iterations, repetitions] =
        self_timed::parse_arguments(argc, argv, "com_box_benchmark", 1000000);
    std::vector<self_timed::row> bools = {
        {"a pointer the caller holds (no boxing)", &bool_existing_pointer, {}, "pointer"},
        {"**`sta::com::box(bool)`**: a static box", &bool_static_box, {}, "static-box"},
        {"`sta::com::make_box(bool)`: a pool box", &bool_pool_box, {}, "sta-spans"},
        {"heap box, interlocked count (`box_value`)", &bool_heap_box, {}, "heap-box"},
        {"`make_box<bool, seed-mode pool>`: no thread slot",
         &bool_seed_pool_box,
         {},
         "sta-spans-seed"},
    };
    std::vector<self_timed::row> ints = {
        {"a pointer the caller holds (no boxing)", &int_existing_pointer, {}, "pointer"},
        {"**`sta::com::box(int32_t)`**: a pool box", &int_pool_box, {}, "sta-spans"},
        {"heap box, interlocked count (`box_value`)", &int_heap_box, {}, "heap-box"},
    };
    self_timed::run(bools, iterations, repetitions);
    self_timed::run(ints, iterations, repetitions);

    // The callee reads what it is given, through each kind of box.
    toggle_interface->put_IsChecked(sta::com::box(true));
    const int from_static = the_toggle.checked();
    toggle_interface->put_IsChecked(sta::com::make_box(false).get());
    const int from_pool = the_toggle.checked();
    toggle_interface->put_Count(sta::com::box(std::int32_t{-3}).get());
    if (from_static != 1 || from_pool != 0 || the_toggle.count() != -3) {
        std::fprintf(stderr, "com_box_benchmark: the callee did not read the boxed values\n");
        return 1;
    }

    if (self_timed::jsonl(argc, argv)) {
        self_timed::print_lines(bools, "box/bool");
        self_timed::print_lines(ints, "box/int32");
    } else {
        std::printf("com_box_benchmark: %ld calls x %d repetitions, median ns per call of a "
                    "COM method that reads the boxed value\n\n",
                    iterations, repetitions);
        print_table("`IReference<bool>*` argument", bools);
        print_table("`IReference<int32_t>*` argument", ints);
        const auto m = [](const std::vector<self_timed::row>& rows, std::size_t i) {
            return self_timed::median(rows[i].ns);
        };
        std::printf("static bool box / pointer = %.2fx (target: <= 1.05, no more than a "
                    "pointer)\n",
                    m(bools, 1) / m(bools, 0));
        std::printf("heap bool box / static bool box = %.2fx\n", m(bools, 3) / m(bools, 1));
        std::printf("heap bool box / pool bool box = %.2fx (target: > 1)\n",
                    m(bools, 3) / m(bools, 2));
        std::printf("heap int32 box / pool int32 box = %.2fx (target: > 1)\n",
                    m(ints, 2) / m(ints, 1));
    }

    for (reference<bool>* b : existing_bool)
        b->Release();
    existing_int->Release();
    return 0; // the targets are a benchmark's, not a test's: ctest only proves it runs
}
