// sta-pool plugin demo: the binary interface between the host and the shapes plugin.
//
// The plugin exports one factory per class, a data symbol named
// "shapes_factory_<class name>" (extern "C", so the name is exactly that). A factory
// is the seed's {factory, ActivateInstance} pair made explicit: a context pointer and
// a function that takes it first. The host's sta::lazy_slot stores both words and
// from then on creates an object with one indirect call: create(context, size).
//
// Objects are created and destroyed by the plugin (release()), so host and plugin
// never free each other's memory.
#pragma once

namespace shapes {

/// An object made by the plugin. Invariant: release() is called exactly once, after
/// which the object is gone; nothing else destroys it (the destructor is protected).
struct shape {
    virtual double area() const = 0;
    virtual const char* class_name() const = 0;
    virtual void release() = 0;

  protected:
    ~shape() = default;
};

/// One class's factory. Invariant: create is never null; context is whatever create
/// expects as its first argument and lives as long as the plugin is loaded.
struct factory {
    void* context;
    shape* (*create)(void* context, double size);
};

/// The plugin's bookkeeping, exported as "shapes_plugin_state": the host checks that
/// every object it created was released. Invariant: live_objects = created - released.
struct plugin_state {
    long live_objects;
    long created;
};

} // namespace shapes
