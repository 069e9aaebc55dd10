// Real programs on the pool: each client program (bench/clients) runs a small input
// twice, on the pool and on the library's default allocator, in fresh processes. The
// oracle: both runs succeed and print the same bytes (Lua's output; SQLite's query
// hashes and integrity check; libxml2's walk counts and xmlDocDumpMemory hash).
#include <gtest/gtest.h>

#include <sys/wait.h>

#include <cstdio>
#include <fstream>
#include <string>

namespace {

struct run_result {
    int exit_code = -1;
    std::string out;
};

/// Run a command; stdout is captured, stderr goes to the test's log.
run_result run(const std::string& command) {
    run_result r;
    FILE* pipe = popen(command.c_str(), "r");
    if (pipe == nullptr)
        return r;
    char buffer[4096];
    std::size_t n;
    while ((n = std::fread(buffer, 1, sizeof buffer, pipe)) > 0)
        r.out.append(buffer, n);
    const int status = pclose(pipe);
    r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    return r;
}

bool exists(const std::string& path) {
    return std::ifstream(path).good();
}

/// `text` without the lines that start with `prefix`.
std::string without_lines(const std::string& text, const std::string& prefix) {
    std::string out;
    std::size_t begin = 0;
    while (begin < text.size()) {
        std::size_t end = text.find('\n', begin);
        end = end == std::string::npos ? text.size() : end + 1;
        if (prefix.empty() || text.compare(begin, prefix.size(), prefix) != 0)
            out.append(text, begin, end - begin);
        begin = end;
    }
    return out;
}

/// Both allocators: exit code 0 and byte-identical stdout (less the lines starting
/// with `ignored`, when given). Returns the pool's output.
std::string expect_same_output(const std::string& program, const std::string& args,
                               const std::string& ignored = "") {
    run_result pool = run(program + " --alloc=pool " + args);
    run_result malloc = run(program + " --alloc=malloc " + args);
    pool.out = without_lines(pool.out, ignored);
    malloc.out = without_lines(malloc.out, ignored);
    EXPECT_EQ(pool.exit_code, 0) << program << " --alloc=pool " << args;
    EXPECT_EQ(malloc.exit_code, 0) << program << " --alloc=malloc " << args;
    EXPECT_FALSE(pool.out.empty());
    EXPECT_EQ(pool.out, malloc.out) << "the pool run printed something else";
    return pool.out;
}

const std::string lua = STA_LUA_CLIENT;
const std::string sqlite = STA_SQLITE_CLIENT;
const std::string libxml2 = STA_LIBXML2_CLIENT;
const std::string scripts = STA_LUA_SCRIPTS;
const std::string iso_json = "/usr/share/iso-codes/json/iso_639-3.json";
const std::string iso_xml = "/usr/share/xml/iso-codes/iso_639-3.xml";
const std::string mime_xml = "/usr/share/mime/packages/freedesktop.org.xml";
const std::string dkjson_examples = "/usr/share/doc/lua-dkjson/examples/";

// Guards the GC's frees of many small tables: a wrong osize would corrupt the trees.
TEST(LuaClient, BinaryTreesPrintTheSameAsTheDefaultAllocator) {
    const std::string out = expect_same_output(lua, scripts + "/binary_trees.lua 8");
    EXPECT_NE(out.find("long lived tree of depth 8\t nodes: 511"), std::string::npos) << out;
}

// Guards string growth and shrink (realloc of Lua buffers) against wrong contents.
TEST(LuaClient, StringBuildingPrintsTheSameAsTheDefaultAllocator) {
    expect_same_output(lua, scripts + "/string_building.lua 100");
}

// Guards table rehash (array and hash parts resized) against lost or stale entries.
TEST(LuaClient, TableChurnPrintsTheSameAsTheDefaultAllocator) {
    expect_same_output(lua, scripts + "/table_churn.lua 10");
}

// Guards a real library (dkjson) decoding real data on the pool.
TEST(LuaClient, IsoCodesJsonDecodesTheSameAsTheDefaultAllocator) {
    if (!exists(iso_json))
        GTEST_SKIP() << iso_json << " is missing (package iso-codes)";
    const std::string out =
        expect_same_output(lua, scripts + "/iso_json.lua " + iso_json + " 1 500");
    EXPECT_NE(out.find("languages\t500"), std::string::npos) << out;
}

// Guards dkjson's own test suite on the pool: same findings as with the default
// allocator. One line prints a table in pairs() order, which follows Lua's hash seed
// (time and addresses) and changes between runs with any allocator: it is left out.
TEST(LuaClient, DkjsonTestSuitePrintsTheSameAsTheDefaultAllocator) {
    if (!exists(dkjson_examples + "jsontest.lua"))
        GTEST_SKIP() << "dkjson's examples are missing (package lua-dkjson)";
    const std::string out =
        expect_same_output(lua, dkjson_examples + "jsontest.lua", "mixed table encoded as:");
    EXPECT_NE(out.find("sparse array (#=1) encoded as:"), std::string::npos) << out;
}

// Guards SQLite on the C API (xSize, xRoundup, sizeless xFree): same query results and
// an intact database.
TEST(SqliteClient, SqlMixMatchesMallocAndPassesIntegrityCheck) {
    if (!exists(iso_json))
        GTEST_SKIP() << iso_json << " is missing (package iso-codes)";
    const std::string out = expect_same_output(sqlite, iso_json + " 300");
    EXPECT_NE(out.find("integrity_check: ok\n"), std::string::npos) << out;
    EXPECT_NE(out.find("big sort               rows      300"), std::string::npos) << out;
}

// Guards libxml2 on the C API (xmlMemSetup's sizeless free): the same document
// comes back out of xmlDocDumpMemory.
TEST(Libxml2Client, DocumentsDumpTheSameAsWithMalloc) {
    if (!exists(iso_xml) || !exists(mime_xml))
        GTEST_SKIP() << "the iso-codes or shared-mime-info XML files are missing";
    const std::string out = expect_same_output(libxml2, "1 " + iso_xml + " " + mime_xml);
    EXPECT_NE(out.find("iso_639-3.xml: elements"), std::string::npos) << out;
    EXPECT_NE(out.find("freedesktop.org.xml: elements"), std::string::npos) << out;
}

} // namespace
