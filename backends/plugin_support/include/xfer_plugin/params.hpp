// SPDX-License-Identifier: Apache-2.0
// Reading a backend's effective parameters. The core has already validated each value against
// its declared type (ints and sizes arrive as decimal text) and hands over only declared names.
//
// A default is written once: as the declared text in the backend's xfer_backend_param table.
// param_u64 / param_text / param_choice read a parameter that was not set from that text,
// parsed like any value, so no code restates it (no macro, no member initialiser, no
// fallback). declared_defaults_are_decimal lets a backend check its table at compile time.
#pragma once

#include <cstddef>
#include <cstdint>

#include <xfer/xfer_backend.h>

namespace xfer::plugin {

// Finds `name` among the values and parses it as an unsigned decimal in [min, max].
// Missing -> `fallback`. XFER_ERROR_CONFIG with a message naming backend, parameter and value
// when it is not a number or out of range; *out is written only on success. The primitive
// under the declared form below (and for unit tests); backends use the declared form.
xfer_status param_u64(const char *backend, const xfer_backend_param_value *params, std::size_t count, const char *name,
                      std::uint64_t fallback, std::uint64_t min, std::uint64_t max, std::uint64_t *out) noexcept;

// The same with the declared default of `name` in `declared` (the backend's table) read when
// the value is missing. [min, max] applies to the effective value only (a bound may depend on
// another parameter). XFER_ERROR_INTERNAL when `name` is not declared there.
xfer_status param_u64(const char *backend, const xfer_backend_param *declared, std::size_t declared_count,
                      const xfer_backend_param_value *params, std::size_t count, const char *name, std::uint64_t min,
                      std::uint64_t max, std::uint64_t *out) noexcept;

// The value of the string parameter `name`, else its declared default in `declared` (nullptr
// when `name` is not declared there).
const char *param_text(const xfer_backend_param *declared, std::size_t declared_count,
                       const xfer_backend_param_value *params, std::size_t count, const char *name) noexcept;

// A string parameter that names one of `choices` (e.g. {"sync", "async"}): *index is
// the position of its effective value (declared default when not set). XFER_ERROR_CONFIG
// "<backend>: parameter <name> = '<value>' is not one of a, b, c" otherwise;
// XFER_ERROR_INTERNAL when `name` is not declared.
xfer_status param_choice(const char *backend, const xfer_backend_param *declared, std::size_t declared_count,
                         const xfer_backend_param_value *params, std::size_t count, const char *name,
                         const char *const *choices, std::size_t choice_count, std::size_t *index) noexcept;

// The effective `calibration` setting the core hands a plugin inside context_create and
// context_calibrate ("" = the user's cache folder, "off", or a folder); "" from an older core.
const char *calibration_setting() noexcept;

template <std::size_t N>
xfer_status param_choice(const char *backend, const xfer_backend_param *declared, std::size_t declared_count,
                         const xfer_backend_param_value *params, std::size_t count, const char *name,
                         const char *const (&choices)[N], std::size_t *index) noexcept {
    return param_choice(backend, declared, declared_count, params, count, name, choices, N, index);
}

namespace detail {
constexpr bool same_text(const char *a, const char *b) noexcept {
    while (*a != '\0' && *a == *b) {
        ++a;
        ++b;
    }
    return *a == *b;
}
constexpr bool plain_decimal(const char *text) noexcept {
    if (text == nullptr || *text == '\0') {
        return false;
    }
    for (; *text != '\0'; ++text) {
        if (*text < '0' || *text > '9') {
            return false;
        }
    }
    return true;
}
} // namespace detail

// The declared default text of `name` in the table, nullptr when it is not declared; for
// static_assert of what code assumes about a default (e.g. the capabilities it implies).
template <std::size_t N>
constexpr const char *declared_default(const xfer_backend_param (&declared)[N], const char *name) noexcept {
    for (const xfer_backend_param &p : declared) {
        if (detail::same_text(p.name, name)) {
            return p.default_value;
        }
    }
    return nullptr;
}

// True when `a` and `b` are the same text (both non-null); constexpr.
constexpr bool same_text(const char *a, const char *b) noexcept {
    return a != nullptr && b != nullptr && detail::same_text(a, b);
}

// True when every "int", "size" and "bool" parameter of the table declares its default as a
// plain decimal (what param_u64 parses: the core hands values over that way, but a declared
// default reaches the plugin as written). For static_assert next to a constexpr table.
template <std::size_t N>
constexpr bool declared_defaults_are_decimal(const xfer_backend_param (&declared)[N]) noexcept {
    for (const xfer_backend_param &p : declared) {
        const bool numeric =
            detail::same_text(p.type, "int") || detail::same_text(p.type, "size") || detail::same_text(p.type, "bool");
        if (numeric && !detail::plain_decimal(p.default_value)) {
            return false;
        }
    }
    return true;
}

// ------------------------------------------------------------------------ help texts
// A help text that names a constant of the code ("at most 16 workers", "each of the 2 slots")
// is built from that constant at compile time, so the text cannot drift from the code:
//   constexpr auto kHelp = plugin::join("at most ", plugin::decimal<kMaxThreads>().text, " workers");
//   ... {"threads", "int", "0", kHelp.text} ...

template <std::size_t N>
struct HelpText {
    char text[N]; // NUL-terminated
};

namespace detail {
constexpr std::size_t decimal_digits(std::uint64_t v) noexcept {
    std::size_t n = 1;
    for (; v >= 10; v /= 10) {
        ++n;
    }
    return n;
}
template <std::size_t M, std::size_t N>
constexpr void append(char (&out)[M], std::size_t &at, const char (&part)[N]) noexcept {
    for (std::size_t i = 0; i + 1 < N; ++i) { // the part's own NUL is left out
        out[at++] = part[i];
    }
}
} // namespace detail

// V in decimal, e.g. decimal<16>().text is "16".
template <std::uint64_t V>
constexpr HelpText<detail::decimal_digits(V) + 1> decimal() noexcept {
    HelpText<detail::decimal_digits(V) + 1> out{};
    std::uint64_t v = V;
    for (std::size_t i = detail::decimal_digits(V); i-- > 0; v /= 10) {
        out.text[i] = static_cast<char>('0' + v % 10);
    }
    return out;
}

// The parts (string literals, HelpText::text) one after the other.
template <std::size_t... N>
constexpr HelpText<(N + ...) - sizeof...(N) + 1> join(const char (&...parts)[N]) noexcept {
    HelpText<(N + ...) - sizeof...(N) + 1> out{};
    std::size_t at = 0;
    (detail::append(out.text, at, parts), ...);
    return out;
}

} // namespace xfer::plugin
