// sta-pool benchmark: an XML DOM (bench/xml_dom.hpp) over four allocators, on real
// files that ship with Debian. Two measurements per (document, allocator):
//
//   full/<doc>/<alloc>           Expat parse + DOM build + queries + release
//   build_release/<doc>/<alloc>  DOM build from recorded parser events + release: the
//                                allocator's share without Expat's (identical) cost
//
// Release means what each allocator's user would do: std::allocator and
// sta::memory_pool destroy the tree node by node; pmr's monotonic_buffer_resource and
// sta::arena drop it at once (no destructors) and give their blocks back. A fresh
// resource per document. sta_arena uses the default block source (this thread's block
// cache); sta_arena_os_blocks maps and unmaps every block, to show what that costs. Compare the
// medians of repetitions, as ratios within one run:
//   xml_dom_benchmark --benchmark_repetitions=15 --benchmark_enable_random_interleaving
#include "xml_dom.hpp"

#include "sta/allocator.hpp"
#include "sta/arena.hpp"

#include <benchmark/benchmark.h>

#include <fstream>
#include <memory_resource>
#include <sstream>
#include <string>
#include <vector>

namespace {

using xml_dom::document;

struct test_document {
    const char* name;
    const char* path;
    std::vector<xml_dom::lookup> lookups;
    std::string xml;
    xml_dom::event_log log;
};

std::vector<test_document>& documents() {
    static std::vector<test_document> docs = [] {
        std::vector<test_document> d;
        d.push_back({"mime",
                     "/usr/share/mime/packages/freedesktop.org.xml",
                     {{"mime-type", "type", "application/pdf", "<comment"},
                      {"glob", "pattern", "*.xml", "pattern"}},
                     {},
                     {}});
        d.push_back({"iso639",
                     "/usr/share/xml/iso-codes/iso_639-3.xml",
                     {{"iso_639_3_entry", "id", "deu", "name"},
                      {"iso_639_3_entry", "name", "Esperanto", "id"}},
                     {},
                     {}});
        xml_dom::scratch s;
        for (test_document& doc : d) {
            std::ifstream in(doc.path, std::ios::binary);
            std::ostringstream text;
            text << in.rdbuf();
            doc.xml = text.str();
            xml_dom::record(s, doc.xml, doc.log, nullptr);
        }
        return d;
    }();
    return docs;
}

// One allocator each: construct the resource and a document over it, run the body,
// release. Everything here is inside the timed loop.
struct use_std {
    static constexpr const char* name = "std_allocator";
    template <class Body>
    static void once(Body&& body) {
        document<std::allocator<char>, true> doc{std::allocator<char>{}};
        body(doc);
    }
};
struct use_pool {
    static constexpr const char* name = "sta_memory_pool";
    template <class Body>
    static void once(Body&& body) {
        document<sta::allocator<char>, true> doc{sta::allocator<char>{}};
        body(doc);
    }
};
struct use_pmr {
    static constexpr const char* name = "pmr_monotonic";
    template <class Body>
    static void once(Body&& body) {
        std::pmr::monotonic_buffer_resource buffer;
        {
            document<std::pmr::polymorphic_allocator<char>, false> doc{
                std::pmr::polymorphic_allocator<char>(&buffer)};
            body(doc);
        }
        buffer.release();
    }
};
struct use_arena {
    static constexpr const char* name = "sta_arena";
    template <class Body>
    static void once(Body&& body) {
        sta::arena a;
        {
            document<sta::arena_allocator<char>, false> doc{sta::arena_allocator<char>(a)};
            body(doc);
        }
        a.release();
    }
};

struct use_arena_os {
    static constexpr const char* name = "sta_arena_os_blocks";
    template <class Body>
    static void once(Body&& body) {
        sta::arena a(sta::arena::default_block_bytes, sta::os_block_source());
        {
            document<sta::arena_allocator<char>, false> doc{sta::arena_allocator<char>(a)};
            body(doc);
        }
        a.release();
    }
};

template <class Use>
void full(benchmark::State& state, const test_document* doc) {
    xml_dom::scratch s;
    if (doc->xml.empty()) {
        state.SkipWithError("document missing: install shared-mime-info and iso-codes");
        return;
    }
    for (auto _ : state) {
        Use::once([&](auto& d) {
            if (!d.parse(s, doc->xml))
                state.SkipWithError("parse error");
            std::string answers = xml_dom::run_queries(d.root(), doc->lookups);
            benchmark::DoNotOptimize(answers.data());
        });
    }
    state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * doc->xml.size()));
}

template <class Use>
void build_release(benchmark::State& state, const test_document* doc) {
    xml_dom::scratch s;
    if (doc->log.events.empty()) {
        state.SkipWithError("document missing: install shared-mime-info and iso-codes");
        return;
    }
    for (auto _ : state) {
        Use::once([&](auto& d) {
            d.build(s, doc->log);
            benchmark::DoNotOptimize(d.root());
        });
    }
    state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * doc->xml.size()));
}

template <class Use>
void register_for(const test_document& doc) {
    const std::string tail = std::string("/") + doc.name + "/" + Use::name;
    benchmark::RegisterBenchmark(("full" + tail).c_str(), &full<Use>, &doc)
        ->Unit(benchmark::kMillisecond);
    benchmark::RegisterBenchmark(("build_release" + tail).c_str(), &build_release<Use>, &doc)
        ->Unit(benchmark::kMillisecond);
}

} // namespace

int main(int argc, char** argv) {
    for (const test_document& doc : documents()) {
        register_for<use_std>(doc);
        register_for<use_pool>(doc);
        register_for<use_pmr>(doc);
        register_for<use_arena>(doc);
        register_for<use_arena_os>(doc);
    }
    benchmark::Initialize(&argc, argv);
    if (benchmark::ReportUnrecognizedArguments(argc, argv))
        return 1;
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    return 0;
}
