// sta-pool bench and test support: a small XML DOM (elements, attributes, text) built
// with Expat, written once as a template over the allocator, so the same code runs on
// sta::arena, sta::memory_pool, std::allocator and std::pmr::monotonic_buffer_resource.
// Shared by tests/xml_dom_test.cpp (all four give identical queries and serialisation)
// and bench/xml_dom_benchmark.cpp (what each allocator costs).
//
// The builder is allocation-shaped the way an arena likes it, and that helps every
// allocator alike: text is gathered in a scratch buffer and stored once, with its final
// size; a node's children are gathered in a scratch vector and stored once, when the
// element ends. Scratch memory is the builder's own (std::allocator), reused across
// documents, and the same for every allocator under test.
#pragma once

#include <expat.h>

#include <cstddef>
#include <deque>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace xml_dom {

enum class node_kind : unsigned char { element, text };

/*  The DOM of one document, over allocator `Alloc` (an allocator of char; every other
    type is a rebind of it):

      node (element "a")                    node (text)
      +-------+------+------------+------+   +------+-----------+
      | kind  | name | attributes | kids |   | kind | name=text |   (no attributes,
      +-------+------+-----+------+--+---+   +------+-----------+    no children)
                           |         |
               [ {name, value} ... ]  [ node*, node*, ... ]  in document order

    Invariants: a text node has no attributes and no children; no two text nodes are
    siblings next to each other (the builder merges character data); every node,
    string and vector of a document lives in memory from the document's allocator.  */
template <class Alloc>
struct dom {
    template <class T>
    using alloc_of = typename std::allocator_traits<Alloc>::template rebind_alloc<T>;
    using string = std::basic_string<char, std::char_traits<char>, alloc_of<char>>;

    struct attribute {
        string name;
        string value;
    };

    struct node {
        node_kind kind;
        string name; ///< an element's tag, or a text node's text
        std::vector<attribute, alloc_of<attribute>> attributes;
        std::vector<node*, alloc_of<node*>> children;

        node(node_kind k, std::string_view text, const Alloc& a)
            : kind(k), name(text.data(), text.size(), a), attributes(a), children(a) {}
    };
};

/// One recorded Expat callback: documents can be replayed into a DOM without Expat,
/// so a benchmark can time building the DOM apart from parsing the text.
struct event {
    enum kind_t : unsigned char { start_tag, end_tag, characters } kind;
    std::string_view text;                 ///< start: the tag; text: the characters
    std::vector<const char*> attributes{}; ///< start: name, value, ..., nullptr
};

/// The events of one document, with the strings they point into.
struct event_log {
    std::deque<std::string> strings; // stable addresses
    std::vector<event> events;
};

/// What the builder needs, kept between documents: the Expat parser and scratch.
class scratch {
  public:
    scratch() : parser_(XML_ParserCreate(nullptr)) {}
    ~scratch() { XML_ParserFree(parser_); }
    scratch(const scratch&) = delete;
    scratch& operator=(const scratch&) = delete;

  private:
    template <class Alloc, bool DestroyNodes>
    friend class document;
    friend bool record(scratch& s, std::string_view xml, event_log& log, std::string* error);

    XML_Parser parser_;
    std::string text_;                     // character data not yet stored
    std::vector<std::vector<void*>> kids_; // per open depth: children gathered so far
    std::vector<void*> open_;              // the open elements
};

/// A document over `Alloc`. With DestroyNodes, clear() and the destructor walk the tree
/// and destroy and deallocate every node (std::allocator, sta::allocator). Without, they
/// only forget the root: the memory belongs to a resource released at once (an arena,
/// a monotonic buffer), and no destructor runs.
template <class Alloc, bool DestroyNodes>
class document {
  public:
    using types = dom<Alloc>;
    using node = typename types::node;
    using string = typename types::string;

    explicit document(const Alloc& a) : alloc_(a) {}
    ~document() { clear(); }
    document(const document&) = delete;
    document& operator=(const document&) = delete;

    const node* root() const noexcept { return root_; }

