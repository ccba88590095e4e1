// SPDX-License-Identifier: Apache-2.0
#include "calibration_measure.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <vector>

#include "page_frames.hpp"

namespace xfer::cuda::user_memory {
namespace {

constexpr std::size_t kKiB = 1024, kMiB = 1024 * kKiB;
// The sizes of the curves: from where a copy's cost is its latency to where it is its rate.
constexpr std::size_t kSizes[] = {64 * kKiB, 256 * kKiB, 1 * kMiB, 4 * kMiB, 16 * kMiB, 64 * kMiB, 256 * kMiB};
constexpr std::size_t kLargest = 256 * kMiB;
// Two sizes for the registration's fit (per call + per byte), and the fill's.
constexpr std::size_t kRegisterSmall = 1 * kMiB, kRegisterLarge = 256 * kMiB, kFillBytes = 64 * kMiB;

double now_seconds() {
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

int repeats_for(std::size_t bytes) { return bytes >= 64 * kMiB ? 3 : 5; }

// The measuring buffers and stream, released whatever happens.
struct Scratch {
    const Context &ctx;
    HostCopyHook *hook;
    unsigned char *host = nullptr;   // malloc'd (pageable), touched
    unsigned char *pinned = nullptr; // cudaHostAlloc
    void *device = nullptr;
    cudaStream_t stream = nullptr;

    ~Scratch() {
        if (stream != nullptr) {
            (void)cudaStreamSynchronize(stream);
            if (hook != nullptr) hook->stream_destroyed(stream);
            (void)cudaStreamDestroy(stream);
        }
        if (device != nullptr) (void)cudaFree(device);
        if (pinned != nullptr) (void)cudaFreeHost(pinned);
        std::free(host);
        (void)cudaGetLastError();
    }

    xfer_status make() {
        if (::posix_memalign(reinterpret_cast<void **>(&host), 4096, kLargest) != 0) {
            host = nullptr;
            return fail(XFER_ERROR_OUT_OF_MEMORY, "calibration: posix_memalign(%zu bytes) failed", kLargest);
        }
        // Random-looking bytes, every page touched: no first-touch fault is timed as a copy.
        for (std::size_t i = 0; i < kLargest; i += sizeof(std::uint64_t)) {
            const std::uint64_t v = (i * 0x9e3779b97f4a7c15ull) ^ (i >> 7);
            std::memcpy(host + i, &v, sizeof v);
        }
        if (auto st = check(cudaHostAlloc(reinterpret_cast<void **>(&pinned), kLargest, cudaHostAllocDefault),
                            "calibration: cudaHostAlloc(%zu bytes)", kLargest)) {
            pinned = nullptr;
            return st;
        }
        std::memset(pinned, 0x5a, kLargest);
        if (auto st = check(cudaMalloc(&device, kLargest), "calibration: cudaMalloc(%zu bytes)", kLargest)) {
            device = nullptr;
            return st;
        }
        return check(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking),
                     "calibration: cudaStreamCreateWithFlags");
    }

    // The median of `repeats` runs of `op` (after one untimed), each timed from the call to the
    // stream's completion; false when op or the stream failed (reported).
    template <class Op>
    xfer_status median(int repeats, Op op, double *out) {
        std::vector<double> t;
        for (int i = -1; i < repeats; ++i) {
            const double t0 = now_seconds();
            if (auto st = op()) return st;
            if (auto st = check(cudaStreamSynchronize(stream), "calibration: cudaStreamSynchronize")) return st;
            if (i >= 0) t.push_back(now_seconds() - t0);
        }
        std::nth_element(t.begin(), t.begin() + t.size() / 2, t.end());
        *out = t[t.size() / 2];
        return XFER_SUCCESS;
    }
};

std::string utc_now() {
    const std::time_t t = std::time(nullptr);
    std::tm tm{};
    gmtime_r(&t, &tm);
    char text[32];
    std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &tm);
    return text;
}

xfer_status measure_curves(Scratch &m, Calibration *out) {
    for (std::size_t bytes : kSizes) {
        const int r = repeats_for(bytes);
        for (xfer_direction d : {XFER_TO_DEVICE, XFER_TO_HOST}) {
            const bool to_device = d == XFER_TO_DEVICE;
            double seconds = 0;
            auto copy = [&](void *host) {
                return check(cudaMemcpyAsync(to_device ? m.device : host, to_device ? host : m.device, bytes,
                                             to_device ? cudaMemcpyHostToDevice : cudaMemcpyDeviceToHost, m.stream),
                             "calibration: cudaMemcpyAsync(%zu bytes)", bytes);
            };
            if (auto st = m.median(
                    r, [&] { return copy(m.pinned); }, &seconds))
                return st;
            out->model.curve(Way::dma, d).add(bytes, seconds);
            if (auto st = m.median(
                    r, [&] { return copy(m.host); }, &seconds))
                return st;
            out->model.curve(Way::driver, d).add(bytes, seconds);
            if (m.hook == nullptr) continue;
            bool taken = true;
            const xfer_status st = m.median(
                r,
                [&] {
                    bool took = false;
                    const xfer_status s =
                        m.hook->copy(m.device, m.host, bytes, d, m.stream, XFER_REASON_MEMORY, false, &took);
                    taken = taken && took;
                    return s;
                },
                &seconds);
            if (st != XFER_SUCCESS) return st;
            if (taken) out->model.curve(Way::staged, d).add(bytes, seconds);
        }
    }
    out->staged = !out->model.curve(Way::staged, XFER_TO_DEVICE).empty() &&
                  out->model.curve(Way::staged, XFER_TO_DEVICE).points().size() == std::size(kSizes) &&
                  out->model.curve(Way::staged, XFER_TO_HOST).points().size() == std::size(kSizes);
    if (!out->staged) {
        for (xfer_direction d : {XFER_TO_DEVICE, XFER_TO_HOST}) out->model.curve(Way::staged, d) = Curve{};
    }
    return XFER_SUCCESS;
}

xfer_status measure_registration(Scratch &m, Calibration *out) {
    double reg[2] = {0, 0}, unreg[2] = {0, 0};
    const std::size_t sizes[2] = {kRegisterSmall, kRegisterLarge};
    for (int i = 0; i < 2; ++i) {
        std::vector<double> r, u;
        for (int k = 0; k < 3; ++k) {
            const double t0 = now_seconds();
            if (auto st = check(cudaHostRegister(m.host, sizes[i], cudaHostRegisterPortable | cudaHostRegisterMapped),
                                "calibration: cudaHostRegister(%zu bytes)", sizes[i])) {
                return st;
            }
            const double t1 = now_seconds();
            if (auto st = check(cudaHostUnregister(m.host), "calibration: cudaHostUnregister(%zu bytes)", sizes[i])) {
                return st;
            }
            r.push_back(t1 - t0);
            u.push_back(now_seconds() - t1);
        }
        std::sort(r.begin(), r.end());
        std::sort(u.begin(), u.end());
        reg[i] = r[1];
        unreg[i] = u[1];
    }
    const double span = double(kRegisterLarge - kRegisterSmall);
    const auto fit = [&](const double(&t)[2]) {
        LinearCost c;
        c.byte_seconds = std::max(0.0, (t[1] - t[0]) / span);
        c.call_seconds = std::max(0.0, t[0] - c.byte_seconds * double(kRegisterSmall));
        return c;
    };
    out->model.register_cost = fit(reg);
    out->model.unregister_cost = fit(unreg);
    return XFER_SUCCESS;
}

void measure_fill(Scratch &m, Calibration *out) {
    std::vector<double> t;
    for (int k = 0; k < 4; ++k) {
        const double t0 = now_seconds();
        std::memcpy(m.pinned, m.host + (k % 2) * kFillBytes, kFillBytes);
        if (k > 0) t.push_back(now_seconds() - t0);
    }
    std::sort(t.begin(), t.end());
    out->model.fill_bytes_per_second = double(kFillBytes) / t[t.size() / 2];
}

// What tracking a copy for reuse costs: reading its first page's frame (reuse_tracker.hpp). Where
// pagemap cannot be read the tracker notes no frame, and the cost is the failed read's.
void measure_tracking(Scratch &m, Calibration *out) {
    std::vector<double> t;
    std::vector<std::uint64_t> frame;
    for (int k = 0; k < 33; ++k) {
        const auto page = reinterpret_cast<std::uintptr_t>(m.host) + std::size_t(k) * kPageBytes;
        const double t0 = now_seconds();
        (void)read_page_frames(page, 1, &frame);
        t.push_back(now_seconds() - t0);
    }
    std::sort(t.begin(), t.end());
    out->model.track_seconds = std::max(t[t.size() / 2], 1e-9);
}

} // namespace

