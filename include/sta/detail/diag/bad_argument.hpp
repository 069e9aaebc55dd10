// sta-pool: arguments the public API refuses with an exception (a setter or constructor
// called once, off every fast path): one message shape for every such check.
//
// The message reads "<subject><function>(<argument>): <what> ...", e.g.
// "sta::arena(12288): the block size not a power of two". The throwing bodies build it
// with std::string: they live in the compiled part when there is one (STA_POOL_COMPILED,
// src/pool/bad_argument.cpp), so a unit that only checks parses no <string>.
#pragma once

#include "sta/detail/config.hpp"

#include <bit>
#include <cstddef>

namespace sta::detail {

/// Throws std::invalid_argument, "... <what> below the minimum of <min_bytes>", "...
/// above the maximum of ..." or "... not a power of two", for `bytes` outside
/// [min_bytes, max_bytes] or not a power of two.
[[noreturn]] STA_POOL_OUT_OF_LINE void
throw_not_power_of_two_within(const char* subject, const char* function, std::size_t bytes,
                              const char* what, std::size_t min_bytes, std::size_t max_bytes);

/// Throws std::logic_error "<subject><function>(<argument>): <what>".
[[noreturn]] STA_POOL_OUT_OF_LINE void throw_too_late(const char* subject, const char* function,
                                                      std::size_t argument, const char* what);

/// Throws (throw_not_power_of_two_within) unless `bytes` is a power of two in
/// [min_bytes, max_bytes]. `subject` and `function` name the call ("sta::arena", "").
inline void require_power_of_two_within(const char* subject, const char* function,
                                        std::size_t bytes, const char* what, std::size_t min_bytes,
                                        std::size_t max_bytes) {
    if (bytes < min_bytes || bytes > max_bytes || !std::has_single_bit(bytes))
        throw_not_power_of_two_within(subject, function, bytes, what, min_bytes, max_bytes);
}

} // namespace sta::detail

#if STA_POOL_BODIES

#include <stdexcept>
#include <string>

namespace sta::detail {

/// "1 GiB", "256 KiB", "4096 bytes": a size as a reader of the message wants it.
STA_POOL_OUT_OF_LINE std::string bytes_text(std::size_t bytes) {
    const std::string exact = std::to_string(bytes) + " bytes";
    if (bytes >= (std::size_t{1} << 30) && bytes % (std::size_t{1} << 30) == 0)
        return exact + " (" + std::to_string(bytes >> 30) + " GiB)";
    if (bytes >= (std::size_t{1} << 20) && bytes % (std::size_t{1} << 20) == 0)
        return exact + " (" + std::to_string(bytes >> 20) + " MiB)";
    if (bytes >= (std::size_t{1} << 10) && bytes % (std::size_t{1} << 10) == 0)
        return exact + " (" + std::to_string(bytes >> 10) + " KiB)";
    return exact;
}

/// "<subject><function>(<argument>): ", the start of every message.
STA_POOL_OUT_OF_LINE std::string call_text(const char* subject, const char* function,
                                           std::size_t argument) {
    return std::string(subject) + function + "(" + std::to_string(argument) + "): ";
}

[[noreturn]] STA_POOL_OUT_OF_LINE void
throw_not_power_of_two_within(const char* subject, const char* function, std::size_t bytes,
                              const char* what, std::size_t min_bytes, std::size_t max_bytes) {
    const std::string where = call_text(subject, function, bytes) + what;
    if (bytes < min_bytes)
        throw std::invalid_argument(where + " below the minimum of " + bytes_text(min_bytes));
    if (bytes > max_bytes)
        throw std::invalid_argument(where + " above the maximum of " + bytes_text(max_bytes));
    throw std::invalid_argument(where + " not a power of two");
}

[[noreturn]] STA_POOL_OUT_OF_LINE void throw_too_late(const char* subject, const char* function,
                                                      std::size_t argument, const char* what) {
    throw std::logic_error(call_text(subject, function, argument) + what);
}

} // namespace sta::detail

#endif // STA_POOL_BODIES