    /// Parse `xml` with Expat and build the DOM. On a parse error: false, the message
    /// in `*error`, and the document is empty.
    bool parse(scratch& s, std::string_view xml, std::string* error = nullptr) {
        clear();
        begin(s);
        XML_ParserReset(s.parser_, nullptr);
        XML_SetUserData(s.parser_, this);
        XML_SetElementHandler(s.parser_, &on_start, &on_end);
        XML_SetCharacterDataHandler(s.parser_, &on_text);
        scratch_ = &s;
        const auto status =
            XML_Parse(s.parser_, xml.data(), static_cast<int>(xml.size()), XML_TRUE);
        scratch_ = nullptr;
        if (status != XML_STATUS_OK) {
            if (error != nullptr)
                *error = std::string(XML_ErrorString(XML_GetErrorCode(s.parser_))) + " at line " +
                         std::to_string(XML_GetCurrentLineNumber(s.parser_));
            abandon(s);
            return false;
        }
        finish(s);
        return true;
    }

    /// Build the DOM from recorded events: the same builder, without Expat.
    void build(scratch& s, const event_log& log) {
        clear();
        begin(s);
        for (const event& e : log.events) {
            switch (e.kind) {
            case event::start_tag:
                start(s, e.text.data(), e.attributes.data());
                break;
            case event::end_tag:
                end(s);
                break;
            case event::characters:
                s.text_.append(e.text);
                break;
            }
        }
        finish(s);
    }

    void clear() noexcept {
        if constexpr (DestroyNodes) {
            if (root_ != nullptr)
                destroy(root_);
        }
        root_ = nullptr;
    }

  private:
    using node_alloc = typename types::template alloc_of<node>;
    using node_traits = std::allocator_traits<node_alloc>;
    using attribute = typename types::attribute;

    node* make(node_kind kind, std::string_view text) {
        node_alloc na(alloc_);
        node* n = node_traits::allocate(na, 1);
        node_traits::construct(na, n, kind, text, alloc_);
        return n;
    }

    void destroy(node* n) noexcept {
        for (node* child : n->children)
            destroy(child);
        node_alloc na(alloc_);
        node_traits::destroy(na, n);
        node_traits::deallocate(na, n, 1);
    }

    static void begin(scratch& s) {
        s.text_.clear();
        s.open_.clear();
        if (s.kids_.empty())
            s.kids_.emplace_back();
        s.kids_[0].clear();
    }
    void finish(scratch& s) {
        if (!s.kids_[0].empty())
            root_ = static_cast<node*>(s.kids_[0].front());
        s.kids_[0].clear();
    }
    /// After an error: free what was built so far (open elements have no children yet:
    /// they sit in the scratch lists).
    void abandon(scratch& s) {
        for (std::size_t depth = 0; depth <= s.open_.size() && depth < s.kids_.size(); ++depth) {
            for (void* n : s.kids_[depth])
                forget(static_cast<node*>(n));
            s.kids_[depth].clear();
        }
        s.open_.clear();
    }
    void forget(node* n) noexcept {
        if constexpr (DestroyNodes)
            destroy(n);
        else
            (void)n;
    }

    void flush_text(scratch& s) {
        if (s.text_.empty())
            return;
        s.kids_[s.open_.size()].push_back(make(node_kind::text, s.text_));
        s.text_.clear();
    }

    void start(scratch& s, const char* name, const char* const* atts) {
        flush_text(s);
        node* e = make(node_kind::element, name);
        std::size_t count = 0;
        while (atts[2 * count] != nullptr)
            ++count;
        if (count != 0) {
            e->attributes.reserve(count);
            for (std::size_t i = 0; i < count; ++i)
                e->attributes.push_back(
                    attribute{string(atts[2 * i], alloc_), string(atts[2 * i + 1], alloc_)});
        }
        s.kids_[s.open_.size()].push_back(e);
        s.open_.push_back(e);
        if (s.kids_.size() <= s.open_.size())
            s.kids_.emplace_back();
        s.kids_[s.open_.size()].clear();
    }

