// sta-pool: arguments the public API refuses with an exception (a setter or constructor
// called once, off every fast path): one message shape for every such check.
#pragma once

#include <bit>
#include <cstddef>
#include <stdexcept>
#include <string>

namespace sta::detail {

/// "1 GiB", "256 KiB", "4096 bytes": a size as a reader of the message wants it.
inline std::string bytes_text(std::size_t bytes) {
    const std::string exact = std::to_string(bytes) + " bytes";
    if (bytes >= (std::size_t{1} << 30) && bytes % (std::size_t{1} << 30) == 0)
        return exact + " (" + std::to_string(bytes >> 30) + " GiB)";
    if (bytes >= (std::size_t{1} << 20) && bytes % (std::size_t{1} << 20) == 0)
        return exact + " (" + std::to_string(bytes >> 20) + " MiB)";
    if (bytes >= (std::size_t{1} << 10) && bytes % (std::size_t{1} << 10) == 0)
        return exact + " (" + std::to_string(bytes >> 10) + " KiB)";
    return exact;
}

/// Throws std::invalid_argument, "<where><what> below the minimum of ...", "... above the
/// maximum of ..." or "... not a power of two", unless `bytes` is a power of two in
/// [min_bytes, max_bytes]. `where` names the call ("sta::arena(12288): ").
inline void require_power_of_two_within(const std::string& where, const char* what,
                                        std::size_t bytes, std::size_t min_bytes,
                                        std::size_t max_bytes) {
    if (bytes < min_bytes)
        throw std::invalid_argument(where + what + " below the minimum of " +
                                    bytes_text(min_bytes));
    if (bytes > max_bytes)
        throw std::invalid_argument(where + what + " above the maximum of " +
                                    bytes_text(max_bytes));
    if (!std::has_single_bit(bytes))
        throw std::invalid_argument(where + what + " not a power of two");
}

} // namespace sta::detail
