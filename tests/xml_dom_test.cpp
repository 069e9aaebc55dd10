// The XML DOM of bench/xml_dom.hpp over four allocators — sta::arena, sta::memory_pool
// (sta::allocator), std::allocator and std::pmr::monotonic_buffer_resource — must give
// identical query answers and identical serialisations, on a small document of our own
// and on real files that ship with Debian (shared-mime-info, iso-codes).
#include "xml_dom.hpp"

#include "sta/allocator.hpp"
#include "sta/arena.hpp"
#include "support/arena_checker.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <memory_resource>
#include <sstream>
#include <string>
#include <vector>

namespace {

using xml_dom::document;

constexpr const char* mime_file = "/usr/share/mime/packages/freedesktop.org.xml";
constexpr const char* iso_file = "/usr/share/xml/iso-codes/iso_639-3.xml";

const std::vector<xml_dom::lookup> mime_lookups = {
    {"mime-type", "type", "application/pdf", "<comment"},
    {"mime-type", "type", "text/x-c++src", "<comment"},
    {"glob", "pattern", "*.xml", "pattern"},
};
const std::vector<xml_dom::lookup> iso_lookups = {
    {"iso_639_3_entry", "id", "deu", "name"},
    {"iso_639_3_entry", "name", "Esperanto", "id"},
    {"iso_639_3_entry", "id", "zzz-not-a-code", "name"},
};

// Our own document: nesting, attributes with entities and quotes, text with entities,
// CDATA, a comment and a processing instruction (both dropped), mixed content.
constexpr const char* small_xml = R"(<?xml version="1.0" encoding="UTF-8"?>
<!-- a library of two books -->
<library name="Home &amp; Garden" note='say "hi"'>
  <book id="b1" lang="en"><title>Fish &lt;&amp;&gt; Chips</title><pages>120</pages></book>
  <book id="b2"><title xml:lang="de">Brot</title><title>Bread</title><empty/>
    <?pi ignored?><![CDATA[raw <text> & more]]> tail</book>
</library>
)";
const std::vector<xml_dom::lookup> small_lookups = {
    {"book", "id", "b1", "lang"},
    {"book", "id", "b2", "<title"},
    {"library", "name", "Home & Garden", "note"},
    {"book", "id", "b3", "lang"},
};

std::string read_file(const char* path) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
}

/// What one allocator's DOM says about a document.
struct answer {
    std::string queries;
    std::string xml;
};

template <class Doc, class Alloc>
answer parse_and_ask(const Alloc& alloc, std::string_view xml,
                     const std::vector<xml_dom::lookup>& lookups) {
    xml_dom::scratch s;
    Doc doc(alloc);
    std::string error;
    EXPECT_TRUE(doc.parse(s, xml, &error)) << error;
    return {xml_dom::run_queries(doc.root(), lookups), xml_dom::serialize(doc.root())};
}

answer with_std(std::string_view xml, const std::vector<xml_dom::lookup>& q) {
    return parse_and_ask<document<std::allocator<char>, true>>(std::allocator<char>{}, xml, q);
}
answer with_pool(std::string_view xml, const std::vector<xml_dom::lookup>& q) {
    return parse_and_ask<document<sta::allocator<char>, true>>(sta::allocator<char>{}, xml, q);
}
answer with_pmr(std::string_view xml, const std::vector<xml_dom::lookup>& q) {
    std::pmr::monotonic_buffer_resource buffer;
    return parse_and_ask<document<std::pmr::polymorphic_allocator<char>, false>>(
        std::pmr::polymorphic_allocator<char>(&buffer), xml, q);
}
answer with_arena(std::string_view xml, const std::vector<xml_dom::lookup>& q) {
    sta::arena a;
    answer out = parse_and_ask<document<sta::arena_allocator<char>, false>>(
        sta::arena_allocator<char>(a), xml, q);
    EXPECT_GT(a.stats().bytes_used, 0u);
    EXPECT_EQ(sta::detail::check_arena(a), "");
    return out;
}

void expect_all_four_agree(std::string_view xml, const std::vector<xml_dom::lookup>& q) {
    const answer reference = with_std(xml, q);
    ASSERT_FALSE(reference.xml.empty());
    const answer pool = with_pool(xml, q);
    const answer pmr = with_pmr(xml, q);
    const answer arena = with_arena(xml, q);
    EXPECT_EQ(pool.queries, reference.queries) << "sta::memory_pool";
    EXPECT_EQ(pmr.queries, reference.queries) << "pmr monotonic_buffer_resource";
    EXPECT_EQ(arena.queries, reference.queries) << "sta::arena";
    // EXPECT_TRUE, not EXPECT_EQ: a 2 MB diff in the log helps nobody.
    EXPECT_TRUE(pool.xml == reference.xml) << "sta::memory_pool serialises differently";
    EXPECT_TRUE(pmr.xml == reference.xml) << "pmr serialises differently";
    EXPECT_TRUE(arena.xml == reference.xml) << "sta::arena serialises differently";
}

