// sta-pool clients: libxml2 parsing real documents, on the pool (xmlMemSetup over
// the C API, before any other libxml2 call) or on libxml2's default (malloc).
//
//   libxml2_client --alloc=pool|malloc repeats file.xml...
//
// First, once per file (not timed): parse, walk, xmlDocDumpMemory, free; stdout gets
// the walk's counts and a hash of the dumped bytes — the oracle the malloc run must
// match. Then the benchmark (timed): `repeats` rounds of parse + walk + free of
// every file, from memory (the files are read once, before).
//
// xmlMemSetup's free has no size: that is what sta/pool.h is for.
#define STA_POOL_C_IMPLEMENTATION
#include "sta/pool.h"

#include "client_common.hpp"

#include <libxml/parser.h>
#include <libxml/tree.h>

#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace {

char* pool_strdup(const char* s) {
    const std::size_t bytes = std::strlen(s) + 1;
    auto* copy = static_cast<char*>(sta_malloc(bytes));
    if (copy != nullptr)
        std::memcpy(copy, s, bytes);
    return copy;
}

struct walk_counts {
    std::uint64_t elements = 0;
    std::uint64_t attributes = 0;
    std::uint64_t text_bytes = 0;
    std::uint64_t name_bytes = 0;
};

void walk(const xmlNode* node, walk_counts& counts) {
    for (; node != nullptr; node = node->next) {
        if (node->type == XML_ELEMENT_NODE) {
            ++counts.elements;
            counts.name_bytes += std::strlen(reinterpret_cast<const char*>(node->name));
            for (const xmlAttr* a = node->properties; a != nullptr; a = a->next) {
                ++counts.attributes;
                if (a->children != nullptr && a->children->content != nullptr)
                    counts.text_bytes +=
                        std::strlen(reinterpret_cast<const char*>(a->children->content));
            }
        } else if (node->content != nullptr) {
            counts.text_bytes += std::strlen(reinterpret_cast<const char*>(node->content));
        }
        walk(node->children, counts);
    }
}

struct document {
    std::string path;
    std::string text;
};

xmlDoc* parse(const document& d) {
    return xmlReadMemory(d.text.data(), static_cast<int>(d.text.size()), d.path.c_str(), nullptr,
                         XML_PARSE_NONET);
}

} // namespace

int main(int argc, char** argv) {
    const auto choice = sta_clients::parse_allocator(argc, argv);
    if (choice == sta_clients::allocator_choice::invalid || argc < 4) {
        std::fprintf(stderr, "usage: libxml2_client --alloc=pool|malloc repeats file.xml...\n");
        return 2;
    }
    // Before any other libxml2 call: every allocation libxml2 makes is the pool's.
    if (choice == sta_clients::allocator_choice::pool &&
        xmlMemSetup(sta_free, sta_malloc, sta_realloc, pool_strdup) != 0) {
        std::fprintf(stderr, "libxml2_client: xmlMemSetup failed\n");
        return 1;
    }
    xmlInitParser();
    const int repeats = std::stoi(argv[2]);
    std::vector<document> documents;
    for (int i = 3; i < argc; ++i) {
        std::ifstream in(argv[i], std::ios::binary);
        std::stringstream text;
        text << in.rdbuf();
        if (!in) {
            std::fprintf(stderr, "libxml2_client: cannot read %s\n", argv[i]);
            return 1;
        }
        documents.push_back({argv[i], text.str()});
    }

    for (const document& d : documents) {
        xmlDoc* doc = parse(d);
        if (doc == nullptr) {
            std::fprintf(stderr, "libxml2_client: cannot parse %s\n", d.path.c_str());
            return 1;
        }
        walk_counts counts;
        walk(xmlDocGetRootElement(doc), counts);
        xmlChar* dump = nullptr;
        int dump_bytes = 0;
        xmlDocDumpMemory(doc, &dump, &dump_bytes);
        sta_clients::fnv1a hash;
        hash.add(dump, static_cast<std::size_t>(dump_bytes));
        xmlFree(dump);
        xmlFreeDoc(doc);
        const auto slash = d.path.find_last_of('/');
        std::printf("%s: elements %" PRIu64 " attributes %" PRIu64 " text %" PRIu64
                    " names %" PRIu64 " dump %d bytes hash %016" PRIx64 "\n",
                    d.path.substr(slash == std::string::npos ? 0 : slash + 1).c_str(),
                    counts.elements, counts.attributes, counts.text_bytes, counts.name_bytes,
                    dump_bytes, hash.value());
    }

    const sta_clients::stopwatch watch;
    std::uint64_t elements = 0;
    for (int r = 0; r < repeats; ++r) {
        for (const document& d : documents) {
            xmlDoc* doc = parse(d);
            if (doc == nullptr)
                return 1;
            walk_counts counts;
            walk(xmlDocGetRootElement(doc), counts);
            elements += counts.elements;
            xmlFreeDoc(doc);
        }
    }
    const double seconds = watch.seconds();
    xmlCleanupParser();
    std::printf("benchmark rounds %d elements %" PRIu64 "\n", repeats, elements);
    std::fflush(stdout);
    sta_clients::report_result(choice, seconds);
    return 0;
}