xfer_status calibration_key(const Context &ctx, CalibrationKey *out) noexcept {
    try {
        cudaDeviceProp prop{};
        if (auto st = check(cudaGetDeviceProperties(&prop, ctx.device), "cudaGetDeviceProperties(%d)", ctx.device)) {
            return st;
        }
        int driver = 0, runtime = 0;
        if (auto st = check(cudaDriverGetVersion(&driver), "cudaDriverGetVersion")) return st;
        if (auto st = check(cudaRuntimeGetVersion(&runtime), "cudaRuntimeGetVersion")) return st;
        const auto *u = reinterpret_cast<const unsigned char *>(prop.uuid.bytes);
        char uuid[48];
        std::snprintf(uuid, sizeof uuid, "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
                      u[0], u[1], u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12], u[13], u[14],
                      u[15]);
        *out = host_key(uuid, driver, runtime);
        return XFER_SUCCESS;
    } catch (const std::bad_alloc &) {
        return fail(XFER_ERROR_OUT_OF_MEMORY, "calibration: out of host memory");
    }
}

xfer_status measure_calibration(const Context &ctx, HostCopyHook *hook, Calibration *out) noexcept {
    try {
        const double t0 = now_seconds();
        Scratch m{ctx, hook};
        if (auto st = m.make()) return st;
        if (auto st = measure_curves(m, out)) return st;
        if (auto st = measure_registration(m, out)) return st;
        measure_fill(m, out);
        measure_tracking(m, out);
        out->measured_at = utc_now();
        out->seconds = now_seconds() - t0;
        return XFER_SUCCESS;
    } catch (const std::bad_alloc &) {
        return fail(XFER_ERROR_OUT_OF_MEMORY, "calibration: out of host memory");
    }
}

} // namespace xfer::cuda::user_memory