    void end(scratch& s) {
        flush_text(s);
        auto& kids = s.kids_[s.open_.size()];
        node* e = static_cast<node*>(s.open_.back());
        if (!kids.empty()) {
            e->children.reserve(kids.size());
            for (void* k : kids)
                e->children.push_back(static_cast<node*>(k));
            kids.clear();
        }
        s.open_.pop_back();
    }

    static void XMLCALL on_start(void* self, const XML_Char* name, const XML_Char** atts) {
        auto* d = static_cast<document*>(self);
        d->start(*d->scratch_, name, atts);
    }
    static void XMLCALL on_end(void* self, const XML_Char*) {
        auto* d = static_cast<document*>(self);
        d->end(*d->scratch_);
    }
    static void XMLCALL on_text(void* self, const XML_Char* text, int length) {
        auto* d = static_cast<document*>(self);
        d->scratch_->text_.append(text, static_cast<std::size_t>(length));
    }

    Alloc alloc_;
    node* root_ = nullptr;
    scratch* scratch_ = nullptr;
};

/// Parse `xml` once and keep its events, for document::build.
inline bool record(scratch& s, std::string_view xml, event_log& log, std::string* error) {
    struct recorder {
        static void XMLCALL start(void* self, const XML_Char* name, const XML_Char** atts) {
            auto* log = static_cast<event_log*>(self);
            event e{event::start_tag, log->strings.emplace_back(name)};
            for (const XML_Char** a = atts; *a != nullptr; ++a)
                e.attributes.push_back(log->strings.emplace_back(*a).c_str());
            e.attributes.push_back(nullptr);
            log->events.push_back(std::move(e));
        }
        static void XMLCALL end(void* self, const XML_Char*) {
            static_cast<event_log*>(self)->events.push_back({event::end_tag, {}});
        }
        static void XMLCALL text(void* self, const XML_Char* t, int length) {
            auto* log = static_cast<event_log*>(self);
            log->events.push_back({event::characters,
                                   log->strings.emplace_back(t, static_cast<std::size_t>(length))});
        }
    };
    log = {};
    XML_ParserReset(s.parser_, nullptr);
    XML_SetUserData(s.parser_, &log);
    XML_SetElementHandler(s.parser_, &recorder::start, &recorder::end);
    XML_SetCharacterDataHandler(s.parser_, &recorder::text);
    if (XML_Parse(s.parser_, xml.data(), static_cast<int>(xml.size()), XML_TRUE) != XML_STATUS_OK) {
        if (error != nullptr)
            *error = XML_ErrorString(XML_GetErrorCode(s.parser_));
        return false;
    }
    return true;
}

// ---------------------------------------------------------------------------------
// Queries and serialisation: templates over the node type, so every allocator's DOM
// answers through the same code.
// ---------------------------------------------------------------------------------

struct shape {
    std::size_t elements = 0, attributes = 0, text_nodes = 0, text_bytes = 0, max_depth = 0;
    friend bool operator==(const shape&, const shape&) = default;
};

template <class Node>
void measure(const Node* n, std::size_t depth, shape& out) {
    if (n->kind == node_kind::text) {
        ++out.text_nodes;
        out.text_bytes += n->name.size();
        return;
    }
    ++out.elements;
    out.attributes += n->attributes.size();
    if (depth > out.max_depth)
        out.max_depth = depth;
    for (const Node* c : n->children)
        measure(c, depth + 1, out);
}

template <class Node>
shape measure(const Node* root) {
    shape out;
    if (root != nullptr)
        measure(root, 1, out);
    return out;
}

template <class Node>
std::string_view attribute_of(const Node* n, std::string_view name) {
    for (const auto& a : n->attributes)
        if (std::string_view(a.name) == name)
            return a.value;
    return {};
}

template <class Node>
bool has_attribute(const Node* n, std::string_view name) {
    for (const auto& a : n->attributes)
        if (std::string_view(a.name) == name)
            return true;
    return false;
}

/// The number of elements named `name` in the tree.
template <class Node>
std::size_t count_elements(const Node* n, std::string_view name) {
    if (n == nullptr || n->kind != node_kind::element)
        return 0;
    std::size_t count = std::string_view(n->name) == name;
    for (const Node* c : n->children)
        count += count_elements(c, name);
    return count;
}

