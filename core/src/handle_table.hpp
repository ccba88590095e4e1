// SPDX-License-Identifier: Apache-2.0
// A table of live objects of one kind, addressed by opaque 64-bit handles.
//
// Why not hand out raw pointers: a freed, never-created, foreign or wrong-kind handle must
// give XFER_ERROR_INVALID_HANDLE, never a crash. A handle value packs
//   [63..56] magic  [55..48] kind tag  [47..24] generation  [23..0] slot index
// so it is decoded without dereferencing anything. The magic sits in the top byte, which is
// zero in every user-space pointer on x86-64/AArch64, so a real pointer passed by mistake is
// never taken for a handle. The generation grows each time a slot is freed: a stale handle
// stays invalid after its slot is reused. Lookups hand out shared_ptr copies, so an object
// removed by one thread stays alive for another thread that already looked it up.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <new>
#include <shared_mutex>
#include <vector>

namespace xfer::core {

// A reader-writer lock that lets a waiting writer in before new readers (std::shared_mutex
// is glibc's reader-preferring rwlock: with 16 threads calling cheap getters, xfer_alloc and
// xfer_open would never get the table). Built from a mutex and condition
// variables rather than pthread_rwlock_t so that a child after fork() can be given a fresh,
// unlocked one (a glibc rwlock records its writer's thread id, which fork changes). Readers
// never nest here, which writer preference requires. Meets std::shared_lock's requirements.
class WriterPreferringMutex {
  public:
    void lock() {
        std::unique_lock<std::mutex> guard(state_);
        ++writers_waiting_;
        writer_turn_.wait(guard, [this] { return !writer_ && readers_ == 0; });
        --writers_waiting_;
        writer_ = true;
    }
    bool try_lock() {
        std::lock_guard<std::mutex> guard(state_);
        if (writer_ || readers_ != 0) return false;
        writer_ = true;
        return true;
    }
    void unlock() {
        {
            std::lock_guard<std::mutex> guard(state_);
            writer_ = false;
        }
        writer_turn_.notify_one();
        reader_turn_.notify_all();
    }
    void lock_shared() {
        std::unique_lock<std::mutex> guard(state_);
        reader_turn_.wait(guard, [this] { return !writer_ && writers_waiting_ == 0; });
        ++readers_;
    }
    bool try_lock_shared() {
        std::lock_guard<std::mutex> guard(state_);
        if (writer_ || writers_waiting_ != 0) return false;
        ++readers_;
        return true;
    }
    void unlock_shared() {
        bool last = false;
        {
            std::lock_guard<std::mutex> guard(state_);
            last = --readers_ == 0 && writers_waiting_ != 0;
        }
        if (last) writer_turn_.notify_one();
    }

    // In a child after fork(), while the forking thread held it (fork_support.cpp): the
    // threads that waited for it do not exist there, so it starts afresh, unlocked.
    void reset_after_fork() noexcept {
        new (&state_) std::mutex;
        new (&writer_turn_) std::condition_variable;
        new (&reader_turn_) std::condition_variable;
        readers_ = 0;
        writers_waiting_ = 0;
        writer_ = false;
    }

  private:
    std::mutex state_;
    std::condition_variable writer_turn_;
    std::condition_variable reader_turn_;
    unsigned readers_ = 0;
    unsigned writers_waiting_ = 0;
    bool writer_ = false;
};

enum class HandleKind : std::uint8_t { context = 1, buffer = 2, stream = 3, event = 4 };

inline const char *handle_kind_name(HandleKind kind) noexcept {
    switch (kind) {
    case HandleKind::context:
        return "context";
    case HandleKind::buffer:
        return "buffer";
    case HandleKind::stream:
        return "stream";
    case HandleKind::event:
        return "event";
    }
    return "unknown";
}

// What a raw handle value looks like before any table is consulted.
struct DecodedHandle {
    bool well_formed = false; // carries the magic and a known kind
    HandleKind kind{};
    std::uint32_t generation = 0;
    std::uint32_t index = 0;
};

namespace handle_bits {
constexpr std::uint64_t kMagic = 0x58; // 'X'
constexpr unsigned kMagicShift = 56;
constexpr unsigned kKindShift = 48;
constexpr unsigned kGenerationShift = 24;
constexpr std::uint32_t kGenerationMask = 0xffffff;
constexpr std::uint32_t kIndexMask = 0xffffff;
constexpr std::size_t kMaxSlots = std::size_t(kIndexMask) + 1;
} // namespace handle_bits

inline std::uint64_t encode_handle(HandleKind kind, std::uint32_t generation, std::uint32_t index) noexcept {
    using namespace handle_bits;
    return (kMagic << kMagicShift) | (std::uint64_t(kind) << kKindShift) |
           (std::uint64_t(generation & kGenerationMask) << kGenerationShift) | (index & kIndexMask);
}

inline DecodedHandle decode_handle(std::uint64_t value) noexcept {
    using namespace handle_bits;
    DecodedHandle d;
    if ((value >> kMagicShift) != kMagic) return d;
    auto kind = static_cast<std::uint8_t>((value >> kKindShift) & 0xff);
    if (kind < std::uint8_t(HandleKind::context) || kind > std::uint8_t(HandleKind::event)) return d;
    d.kind = static_cast<HandleKind>(kind);
    d.generation = static_cast<std::uint32_t>((value >> kGenerationShift) & kGenerationMask);
    d.index = static_cast<std::uint32_t>(value & kIndexMask);
    d.well_formed = d.generation != 0; // generation 0 is never issued
    return d;
}

// Why a lookup failed, so callers can say exactly what was wrong.
enum class LookupError { none, null_handle, not_a_handle, wrong_kind, stale };

template <class T>
class HandleTable {
  public:
    explicit HandleTable(HandleKind kind) : kind_(kind) {}
    HandleTable(const HandleTable &) = delete;
    HandleTable &operator=(const HandleTable &) = delete;

