// SPDX-License-Identifier: Apache-2.0
// A per-thread object that stays usable after the C++ runtime has destroyed the thread's
// thread-locals.
//
// Why: glibc's exit() destroys the main thread's thread-locals before it runs the process's
// exit handlers and static destructors, and xfer's entry points may be called from those (a
// library's atexit handler closing its context: objects.cpp keeps the handle tables for that
// reason). A destroyed thread_local used then is undefined behaviour; a cache of shared_ptr
// records (objects.hpp) released a second time frees a record its table still holds.
//
// ThreadLasting<T, Tag>::get() constructs the calling thread's T at its first use and never
// destroys it: its storage is trivially destructible. When the thread ends, a second
// thread-local (whose destructor the runtime registers at that first use) calls
// T::release(), which must drop everything T holds (memory, references) and leave a valid,
// empty T. A call on the thread after that finds the empty T and works; what it stores then
// stays with the thread until the process ends. `Tag` makes each use its own thread-local.
#pragma once

#include <new>

namespace xfer::core {

template <class T, class Tag>
class ThreadLasting {
  public:
    static T &get() noexcept {
        Storage &s = storage_;
        if (!s.constructed) [[unlikely]] {
            ::new (static_cast<void *>(s.bytes)) T();
            s.constructed = true;
            reaper_.arm(); // its first use registers its destructor for this thread
        }
        return *std::launder(reinterpret_cast<T *>(s.bytes));
    }

  private:
    struct Storage {
        alignas(T) unsigned char bytes[sizeof(T)];
        bool constructed;
    };
    struct Reaper {
        void arm() noexcept {}
        ~Reaper() {
            Storage &s = storage_;
            if (s.constructed) std::launder(reinterpret_cast<T *>(s.bytes))->release();
        }
    };
    static thread_local Storage storage_; // zero-initialised, never destroyed
    static thread_local Reaper reaper_;
};

template <class T, class Tag>
thread_local typename ThreadLasting<T, Tag>::Storage ThreadLasting<T, Tag>::storage_;
template <class T, class Tag>
thread_local typename ThreadLasting<T, Tag>::Reaper ThreadLasting<T, Tag>::reaper_;

} // namespace xfer::core
