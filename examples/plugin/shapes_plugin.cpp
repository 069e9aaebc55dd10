// sta-pool plugin demo: the shapes plugin, a MODULE the host loads with dlopen.
//
// Exports, by class name: shapes_factory_circle and shapes_factory_square (see
// shape_api.hpp), and shapes_plugin_state, the count of live objects.
#include "shape_api.hpp"

#include <new>

extern "C" {
extern shapes::plugin_state shapes_plugin_state;
extern const shapes::factory shapes_factory_circle;
extern const shapes::factory shapes_factory_square;
}

shapes::plugin_state shapes_plugin_state{0, 0};

namespace {

/// What a class's factory context holds: the name its objects report.
struct class_info {
    const char* name;
};

class_info circle_info{"circle"};
class_info square_info{"square"};

template <class Derived>
struct counted : shapes::shape {
    explicit counted(const class_info* c) : info(c) {
        ++shapes_plugin_state.live_objects;
        ++shapes_plugin_state.created;
    }
    const char* class_name() const override { return info->name; }
    void release() override {
        --shapes_plugin_state.live_objects;
        delete static_cast<Derived*>(this);
    }
    const class_info* info;
};

struct circle final : counted<circle> {
    circle(const class_info* c, double r) : counted(c), radius(r) {}
    double area() const override { return 3.141592653589793 * radius * radius; }
    double radius;
};

struct square final : counted<square> {
    square(const class_info* c, double s) : counted(c), side(s) {}
    double area() const override { return side * side; }
    double side;
};

template <class T>
shapes::shape* create(void* context, double size) {
    return new T(static_cast<const class_info*>(context), size);
}

} // namespace

const shapes::factory shapes_factory_circle{&circle_info, &create<circle>};
const shapes::factory shapes_factory_square{&square_info, &create<square>};
