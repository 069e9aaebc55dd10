// sta-pool clients: an SQL mix on SQLite, on the pool (SQLITE_CONFIG_MALLOC over
// the C API) or on SQLite's default allocator (malloc).
//
//   sqlite_client --alloc=pool|malloc iso_639-3.json people
//
// The mix, on an in-memory database: json_each ingestion of the iso-codes language
// list (and re-ingestion into a log table, people / 2000 times), `people` inserted
// rows with three indexes and three visits each, then ORDER BY, joins, LIKE,
// GROUP BY, json_group_array, an UPDATE that grows rows and a DELETE, a large sort,
// and PRAGMA integrity_check. Every query's rows are hashed; stdout gets one line
// per query (rows, hash) and the integrity check's answer: the oracle the malloc run
// must match byte for byte. The whole mix (open to close) is timed.
#define STA_POOL_C_IMPLEMENTATION
#include "sta/pool.h"

#include "client_common.hpp"
#include "sqlite_host.hpp"

#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace {

using sta_clients::fnv1a;

struct workload_error {
    std::string what;
};

/// Deterministic pseudo-random numbers (a 64-bit LCG): the same rows every run.
class lcg {
  public:
    std::uint32_t next() {
        state_ = state_ * 6364136223846793005u + 1442695040888963407u;
        return static_cast<std::uint32_t>(state_ >> 33);
    }
    std::uint32_t below(std::uint32_t n) { return next() % n; }

  private:
    std::uint64_t state_ = 0x5eed;
};

class database {
  public:
    database() {
        if (sqlite3_open(":memory:", &db_) != SQLITE_OK)
            throw workload_error{"sqlite3_open failed"};
    }
    ~database() { sqlite3_close(db_); }
    database(const database&) = delete;
    database& operator=(const database&) = delete;

    void exec(const char* sql) {
        char* message = nullptr;
        if (sqlite3_exec(db_, sql, nullptr, nullptr, &message) != SQLITE_OK) {
            std::string what = message ? message : "?";
            sqlite3_free(message);
            throw workload_error{what + " in: " + sql};
        }
    }

    sqlite3_stmt* prepare(const char* sql) {
        sqlite3_stmt* statement = nullptr;
        if (sqlite3_prepare_v2(db_, sql, -1, &statement, nullptr) != SQLITE_OK)
            throw workload_error{std::string(sqlite3_errmsg(db_)) + " in: " + sql};
        return statement;
    }

    void step_done(sqlite3_stmt* statement) {
        if (sqlite3_step(statement) != SQLITE_DONE)
            throw workload_error{sqlite3_errmsg(db_)};
        sqlite3_reset(statement);
    }

    /// Run a query (with `json` bound to ?1 when given) and print its rows' hash.
    void query(const char* label, const char* sql, const std::string* json = nullptr) {
        sqlite3_stmt* statement = prepare(sql);
        if (json != nullptr)
            sqlite3_bind_text(statement, 1, json->data(), static_cast<int>(json->size()),
                              SQLITE_STATIC);
        fnv1a hash;
        std::uint64_t rows = 0;
        int rc;
        while ((rc = sqlite3_step(statement)) == SQLITE_ROW) {
            ++rows;
            for (int c = 0; c < sqlite3_column_count(statement); ++c) {
                const unsigned char* text = sqlite3_column_text(statement, c);
                hash.add(text ? reinterpret_cast<const char*>(text) : "<null>");
                hash.add("|");
            }
            hash.add("\n");
        }
        sqlite3_finalize(statement);
        if (rc != SQLITE_DONE)
            throw workload_error{std::string(sqlite3_errmsg(db_)) + " in: " + sql};
        std::printf("%-22s rows %8" PRIu64 "  hash %016" PRIx64 "\n", label, rows, hash.value());
    }

    std::string single_text(const char* sql) {
        sqlite3_stmt* statement = prepare(sql);
        std::string out;
        while (sqlite3_step(statement) == SQLITE_ROW) {
            const unsigned char* text = sqlite3_column_text(statement, 0);
            out += text ? reinterpret_cast<const char*>(text) : "<null>";
            out += '\n';
        }
        sqlite3_finalize(statement);
        return out;
    }

    std::vector<std::string> column(const char* sql) {
        sqlite3_stmt* statement = prepare(sql);
        std::vector<std::string> out;
        while (sqlite3_step(statement) == SQLITE_ROW)
            out.emplace_back(reinterpret_cast<const char*>(sqlite3_column_text(statement, 0)));
        sqlite3_finalize(statement);
        return out;
    }

