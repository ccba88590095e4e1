#include "xfer_cuda/chunk_plan.hpp"

#include <algorithm>

namespace xfer::cuda {
namespace {

std::size_t ceil_div(std::size_t a, std::size_t b) { return a / b + (a % b != 0 ? 1 : 0); }

std::size_t round_up(std::size_t value, std::size_t alignment) { return ceil_div(value, alignment) * alignment; }

}  // namespace

bool should_stage(std::size_t bytes, std::size_t threads) noexcept {
    return threads > 0 && bytes >= k_min_staged_bytes;
}

std::size_t plan_chunk_bytes(std::size_t bytes, std::size_t chunk_size) noexcept {
    if (chunk_size == 0) {
        return bytes;  // not a configuration the params allow; one chunk is the safe reading
    }
    if (bytes / 2 >= chunk_size) {
        return chunk_size;
    }
    const std::size_t half = round_up(ceil_div(bytes, 2), k_chunk_alignment);
    return std::max<std::size_t>(1, std::min(chunk_size, half));
}

std::size_t plan_piece_bytes(std::size_t bytes, std::size_t threads) noexcept {
    if (bytes == 0) {
        return 1;
    }
    // Rounded down: every piece is at least k_min_piece_bytes, or the chunk is one piece.
    const std::size_t most_pieces = std::max<std::size_t>(1, bytes / k_min_piece_bytes);
    const std::size_t pieces = std::clamp<std::size_t>(threads, 1, most_pieces);
    return round_up(ceil_div(bytes, pieces), k_piece_alignment);
}

std::size_t span_count(std::size_t bytes, std::size_t unit) noexcept {
    return unit == 0 ? 0 : ceil_div(bytes, unit);
}

Span nth_span(std::size_t bytes, std::size_t unit, std::size_t index) noexcept {
    Span s;
    s.offset = std::min(bytes, index * unit);
    s.bytes = std::min(unit, bytes - s.offset);
    return s;
}

}  // namespace xfer::cuda
