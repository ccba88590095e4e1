// SPDX-License-Identifier: Apache-2.0
#include "setup.hpp"

#include <sys/resource.h>

#include <algorithm>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>

#include "calibration_measure.hpp"
#include "registration_cache.hpp"
#include <xfer_plugin/params.hpp>

namespace xfer::cuda::user_memory {
namespace {

constexpr auto kBufferRegistrationMinHelp = plugin::join(
    "with a calibration, the host view of a buffer copied again with this many bytes or more is page-locked in the "
    "background from its second copy (the copies meanwhile staged or the driver's; released at xfer_free): where a "
    "registration pays back within ",
    plugin::decimal<CostModel::kPaybackCopies>().text,
    " copies, a buffer's view having no tracking to pay for (registration_min applies where it is smaller)");
constexpr auto kRegistrationMinHelp = plugin::join(
    "copies smaller than this never page-lock their range and are not tracked for reuse: the calibration puts it "
    "where a registration (cudaHostRegister and, later, cudaHostUnregister) stops paying back within ",
    plugin::decimal<CostModel::kPaybackCopies>().text,
    " copies against the best way without it; without a calibration the declared default, from which the pinned "
    "backend page-locks every range on first use");

} // namespace

constexpr xfer_backend_param kCommonParams[] = {
    {"path", "string", "auto",
     "path of copies between pageable (user) host memory and device memory: auto = the fastest for each copy by this "
     "machine's calibration (the driver's copy, the staging engine, or page-locking a range that is copied again; "
     "without a calibration, the declared defaults); driver = cudaMemcpyAsync; staged = the staging engine (pageable "
     "backend only); registered = page-lock every range (cudaHostRegister, within pin_limit) and copy it as DMA"},
    {"pin_limit", "size", "4294967296",
     "most bytes of user memory xfer page-locks on its own (cudaHostRegister of ranges its copies decided to "
     "register; RLIMIT_MEMLOCK lowers it where one is set); least recently used ranges are unregistered to stay "
     "under it; 0 = none (xfer_register still page-locks what the application asks for)"},
    {"host_threads", "int", "0",
     "most host threads xfer starts for copies (the staging engine's workers; the helpers of packed batches); 0 = one "
     "per hardware thread but one, left to the application"},
};
const std::size_t kCommonParamCount = sizeof kCommonParams / sizeof kCommonParams[0];
static_assert(plugin::declared_defaults_are_decimal(kCommonParams), "param_u64 parses declared defaults as decimals");

constexpr xfer_backend_param kCommonDerived[] = {
    {"registration_min", "size", "1048576", kRegistrationMinHelp.text},
};
const std::size_t kCommonDerivedCount = sizeof kCommonDerived / sizeof kCommonDerived[0];
static_assert(plugin::declared_defaults_are_decimal(kCommonDerived), "param_u64 parses declared defaults as decimals");

constexpr xfer_backend_param kStagedDerived[] = {
    {"staged_min_bytes", "size", "16777216",
     "copies to the device from this size up go through the staging engine, smaller ones to the driver: the crossover "
     "the calibration measured (its declared default: the crossover of an H200 at PCIe Gen5, docs/performance.md)"},
    {"staged_min_bytes_to_host", "size", "4194304",
     "the same to the host (the driver's pageable copy to the host is slower: the engine wins from smaller sizes)"},
    {"buffer_registration_min", "size", "1048576", kBufferRegistrationMinHelp.text},
};
const std::size_t kStagedDerivedCount = sizeof kStagedDerived / sizeof kStagedDerived[0];
static_assert(plugin::declared_defaults_are_decimal(kStagedDerived), "param_u64 parses declared defaults as decimals");

namespace {

constexpr const char *kPaths[] = {"auto", "driver", "staged", "registered"};
constexpr std::uint64_t kNever = ~std::uint64_t{0}; // a crossover that never comes

bool user_set(const xfer_backend_param_value *values, std::size_t count, const char *name) {
    for (std::size_t i = 0; i < count; ++i)
        if (values[i].name != nullptr && std::string(values[i].name) == name) return true;
    return false;
}

// A derived size the user set, checked now (nullopt when not set).
xfer_status user_size(const char *backend, const xfer_backend_param *decl, std::size_t decl_count,
                      const xfer_backend_param_value *values, std::size_t count, const char *name,
                      std::optional<std::uint64_t> *out) {
    if (!user_set(values, count, name)) return XFER_SUCCESS;
    std::uint64_t v = 0;
    if (auto st = plugin::param_u64(backend, decl, decl_count, values, count, name, 0, kNever, &v)) return st;
    *out = v;
    return XFER_SUCCESS;
}

// A derived size: the user's, else the calibration's, else the declared default; noted in ctx.
std::uint64_t derive_size(Context &ctx, const xfer_backend_param *decl, std::size_t decl_count, const char *name,
                          std::optional<std::uint64_t> user, std::optional<std::uint64_t> calibrated) {
    std::uint64_t v = 0;
    bool from_calibration = false;
    if (user) {
        v = *user;
    } else if (calibrated) {
        v = *calibrated;
        from_calibration = true;
    } else {
        for (std::size_t i = 0; i < decl_count; ++i)
            if (std::string(decl[i].name) == name) v = std::strtoull(decl[i].default_value, nullptr, 10);
    }
    ctx.derived_values[name] = DerivedValue{std::to_string(v), from_calibration};
    return v;
}

// pin_limit within RLIMIT_MEMLOCK where the process has one.
std::size_t pin_budget(std::uint64_t pin_limit) {
    rlimit limit{};
    std::uint64_t budget = pin_limit;
    if (::getrlimit(RLIMIT_MEMLOCK, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY) {
        budget = std::min<std::uint64_t>(budget, limit.rlim_cur);
    }
    return static_cast<std::size_t>(std::min<std::uint64_t>(budget, SIZE_MAX));
}

// The calibrations this process measured (GPU and time of measuring): xfer_calibrate reports a
// kept one among them as measured, not as one an earlier process left (the first open of a
// GPU measures, so a program's own xfer_calibrate after it would otherwise never say so).
class MeasuredHere {
  public:
    static void add(const Calibration &c) {
        std::lock_guard<std::mutex> lock(mutex());
        set().insert(id(c));
    }
    static bool contains(const Calibration &c) {
        std::lock_guard<std::mutex> lock(mutex());
        return set().count(id(c)) != 0;
    }

  private:
    static std::string id(const Calibration &c) { return c.key.gpu_uuid + " " + c.measured_at; }
    static std::mutex &mutex() {
        static std::mutex m;
        return m;
    }
    static std::set<std::string> &set() {
        static std::set<std::string> s;
        return s;
    }
};

// The calibration of ctx's GPU under `setting` into *out: the kept one when it holds (with the
// staging curves where `hook` stages) unless `force`, else measured now and kept. *out stays
// empty when the setting is off or the device's key cannot be read (*why says which); a failed
// measurement is returned, its message set. *path: the file ("" when none or not written).
xfer_status obtain(const Context &ctx, HostCopyHook *hook, const std::string &setting, bool force, bool *measured,
                   std::string *path, std::string *why, std::optional<Calibration> *out) {
    *measured = false;
    path->clear();
    out->reset();
    CalibrationKey key;
    if (auto st = calibration_key(ctx, &key)) return st;
    const std::optional<std::string> file = calibration_path(setting, key, why);
    std::optional<Calibration> kept;
    if (file) {
        *path = *file;
        std::string problem;
        kept = load_calibration(*file, key, &problem);
        if (kept && !force && (hook == nullptr || kept->staged)) {
            *out = std::move(kept);
            return XFER_SUCCESS;
        }
    }
    Calibration fresh;
    fresh.key = key;
    if (auto st = measure_calibration(ctx, hook, &fresh)) return st;
    if (!fresh.staged && kept && kept->staged) {
        // Measured by a backend without a staging engine: the kept staging curves (same key) stay.
        for (xfer_direction d : {XFER_TO_DEVICE, XFER_TO_HOST})
            fresh.model.curve(Way::staged, d) = kept->model.curve(Way::staged, d);
        fresh.staged = true;
    }
    *measured = true;
    MeasuredHere::add(fresh);
    if (file && !save_calibration(*file, fresh, why)) path->clear();
    *out = std::move(fresh);
    return XFER_SUCCESS;
}

} // namespace

xfer_status read_common_params(const char *backend, bool stages, const xfer_backend_param_value *values,
                               std::size_t count, CommonParams *out) noexcept {
    std::size_t path = 0;
    if (auto st =
            plugin::param_choice(backend, kCommonParams, kCommonParamCount, values, count, "path", kPaths, &path)) {
        return st;
    }
    if (PathOverride(path) == PathOverride::staged && !stages) {
        return fail(XFER_ERROR_CONFIG,
                    "%s: parameter path = 'staged': this backend has no staging engine (the pageable backend has); "
                    "one of auto, driver, registered",
                    backend);
    }
    std::uint64_t pin_limit = 0, threads = 0;
    if (auto st = plugin::param_u64(backend, kCommonParams, kCommonParamCount, values, count, "pin_limit", 0,
                                    std::uint64_t{1} << 50, &pin_limit)) {
        return st;
    }
    if (auto st = plugin::param_u64(backend, kCommonParams, kCommonParamCount, values, count, "host_threads", 0, 256,
                                    &threads)) {
        return st;
    }
    if (auto st = user_size(backend, kCommonDerived, kCommonDerivedCount, values, count, "registration_min",
                            &out->registration_min)) {
        return st;
    }
    if (stages) {
        if (auto st = user_size(backend, kStagedDerived, kStagedDerivedCount, values, count, "staged_min_bytes",
                                &out->staged_min[0])) {
            return st;
        }
        if (auto st = user_size(backend, kStagedDerived, kStagedDerivedCount, values, count, "staged_min_bytes_to_host",
                                &out->staged_min[1])) {
            return st;
        }
        if (auto st = user_size(backend, kStagedDerived, kStagedDerivedCount, values, count, "buffer_registration_min",
                                &out->buffer_registration_min)) {
            return st;
        }
    }
    out->path = PathOverride(path);
    out->pin_limit = pin_limit;
    const unsigned hardware = std::thread::hardware_concurrency();
    out->host_threads = threads != 0 ? threads : std::max(1u, hardware > 1 ? hardware - 1 : 1u);
    return XFER_SUCCESS;
}

xfer_status open_user_memory(Context &ctx, bool stages, UserMemoryRule rule, const CommonParams &params) noexcept {
    return plugin::guarded("context_create", [&]() -> xfer_status {
        HostCopyHook *hook = stages ? ctx.host_copy_hook() : nullptr;
        const std::string setting = plugin::calibration_setting();
        if (setting != "off") {
            // A calibration that cannot be had leaves the declared defaults deciding: opening
            // the context does not fail for it.
            bool measured = false;
            std::string path, why;
            std::optional<Calibration> c;
            if (obtain(ctx, hook, setting, false, &measured, &path, &why, &c) == XFER_SUCCESS && c) {
                ctx.calibration = std::make_shared<const Calibration>(std::move(*c));
            }
        }
        const Calibration *cal = ctx.calibration.get();
        PolicySettings policy;
        policy.model = cal != nullptr ? &cal->model : nullptr;
        policy.path = params.path;
        policy.can_stage = hook != nullptr;
        policy.register_first_use = rule == UserMemoryRule::register_on_first_use && cal == nullptr;
        const bool staged_measured = cal != nullptr && cal->staged && hook != nullptr;
        if (stages) {
            const auto crossover = [&](xfer_direction d) -> std::optional<std::uint64_t> {
                if (!staged_measured) return std::nullopt;
                return cal->model.staged_crossover(d).value_or(kNever);
            };
            const std::uint64_t to_device = derive_size(ctx, kStagedDerived, kStagedDerivedCount, "staged_min_bytes",
                                                        params.staged_min[0], crossover(XFER_TO_DEVICE));
            const std::uint64_t to_host =
                derive_size(ctx, kStagedDerived, kStagedDerivedCount, "staged_min_bytes_to_host", params.staged_min[1],
                            crossover(XFER_TO_HOST));
            policy.staged_min[0] = static_cast<std::size_t>(std::min<std::uint64_t>(to_device, SIZE_MAX));
            policy.staged_min[1] = static_cast<std::size_t>(std::min<std::uint64_t>(to_host, SIZE_MAX));
        }
        std::optional<std::uint64_t> calibrated_min;
        if (cal != nullptr) {
            const auto to_device = cal->model.registration_min(XFER_TO_DEVICE, staged_measured);
            const auto to_host = cal->model.registration_min(XFER_TO_HOST, staged_measured);
            calibrated_min = std::min(to_device.value_or(kNever), to_host.value_or(kNever));
        }
        const std::uint64_t registration_min = derive_size(ctx, kCommonDerived, kCommonDerivedCount, "registration_min",
                                                           params.registration_min, calibrated_min);
        policy.registration_min = static_cast<std::size_t>(std::min<std::uint64_t>(registration_min, SIZE_MAX));
        policy.buffer_registration_min = policy.registration_min; // no buffer has a pageable view
        if (stages) {
            std::optional<std::uint64_t> calibrated_buffer_min;
            if (cal != nullptr) {
                const auto to_device = cal->model.registration_min(XFER_TO_DEVICE, staged_measured, false);
                const auto to_host = cal->model.registration_min(XFER_TO_HOST, staged_measured, false);
                calibrated_buffer_min = std::min(to_device.value_or(kNever), to_host.value_or(kNever));
            }
            const std::uint64_t buffer_min =
                derive_size(ctx, kStagedDerived, kStagedDerivedCount, "buffer_registration_min",
                            params.buffer_registration_min, calibrated_buffer_min);
            policy.buffer_registration_min = static_cast<std::size_t>(std::min<std::uint64_t>(buffer_min, SIZE_MAX));
        }
        ctx.cache = std::make_unique<RegistrationCache>(ctx, pin_budget(params.pin_limit), policy);
        return XFER_SUCCESS;
    });
}

xfer_status calibrate(const Context &ctx, bool force, xfer_calibration_info *info) noexcept {
    thread_local std::string t_file, t_json;
    return plugin::guarded("context_calibrate", [&]() -> xfer_status {
        // With calibration = off the measurement is still made (and reported), only not kept.
        bool measured = false;
        std::string path, why;
        std::optional<Calibration> c;
        if (auto st =
                obtain(ctx, ctx.host_copy_hook(), plugin::calibration_setting(), force, &measured, &path, &why, &c)) {
            return st;
        }
        if (!c) return fail(XFER_ERROR_BACKEND, "xfer_calibrate: %s", why.c_str());
        t_file = path;
        t_json = to_json(*c);
        info->measured = measured || MeasuredHere::contains(*c) ? 1 : 0;
        info->seconds = c->seconds;
        info->file = t_file.c_str();
        info->json = t_json.c_str();
        return XFER_SUCCESS;
    });
}

} // namespace xfer::cuda::user_memory