// Guards the DOM itself: the builder keeps elements, attributes (decoded), merged text,
// CDATA and whitespace, drops comments and PIs, and the serialiser escapes them back.
TEST(XmlDom, SmallDocumentBuildsTheExpectedTree) {
    const answer a = with_std(small_xml, small_lookups);
    EXPECT_EQ(a.xml,
              "<library name=\"Home &amp; Garden\" note=\"say &quot;hi&quot;\">\n  "
              "<book id=\"b1\" lang=\"en\"><title>Fish &lt;&amp;&gt; Chips</title>"
              "<pages>120</pages></book>\n  <book id=\"b2\"><title xml:lang=\"de\">Brot</title>"
              "<title>Bread</title><empty/>\n    raw &lt;text&gt; &amp; more tail</book>\n"
              "</library>");
    EXPECT_EQ(a.queries, "elements=8 attributes=6 text_nodes=8 text_bytes=60 depth=3"
                         " | book[id=b1] count=2 -> en"
                         " | book[id=b2] count=2 -> Bread"
                         " | library[name=Home & Garden] count=1 -> say \"hi\""
                         " | book[id=b3] count=2 -> (none)");
}

// Guards allocator independence on our own document: all four DOMs are the same.
TEST(XmlDom, AllFourAllocatorsAgreeOnASmallDocument) {
    expect_all_four_agree(small_xml, small_lookups);
}

// Guards allocator independence on a real 2.4 MB file nobody here wrote.
TEST(XmlDom, AllFourAllocatorsAgreeOnFreedesktopMimeTypes) {
    const std::string xml = read_file(mime_file);
    ASSERT_GT(xml.size(), 100000u) << mime_file << " missing: install shared-mime-info";
    expect_all_four_agree(xml, mime_lookups);
    const answer a = with_arena(xml, mime_lookups);
    EXPECT_NE(a.queries.find("mime-type[type=application/pdf] count="), std::string::npos);
    EXPECT_NE(a.queries.find("-> PDF document |"), std::string::npos) << a.queries;
}

// Guards allocator independence on a real 1 MB file with ~8000 attribute-heavy entries.
TEST(XmlDom, AllFourAllocatorsAgreeOnIso639Languages) {
    const std::string xml = read_file(iso_file);
    ASSERT_GT(xml.size(), 100000u) << iso_file << " missing: install iso-codes";
    expect_all_four_agree(xml, iso_lookups);
    const answer a = with_arena(xml, iso_lookups);
    EXPECT_NE(a.queries.find("iso_639_3_entry[id=deu] count="), std::string::npos);
    EXPECT_NE(a.queries.find("-> German |"), std::string::npos) << a.queries;
    EXPECT_NE(a.queries.find("[name=Esperanto] count="), std::string::npos);
    EXPECT_NE(a.queries.find("-> epo |"), std::string::npos) << a.queries;
}

// Guards the serialiser: parsing its output gives the same serialisation again.
TEST(XmlDom, SerialisationRoundTrips) {
    for (const std::string& xml : {std::string(small_xml), read_file(iso_file)}) {
        const answer once = with_arena(xml, {});
        const answer twice = with_arena(once.xml, {});
        EXPECT_TRUE(once.xml == twice.xml);
        EXPECT_EQ(once.queries, twice.queries);
    }
}

// Guards the benchmark's build-only path: replaying recorded events builds the very
// DOM that parsing builds, so "build + release" times the same work.
TEST(XmlDom, ReplayOfRecordedEventsBuildsTheSameDom) {
    const std::string xml = read_file(mime_file);
    xml_dom::scratch s;
    xml_dom::event_log log;
    std::string error;
    ASSERT_TRUE(xml_dom::record(s, xml, log, &error)) << error;
    sta::arena a;
    document<sta::arena_allocator<char>, false> doc(a);
    doc.build(s, log);
    EXPECT_TRUE(xml_dom::serialize(doc.root()) == with_std(xml, {}).xml);
}

// Guards the error path: a malformed document is reported, and what was built before
// the error is freed (LeakSanitizer and the pool's accounting would catch a leak).
TEST(XmlDom, ParseErrorIsReportedAndFreesThePartialTree) {
    const auto before = sta::memory_pool::stats().bytes_in_use;
    {
        xml_dom::scratch s;
        document<sta::allocator<char>, true> doc{sta::allocator<char>{}};
        std::string error;
        EXPECT_FALSE(doc.parse(s, "<a x='1'><b>a text long enough to allocate</b><c></a>", &error));
        EXPECT_NE(error.find("mismatched tag"), std::string::npos) << error;
        EXPECT_EQ(doc.root(), nullptr);
    }
    EXPECT_EQ(sta::memory_pool::stats().bytes_in_use, before);
}

// Guards the destroying release: a pool-backed DOM gives back every block it took.
TEST(XmlDom, PoolDomGivesEveryBlockBack) {
    const std::string xml = read_file(iso_file);
    const auto before = sta::memory_pool::stats().bytes_in_use;
    {
        xml_dom::scratch s;
        document<sta::allocator<char>, true> doc{sta::allocator<char>{}};
        ASSERT_TRUE(doc.parse(s, xml));
        EXPECT_GT(sta::memory_pool::stats().bytes_in_use, before + 500000);
    }
    EXPECT_EQ(sta::memory_pool::stats().bytes_in_use, before);
}

// Guards the arena DOM's lifetime: it lives in the arena, and release() gives it all
// back without a destructor.
TEST(XmlDom, ArenaDomIsReleasedAtOnce) {
    const std::string xml = read_file(iso_file);
    sta::arena a;
    xml_dom::scratch s;
    {
        document<sta::arena_allocator<char>, false> doc(a);
        ASSERT_TRUE(doc.parse(s, xml));
        EXPECT_GT(a.stats().bytes_used, 500000u);
        EXPECT_GT(a.stats().blocks, 8u);
    }
    a.release();
    EXPECT_EQ(a.stats().blocks, 0u);
    EXPECT_EQ(sta::detail::check_arena(a), "");
}

} // namespace