    HandleKind kind() const noexcept { return kind_; }

    // Stores the object and returns its handle value; 0 when the table is full.
    std::uint64_t insert(std::shared_ptr<T> object) {
        std::unique_lock<WriterPreferringMutex> lock(mutex_);
        std::uint32_t index;
        if (!free_.empty()) {
            index = free_.back();
            free_.pop_back();
        } else {
            if (slots_.size() >= handle_bits::kMaxSlots) return 0;
            index = static_cast<std::uint32_t>(slots_.size());
            slots_.push_back(Slot{});
        }
        Slot &slot = slots_[index];
        slot.object = std::move(object);
        ++live_;
        return encode_handle(kind_, slot.generation, index);
    }

    // The object, or nullptr with *why set.
    std::shared_ptr<T> lookup(std::uint64_t value, LookupError *why = nullptr) const {
        LookupError err = LookupError::none;
        std::shared_ptr<T> found;
        {
            // Shared: every API call looks handles up, from many threads at once.
            std::shared_lock<WriterPreferringMutex> lock(mutex_);
            std::uint32_t index = 0;
            if (find_locked(value, &err, &index)) found = slots_[index].object;
        }
        if (why != nullptr) *why = err;
        return found;
    }

    // Removes the object: its handle is invalid from now on (also after the slot is reused).
    // Returns the object so the caller can release it, or nullptr (with *why) when the handle
    // was not live: two threads freeing one handle see exactly one success.
    std::shared_ptr<T> take(std::uint64_t value, LookupError *why = nullptr) {
        LookupError err = LookupError::none;
        std::shared_ptr<T> taken;
        {
            std::unique_lock<WriterPreferringMutex> lock(mutex_);
            std::uint32_t index = 0;
            if (find_locked(value, &err, &index)) {
                Slot *slot = &slots_[index];
                taken = std::move(slot->object);
                slot->object.reset();
                // A slot whose generation would wrap is retired instead of reused, so no
                // handle value is ever issued twice.
                if (slot->generation < handle_bits::kGenerationMask) {
                    ++slot->generation;
                    free_.push_back(index);
                }
                --live_;
            }
        }
        if (why != nullptr) *why = err;
        return taken;
    }

    // fork(): the prepare handler holds every table exclusively across fork() so that the
    // child never inherits a table half-changed by another thread; see fork_support.cpp.
    void lock_for_fork() { mutex_.lock(); }
    void unlock_in_parent() { mutex_.unlock(); }
    void reset_in_child() noexcept { mutex_.reset_after_fork(); }

    std::size_t size() const {
        std::shared_lock<WriterPreferringMutex> lock(mutex_);
        return live_;
    }

  private:
    struct Slot {
        std::uint32_t generation = 1;
        std::shared_ptr<T> object;
    };

    // True with *index set when `value` names a live object of this table's kind.
    bool find_locked(std::uint64_t value, LookupError *err, std::uint32_t *index) const {
        if (value == 0) {
            *err = LookupError::null_handle;
            return false;
        }
        DecodedHandle d = decode_handle(value);
        if (!d.well_formed) {
            *err = LookupError::not_a_handle;
            return false;
        }
        if (d.kind != kind_) {
            *err = LookupError::wrong_kind;
            return false;
        }
        if (d.index >= slots_.size() || slots_[d.index].generation != d.generation || !slots_[d.index].object) {
            *err = LookupError::stale;
            return false;
        }
        *index = d.index;
        return true;
    }

    const HandleKind kind_;
    mutable WriterPreferringMutex mutex_;
    std::vector<Slot> slots_;
    std::vector<std::uint32_t> free_;
    std::size_t live_ = 0;
};

} // namespace xfer::core