  private:
    sqlite3* db_ = nullptr;
};

const char* const schema = R"sql(
CREATE TABLE lang(code TEXT PRIMARY KEY, alpha2 TEXT, name TEXT NOT NULL, scope TEXT,
                  type TEXT, inverted TEXT);
CREATE TABLE lang_log(round INTEGER, code TEXT, name TEXT);
CREATE INDEX lang_log_name ON lang_log(name);
CREATE TABLE person(id INTEGER PRIMARY KEY, first TEXT, last TEXT, lang TEXT, city TEXT,
                    age INTEGER, score REAL, note TEXT);
CREATE INDEX person_lang ON person(lang);
CREATE INDEX person_last_first ON person(last, first);
CREATE INDEX person_city_age ON person(city, age);
CREATE TABLE visit(person INTEGER, day INTEGER, amount INTEGER);
CREATE INDEX visit_person_day ON visit(person, day);
)sql";

const char* const ingest = R"sql(
INSERT INTO lang SELECT json_extract(value, '$.alpha_3'), json_extract(value, '$.alpha_2'),
       json_extract(value, '$.name'), json_extract(value, '$.scope'),
       json_extract(value, '$.type'), json_extract(value, '$.inverted_name')
FROM json_each(?1, '$."639-3"')
)sql";

const char* const ingest_log = R"sql(
INSERT INTO lang_log SELECT ?2, json_extract(value, '$.alpha_3'), json_extract(value, '$.name')
FROM json_each(?1, '$."639-3"') WHERE json_extract(value, '$.scope') = 'I'
)sql";

std::string word(lcg& random, int syllables) {
    static const char* const parts[] = {"ka", "ri", "mo",  "an",  "te", "su", "lo", "vi",
                                        "ne", "da", "por", "shi", "gu", "el", "ba", "tor"};
    std::string out;
    for (int i = 0; i < syllables; ++i)
        out += parts[random.below(16)];
    return out;
}

