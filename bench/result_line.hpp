// sta-pool benchmarks: the JSON result line (part of bench/harness.hpp). Every result
// line a benchmark program prints starts with "kind" (what was measured; scripts/report.sh
// gathers the lines of one kind in <kind>.jsonl) and "allocator" (the row's name, as the
// program took it), then the program's own fields in the order given:
//
//   bench::print_result("threads", "sta-spans",
//                       {{"workload", "churn32"}, {"threads", 2},
//                        {"ns_per_op", bench::decimal{12.3456, 3}}});
// prints
//   {"kind": "threads", "allocator": "sta-spans", "workload": "churn32", "threads": 2,
//   "ns_per_op": 12.346}
//
// One line on stdout, flushed at once (a process may end with _Exit after it). The line
// is formatted in a buffer on the stack: printing it allocates nothing, so a program
// that prints between rounds on a heap that lives on (the waves) leaves that heap alone.
#pragma once

#include <concepts>
#include <cstdio>
#include <cstdlib>
#include <initializer_list>
#include <string>
#include <string_view>
#include <type_traits>

namespace bench {

/// A number printed with a fixed number of decimal places ("%.*f").
struct decimal {
    double value;
    int places;
};

/// One "key": value pair of a result line: a string, an integer or a decimal.
class field {
  public:
    field(const char* key, std::string_view text) noexcept
        : key_(key), type_(type::text), text_(text) {}
    field(const char* key, const char* text) noexcept : field(key, std::string_view(text)) {}
    field(const char* key, const std::string& text) noexcept : field(key, std::string_view(text)) {}
    template <std::integral T>
    requires(!std::is_same_v<T, bool>) field(const char* key, T number)
    noexcept : key_(key) {
        if constexpr (std::is_signed_v<T>) {
            type_ = type::integer;
            integer_ = number;
        } else {
            type_ = type::unsigned_integer;
            unsigned_ = number;
        }
    }
    field(const char* key, decimal number) noexcept
        : key_(key), type_(type::decimal), decimal_(number) {}

  private:
    friend class result_writer;
    enum class type { text, integer, unsigned_integer, decimal };
    const char* key_;
    type type_ = type::text;
    std::string_view text_;
    long long integer_ = 0;
    unsigned long long unsigned_ = 0;
    decimal decimal_{0, 0};
};

/// Formats one line into a buffer of its own; a line that does not fit ends the program
/// (a cut line would be read as a malformed result).
class result_writer {
  public:
    result_writer(std::string_view kind, std::string_view allocator) noexcept {
        put('{');
        key("kind");
        text(kind);
        key("allocator");
        text(allocator);
    }
    void add(const field& f) noexcept {
        key(f.key_);
        switch (f.type_) {
        case field::type::text:
            text(f.text_);
            break;
        case field::type::integer:
            format("%lld", f.integer_);
            break;
        case field::type::unsigned_integer:
            format("%llu", f.unsigned_);
            break;
        case field::type::decimal:
            format("%.*f", f.decimal_.places, f.decimal_.value);
            break;
        }
    }
    /// Ends the line and writes it to stdout.
    void print() noexcept {
        put('}');
        put('\n');
        std::fwrite(buffer_, 1, used_, stdout);
        std::fflush(stdout);
    }

  private:
    void key(std::string_view k) noexcept {
        if (buffer_[used_ - 1] != '{') {
            put(',');
            put(' ');
        }
        text(k);
        put(':');
        put(' ');
    }
    void text(std::string_view s) noexcept {
        put('"');
        for (const char c : s) {
            if (c == '"' || c == '\\') {
                put('\\');
                put(c);
            } else if (static_cast<unsigned char>(c) < 0x20) {
                format("\\u%04x", static_cast<unsigned>(c));
            } else {
                put(c);
            }
        }
        put('"');
    }
    void put(char c) noexcept {
        if (used_ + 1 >= sizeof buffer_)
            overflow();
        buffer_[used_++] = c;
    }
    template <class... Args>
    void format(const char* spec, Args... args) noexcept {
        const int n = std::snprintf(buffer_ + used_, sizeof buffer_ - used_, spec, args...);
        if (n < 0 || used_ + static_cast<std::size_t>(n) + 1 >= sizeof buffer_)
            overflow();
        used_ += static_cast<std::size_t>(n);
    }
    [[noreturn]] static void overflow() noexcept {
        std::fputs("bench::print_result: a result line longer than its buffer\n", stderr);
        std::abort();
    }
    char buffer_[2048];
    std::size_t used_ = 0;
};

/// Prints {"kind": kind, "allocator": allocator, <fields>...} and a newline on stdout.
inline void print_result(std::string_view kind, std::string_view allocator,
                         std::initializer_list<field> fields) noexcept {
    result_writer line(kind, allocator);
    for (const field& f : fields)
        line.add(f);
    line.print();
}

} // namespace bench
