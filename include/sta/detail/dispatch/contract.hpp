// sta-pool: what basic_memory_pool needs of a dispatch engine, checked by the compiler.
//
// An engine (dispatch/inline_branch.hpp, dispatch/self_rewriting_table.hpp) owns the
// pool's constinit state type (the layout's state, plus what the dispatch needs, e.g. the
// table policy's tables), finds it through its home (home/contract.hpp) and reaches
// memory only through its layout core (layout/contract.hpp).
#pragma once

#include "sta/detail/home/contract.hpp"
#include "sta/detail/layout/contract.hpp"
#include "sta/detail/pool/size_class.hpp"
#include "sta/detail/pool/state.hpp"

#include <concepts>
#include <cstddef>
#include <cstdint>
#include <type_traits>

namespace sta::detail {

/// What basic_memory_pool needs of a dispatch engine.
template <class Engine>
concept pool_engine = requires(std::size_t bytes, void* p, std::uint32_t slot) {
    { Engine::name } -> std::convertible_to<const char*>;
    requires size_class_set<typename Engine::classes>;
    requires std::derived_from<std::remove_reference_t<decltype(Engine::state())>, pool_state>;
    { Engine::alloc(bytes) }
    noexcept->std::same_as<void*>;
    { Engine::free(p, bytes) }
    noexcept->std::same_as<void>;
    { Engine::push(slot, p) }
    noexcept->std::same_as<void>;
    { Engine::alloc_slot(slot) }
    noexcept->std::same_as<void*>;
    { Engine::slot_serves_list(slot) }
    noexcept->std::same_as<bool>;
    requires layout_core<typename Engine::core>;
    requires pool_home<typename Engine::home, typename Engine::state_type>;
    // Its thread mode, read by the layout's code shared across families (layout/spans.hpp)
    // without instantiating the home: the home's own.
    requires Engine::threaded == Engine::home::threaded;
};

} // namespace sta::detail
