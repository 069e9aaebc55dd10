// sta-pool: the GUI scene — 4,000 elements (by default) with a string name, a map of
// property values, a vector of event handlers (std::function) and a vector of children;
// built, its handlers invoked, then discarded, over any std allocator. One place for
// both of its users: scenario_benchmark measures it (the `gui` scenario,
// bench/scenarios.hpp) and examples/gui_scene.cpp shows it; a change here changes the
// benchmark's figures. The standard library only: the example builds everywhere.
#pragma once

#include <cstddef>
#include <functional>
#include <map>
#include <string>
#include <vector>

namespace bench {

template <template <class> class Alloc>
struct scene_types {
    using string = std::basic_string<char, std::char_traits<char>, Alloc<char>>;
    struct element {
        string name;
        std::map<string, string, std::less<string>, Alloc<std::pair<const string, string>>>
            properties;
        std::vector<std::function<void(int)>, Alloc<std::function<void(int)>>> handlers;
        std::vector<element*, Alloc<element*>> children;
    };
    using storage = std::vector<element, Alloc<element>>;
};

constexpr int scene_elements = 4000;

/// One round: build a scene of `elements` elements, call every handler, discard it. The
/// result is a checksum (the same over every allocator).
template <template <class> class Alloc>
std::size_t gui_round(int elements = scene_elements) {
    using types = scene_types<Alloc>;
    std::size_t checksum = 0;
    typename types::storage scene;
    scene.reserve(static_cast<std::size_t>(elements));
    for (int i = 0; i < elements; ++i) {
        auto& e = scene.emplace_back();
        e.name = "element_";
        e.name += std::to_string(i);
        e.name.append(" of the main window");
        e.properties.emplace("Width", std::to_string(100 + i % 300).c_str());
        e.properties.emplace("Height", "32");
        e.properties.emplace("Margin", "4,4,4,4");
        e.properties.emplace("Background", "#FF202020");
        e.properties.emplace("Content", e.name);
        for (int h = 0; h < 1 + i % 3; ++h)
            e.handlers.emplace_back(
                [&checksum, i](int v) { checksum += static_cast<std::size_t>(v + i); });
        if (i > 0)
            scene[static_cast<std::size_t>((i - 1) / 4)].children.push_back(&e);
    }
    for (auto& e : scene)
        for (auto& h : e.handlers)
            h(static_cast<int>(e.children.size()));
    return checksum + scene.size();
}

} // namespace bench