void run(const std::string& json, int people) {
    database db;
    db.exec(schema);
    db.exec("BEGIN");
    {
        sqlite3_stmt* statement = db.prepare(ingest);
        sqlite3_bind_text(statement, 1, json.data(), static_cast<int>(json.size()), SQLITE_STATIC);
        db.step_done(statement);
        sqlite3_finalize(statement);
        statement = db.prepare(ingest_log);
        sqlite3_bind_text(statement, 1, json.data(), static_cast<int>(json.size()), SQLITE_STATIC);
        for (int round = 0; round < 1 + people / 2000; ++round) {
            sqlite3_bind_int(statement, 2, round);
            db.step_done(statement);
        }
        sqlite3_finalize(statement);
    }
    const std::vector<std::string> codes = db.column("SELECT code FROM lang ORDER BY code");
    lcg random;
    {
        sqlite3_stmt* person = db.prepare("INSERT INTO person VALUES(?,?,?,?,?,?,?,?)");
        sqlite3_stmt* visit = db.prepare("INSERT INTO visit VALUES(?,?,?)");
        for (int id = 1; id <= people; ++id) {
            const std::string first = word(random, 2);
            const std::string last = word(random, 3);
            const std::string city = "city" + std::to_string(random.below(40));
            std::string note;
            for (int w = 0, n = 3 + static_cast<int>(random.below(30)); w < n; ++w)
                note += word(random, 1 + static_cast<int>(random.below(3))) + ' ';
            sqlite3_bind_int(person, 1, id);
            sqlite3_bind_text(person, 2, first.c_str(), -1, SQLITE_TRANSIENT);
            sqlite3_bind_text(person, 3, last.c_str(), -1, SQLITE_TRANSIENT);
            sqlite3_bind_text(person, 4,
                              codes[random.below(static_cast<std::uint32_t>(codes.size()))].c_str(),
                              -1, SQLITE_TRANSIENT);
            sqlite3_bind_text(person, 5, city.c_str(), -1, SQLITE_TRANSIENT);
            sqlite3_bind_int(person, 6, 18 + static_cast<int>(random.below(70)));
            sqlite3_bind_double(person, 7, random.below(100000) / 100.0);
            sqlite3_bind_text(person, 8, note.c_str(), -1, SQLITE_TRANSIENT);
            db.step_done(person);
            for (int v = 0; v < 3; ++v) {
                sqlite3_bind_int(visit, 1, id);
                sqlite3_bind_int(visit, 2, static_cast<int>(random.below(365)));
                sqlite3_bind_int(visit, 3, static_cast<int>(random.below(1000)));
                db.step_done(visit);
            }
        }
        sqlite3_finalize(person);
        sqlite3_finalize(visit);
    }
    db.exec("COMMIT");

    db.query("json count", "SELECT count(*), sum(length(value)) FROM json_each(?1, '$.\"639-3\"')",
             &json);
    db.query("lang by scope/type",
             "SELECT scope, type, count(*) FROM lang GROUP BY scope, type ORDER BY 1, 2");
    db.query("lang LIKE", "SELECT code, name FROM lang WHERE name LIKE 'A%an%' ORDER BY name");
    db.query("lang_log GROUP BY", "SELECT round, count(*), max(name) FROM lang_log GROUP BY "
                                  "round ORDER BY round");
    db.query("person ORDER BY", "SELECT id, last, first FROM person ORDER BY last, first, id "
                                "LIMIT 200 OFFSET 50");
    db.query("join GROUP BY", "SELECT l.name, count(*), avg(p.age) FROM person p JOIN lang l "
                              "ON l.code = p.lang GROUP BY l.name ORDER BY count(*) DESC, "
                              "l.name LIMIT 100");
    db.query("note LIKE", "SELECT count(*) FROM person WHERE note LIKE '%ka%ri%'");
    db.query("visits by city", "SELECT p.city, count(*), sum(v.amount) FROM person p JOIN "
                               "visit v ON v.person = p.id GROUP BY p.city ORDER BY p.city");
    db.query("city7 top scores", "SELECT p.id, l.name, p.score FROM person p JOIN lang l ON "
                                 "l.code = p.lang WHERE p.city = 'city7' ORDER BY p.score DESC, "
                                 "p.id LIMIT 50");
    db.exec("UPDATE person SET note = note || ' updated ' || first WHERE age % 7 = 0;"
            "DELETE FROM visit WHERE amount % 5 = 0;");
    db.query("json_group_array",
             "SELECT json_group_array(json_object('code', code, 'name', name)) FROM "
             "(SELECT code, name FROM lang WHERE alpha2 IS NOT NULL ORDER BY code)");
    db.query("big sort", "SELECT note, id FROM person ORDER BY substr(note, 3), id");
    db.query("visits after delete",
             "SELECT person, count(*), sum(amount) FROM visit GROUP BY person "
             "HAVING count(*) > 1 ORDER BY sum(amount) DESC, person LIMIT 100");
    std::printf("integrity_check: %s", db.single_text("PRAGMA integrity_check").c_str());
}

} // namespace

int main(int argc, char** argv) {
    const auto choice = sta_clients::parse_allocator(argc, argv);
    if (choice == sta_clients::allocator_choice::invalid || argc != 4) {
        std::fprintf(stderr, "usage: sqlite_client --alloc=pool|malloc file.json people\n");
        return 2;
    }
    std::ifstream in(argv[2], std::ios::binary);
    std::stringstream text;
    text << in.rdbuf();
    const std::string json = text.str();
    if (!in || json.empty()) {
        std::fprintf(stderr, "sqlite_client: cannot read %s\n", argv[2]);
        return 1;
    }
    const int people = std::stoi(argv[3]);
    if (sta_clients::configure_sqlite(choice == sta_clients::allocator_choice::pool) != SQLITE_OK) {
        std::fprintf(stderr, "sqlite_client: sqlite3_config failed\n");
        return 1;
    }
    const sta_clients::stopwatch watch;
    try {
        run(json, people);
    } catch (const workload_error& e) {
        std::fprintf(stderr, "sqlite_client: %s\n", e.what.c_str());
        return 1;
    }
    const double seconds = watch.seconds();
    // Where the memory goes: SQLite's own count of the bytes it asked for at most (xSize
    // is the requested size) beside the pool's bytes taken from pages (class sizes).
    const long long requested_kib = sqlite3_memory_highwater(0) / 1024;
    sqlite3_shutdown();
    std::fprintf(stderr,
                 "sta-client-note sqlite_requested_high_water_kib=%lld "
                 "pool_bytes_taken_kib=%zu\n",
                 requested_kib, sta::memory_pool::stats().bytes_in_use_high_water / 1024);
    std::fflush(stdout);
    sta_clients::report_result(choice, seconds);
    return 0;
}
