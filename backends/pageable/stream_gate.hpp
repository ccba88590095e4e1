// SPDX-License-Identifier: Apache-2.0
// Holding a user's stream until host-side work is done, without a host thread per stream and
// without blocking the caller: a 32-bit flag in page-locked, mapped host memory per staged
// copy, and the CUDA stream memory operations cuStreamWaitValue32 (the stream waits until the
// flag reaches a value) and cuStreamWriteValue32 (a stream sets it after its earlier work).
// The runtime API has no such calls; their driver entry points are looked up through
// cudaGetDriverEntryPointByVersion, so nothing links libcuda directly.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <mutex>
#include <string>
#include <vector>

#include <cuda_runtime_api.h>

#include <xfer/xfer.h>

namespace xfer::cuda::pageable {

class StreamGate {
  public:
    // One flag word lent to one staged copy, and the value that opens it.
    struct Ticket {
        std::size_t index = 0;
        std::uint32_t target = 0;
    };

    StreamGate() = default;
    ~StreamGate();
    StreamGate(const StreamGate &) = delete;
    StreamGate &operator=(const StreamGate &) = delete;

    // Looks up the entry points and proves them on this device (a wait on a flag already set).
    // False with the reason in *why when stream memory operations cannot be used here: the
    // engine then stays off and copies go the direct way. The device must be current.
    bool start(std::string *why) noexcept;

    // A free flag word (recycled or new). Throws std::bad_alloc when no page-locked memory is left.
    Ticket acquire();
    // Gives back a word whose gate was never queued (the copy failed before).
    void give_back(const Ticket &t);

    // Queues on `stream` a wait until the ticket's flag is opened.
    xfer_status hold(cudaStream_t stream, const Ticket &t) noexcept;
    // Opens the flag from `stream` once its earlier work is done (cuStreamWriteValue32); the
    // word is recycled once that write has happened. Returns the CUresult (0 = success).
    int open_from_stream(cudaStream_t stream, const Ticket &t) noexcept;
    // Opens the flag now, from the host (the work it guards is done), and recycles the word.
    void open_from_host(const Ticket &t) noexcept;

    // The other way round: `stream` sets the flag when it reaches this point (a signal to the
    // host, which polls it with is_open, then recycles the word). Returns the CUresult.
    int signal_from_stream(cudaStream_t stream, const Ticket &t) noexcept;
    // Whether the flag has reached the ticket's value; a plain read of mapped memory.
    bool is_open(const Ticket &t) noexcept;
    // Gives back a word whose signal was seen (is_open returned true).
    void recycle(const Ticket &t) noexcept;

    // Frees the flag pages (after every gate was opened and its streams have passed it).
    void stop() noexcept;

  private:
    struct Word {
        std::uint32_t *host = nullptr;
        std::uint64_t device = 0;      // CUdeviceptr of the same word
        cudaEvent_t written = nullptr; // recorded after an open_from_stream write
        std::uint32_t value = 0;       // the last target handed out
    };
    bool grow() noexcept;                   // another page of words; mutex_ held
    void recycle_written_locked() noexcept; // words whose stream write has landed

    using WaitFn = int (*)(void *, std::uint64_t, std::uint32_t, unsigned);
    WaitFn wait_ = nullptr;
    WaitFn write_ = nullptr;

    std::mutex mutex_;
    std::vector<void *> pages_;
    std::vector<Word> words_;
    std::vector<std::size_t> free_;
    std::deque<std::size_t> written_; // opened from a stream, write maybe not landed yet
};

} // namespace xfer::cuda::pageable
