// SPDX-License-Identifier: Apache-2.0
#include "bench/bench_env.hpp"

#include <cstdlib>
#include <cstring>

#include "random_data.hpp"

namespace xfer::tool {

BenchEnv::BenchEnv(const BenchOptions &options, Progress &progress) : options_(options), progress_(progress) {}

BenchEnv::~BenchEnv() {
    // Buffers before the contexts they belong to; user memory (a member declared earlier)
    // after both.
    buffers_.clear();
    backends_.clear();
}

void BenchEnv::FreeDeleter::operator()(unsigned char *p) const { std::free(p); }

BenchEnv::Backend &BenchEnv::backend(const std::string &name) {
    auto it = backends_.find(name);
    if (it != backends_.end()) return it->second;
    // A backend that cannot be opened is tried once: every row about it reports the same reason.
    if (auto failed = open_failures_.find(name); failed != open_failures_.end())
        throw XferError(XFER_ERROR_BACKEND_UNAVAILABLE, failed->second);
    Backend b;
    try {
        b.testbed = std::make_unique<Testbed>(name, options_.device, nullptr);
    } catch (const std::exception &e) {
        open_failures_.emplace(name, e.what());
        throw;
    }
    b.stream = std::make_unique<Stream>(b.testbed->context());
    b.raw_stream = std::make_unique<Stream>(b.testbed->context());
    if (!device_) device_ = b.testbed->device();
    return backends_.emplace(name, std::move(b)).first->second;
}

const std::vector<unsigned char> &BenchEnv::data(std::uint64_t size) {
    auto it = data_.find(size);
    if (it != data_.end()) return it->second;
    std::vector<unsigned char> bytes(static_cast<std::size_t>(size));
    RandomData(derive_seed(options_.seed, size)).fill_bytes(bytes.data(), bytes.size());
    return data_.emplace(size, std::move(bytes)).first->second;
}

const Buffer &BenchEnv::buffer(const std::string &backend_name, std::uint64_t size, int slot) {
    const auto key = std::make_pair(backend_name, std::make_pair(size, slot));
    auto it = buffers_.find(key);
    if (it != buffers_.end()) return *it->second;
    Backend &b = backend(backend_name);
    const std::vector<unsigned char> &bytes = data(size);
    auto buf = std::make_unique<Buffer>(b.testbed->context(), bytes.size());
    // Both views written (and so touched) before any timing: no first-touch fault is timed.
    std::memcpy(buf->host(), bytes.data(), bytes.size());
    check(xfer_copy(buf->get(), XFER_TO_DEVICE, 0, bytes.size()), "xfer_copy(fill the device view)");
    return *buffers_.emplace(key, std::move(buf)).first->second;
}

unsigned char *BenchEnv::user_memory(std::uint64_t size) {
    auto it = user_memory_.find(size);
    if (it != user_memory_.end()) return it->second.get();
    const std::vector<unsigned char> &bytes = data(size);
    auto *p = static_cast<unsigned char *>(std::malloc(bytes.size()));
    if (!p) throw XferError(XFER_ERROR_OUT_OF_MEMORY, "std::malloc(" + std::to_string(size) + " bytes) failed");
    std::memcpy(p, bytes.data(), bytes.size());
    return user_memory_.emplace(size, std::unique_ptr<unsigned char, FreeDeleter>(p)).first->second.get();
}

} // namespace xfer::tool