/// The first element (document order) named `name` whose attribute `key` is `value`.
template <class Node>
const Node* find_element(const Node* n, std::string_view name, std::string_view key,
                         std::string_view value) {
    if (n == nullptr || n->kind != node_kind::element)
        return nullptr;
    if (std::string_view(n->name) == name && has_attribute(n, key) && attribute_of(n, key) == value)
        return n;
    for (const Node* c : n->children)
        if (const Node* found = find_element(c, name, key, value))
            return found;
    return nullptr;
}

/// The text directly inside an element (its text children, concatenated).
template <class Node>
std::string text_of(const Node* n) {
    std::string out;
    if (n != nullptr)
        for (const Node* c : n->children)
            if (c->kind == node_kind::text)
                out += c->name;
    return out;
}

/// The first child element named `name` that has no attribute `without`.
template <class Node>
const Node* child_without(const Node* n, std::string_view name, std::string_view without) {
    if (n != nullptr)
        for (const Node* c : n->children)
            if (c->kind == node_kind::element && std::string_view(c->name) == name &&
                !has_attribute(c, without))
                return c;
    return nullptr;
}

/// A lookup: find element `element` with `key`=`value`, answer its attribute `answer`
/// or, when `answer` starts with '<', the text of its first such child element that has
/// no xml:lang attribute ("<comment" = the untranslated comment).
struct lookup {
    std::string_view element, key, value, answer;
};

/// Everything the queries say about a document, as one line a test can compare.
template <class Node>
std::string run_queries(const Node* root, const std::vector<lookup>& lookups) {
    const shape s = measure(root);
    std::string out =
        "elements=" + std::to_string(s.elements) + " attributes=" + std::to_string(s.attributes) +
        " text_nodes=" + std::to_string(s.text_nodes) +
        " text_bytes=" + std::to_string(s.text_bytes) + " depth=" + std::to_string(s.max_depth);
    for (const lookup& q : lookups) {
        out += " | " + std::string(q.element) + "[" + std::string(q.key) + "=" +
               std::string(q.value) + "]";
        out += " count=" + std::to_string(count_elements(root, q.element)) + " -> ";
        const Node* e = find_element(root, q.element, q.key, q.value);
        if (e == nullptr)
            out += "(none)";
        else if (!q.answer.empty() && q.answer.front() == '<')
            out += text_of(child_without(e, q.answer.substr(1), "xml:lang"));
        else
            out += attribute_of(e, q.answer);
    }
    return out;
}

inline void escape(std::string& out, std::string_view text, bool in_attribute) {
    for (char c : text) {
        switch (c) {
        case '&':
            out += "&amp;";
            break;
        case '<':
            out += "&lt;";
            break;
        case '>':
            out += "&gt;";
            break;
        case '"':
            out += in_attribute ? "&quot;" : "\"";
            break;
        case '\n':
            out += in_attribute ? "&#10;" : "\n";
            break;
        case '\t':
            out += in_attribute ? "&#9;" : "\t";
            break;
        case '\r':
            out += "&#13;";
            break;
        default:
            out += c;
        }
    }
}

/// Canonical XML for the tree: attributes in document order, double quotes, empty
/// elements as <a/>; re-parsing it gives the same DOM.
template <class Node>
void serialize(const Node* n, std::string& out) {
    if (n->kind == node_kind::text) {
        escape(out, n->name, false);
        return;
    }
    out += '<';
    out += n->name;
    for (const auto& a : n->attributes) {
        out += ' ';
        out += a.name;
        out += "=\"";
        escape(out, a.value, true);
        out += '"';
    }
    if (n->children.empty()) {
        out += "/>";
        return;
    }
    out += '>';
    for (const Node* c : n->children)
        serialize(c, out);
    out += "</";
    out += n->name;
    out += '>';
}

template <class Node>
std::string serialize(const Node* root) {
    std::string out;
    if (root != nullptr)
        serialize(root, out);
    return out;
}

} // namespace xml_dom
