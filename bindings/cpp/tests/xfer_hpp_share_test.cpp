// SPDX-License-Identifier: Apache-2.0
// Sharing buffers through the C++ layer on the host backend: an Export made by one context and
// imported by another is one memory, compared byte for byte both ways; it travels over a
// socketpair; its descriptors have one owner (moving empties the source, the destructor closes
// them once); what cannot be exported or imported throws xfer::Error with the C status; the
// memory observer hears of every buffer and range, is kept by the context through its closing,
// and its exceptions stay out of the C library. Built as C++17 and as C++20.
#include <fcntl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include <xfer/xfer.hpp>

static_assert(!std::is_copy_constructible_v<xfer::Export>);
static_assert(!std::is_copy_assignable_v<xfer::Export>);
static_assert(std::is_nothrow_move_constructible_v<xfer::Export>);
static_assert(std::is_nothrow_move_assignable_v<xfer::Export>);
static_assert(std::is_nothrow_destructible_v<xfer::Export>);

namespace {

constexpr std::size_t kBytes = (1u << 20) + 123; // not a multiple of the page

xfer::Context host_ctx() { return xfer::Context("host", 0); }

unsigned char pattern_byte(std::size_t i, unsigned seed) { return static_cast<unsigned char>(i * 31u + seed); }

void fill(unsigned char *p, std::size_t bytes, unsigned seed) {
    for (std::size_t i = 0; i < bytes; ++i) p[i] = pattern_byte(i, seed);
}

// The offset of the first byte that differs from pattern `seed`, or `bytes` when none does.
std::size_t first_mismatch(const unsigned char *p, std::size_t bytes, unsigned seed) {
    for (std::size_t i = 0; i < bytes; ++i) {
        if (p[i] != pattern_byte(i, seed)) return i;
    }
    return bytes;
}

bool fd_open(int fd) { return ::fcntl(fd, F_GETFD) != -1; }

bool fd_closed(int fd) { return ::fcntl(fd, F_GETFD) == -1 && errno == EBADF; }

// Runs `call`, expecting xfer::Error with `status` and a message that starts with `prefix`.
template <class F>
void expect_error(F &&call, xfer_status status, const std::string &prefix) {
    try {
        call();
        ADD_FAILURE() << prefix << ": no exception";
    } catch (const xfer::Error &e) {
        EXPECT_EQ(e.status(), status) << e.what();
        EXPECT_EQ(std::string(e.what()).rfind(prefix, 0), 0u) << e.what();
    }
}

struct SocketPair {
    int fds[2] = {-1, -1};
    SocketPair() {
        if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) != 0) fds[0] = fds[1] = -1;
    }
    ~SocketPair() {
        for (int fd : fds)
            if (fd >= 0) ::close(fd);
    }
    SocketPair(const SocketPair &) = delete;
    SocketPair &operator=(const SocketPair &) = delete;
};

TEST(XferHppShare, ExportAndImportBetweenTwoContextsAreOneMemoryBothWays) {
    xfer::Context exporter = host_ctx();
    xfer::Context importer = host_ctx();
    std::optional<xfer::Buffer> mine;
    mine.emplace(exporter, kBytes, XFER_ALLOC_SHAREABLE);
    fill(mine->host(), kBytes, 22);
    mine->copy(XFER_TO_DEVICE);
    xfer::Export e = mine->export_buffer();
    ASSERT_FALSE(e.empty());
    EXPECT_TRUE(static_cast<bool>(e));
    ASSERT_EQ(e.fd_count(), 1u);
    EXPECT_EQ(e.get().version, unsigned{XFER_EXPORT_VERSION});
    EXPECT_NE(::fcntl(e.get().fds[0], F_GETFD) & FD_CLOEXEC, 0);

    xfer::Buffer theirs = importer.import_buffer(e);
    EXPECT_EQ(theirs.bytes(), kBytes);
    EXPECT_NE(theirs.host(), mine->host()); // another mapping of the same pages
    EXPECT_EQ(first_mismatch(theirs.host(), kBytes, 22), kBytes);
    EXPECT_EQ(first_mismatch(theirs.device(), kBytes, 22), kBytes);
    // The importer writes, the exporter reads.
    fill(theirs.host(), kBytes, 33);
    theirs.copy(XFER_TO_DEVICE);
    EXPECT_EQ(first_mismatch(mine->host(), kBytes, 33), kBytes);
    EXPECT_EQ(first_mismatch(mine->device(), kBytes, 33), kBytes);
    // The exporter writes, the importer reads.
    fill(mine->device(), kBytes, 44);
    mine->copy(XFER_TO_HOST);
    EXPECT_EQ(first_mismatch(theirs.host(), kBytes, 44), kBytes);
    EXPECT_EQ(first_mismatch(theirs.device(), kBytes, 44), kBytes);

    // The exporter's buffer and export may go first: the import keeps the memory, and can be
    // exported again.
    mine.reset();
    e.close();
    EXPECT_TRUE(e.empty());
    EXPECT_EQ(first_mismatch(theirs.host(), kBytes, 44), kBytes);
    xfer::Export again = theirs.export_buffer();
    xfer::Buffer third = exporter.import_buffer(again);
    EXPECT_EQ(first_mismatch(third.host(), kBytes, 44), kBytes);
}

TEST(XferHppShare, SendAndReceiveOverASocketPair) {
    xfer::Context exporter = host_ctx();
    xfer::Context importer = host_ctx();
    xfer::Buffer mine(exporter, kBytes, XFER_ALLOC_SHAREABLE);
    fill(mine.host(), kBytes, 55);
    const xfer::Export e = mine.export_buffer();
    SocketPair sp;
    ASSERT_GE(sp.fds[0], 0);
    e.send(sp.fds[0]);
    EXPECT_EQ(e.fd_count(), 1u); // the sender keeps its descriptors
    EXPECT_TRUE(fd_open(e.get().fds[0]));
    xfer::Export got = xfer::Export::receive(sp.fds[1]);
    ASSERT_EQ(got.fd_count(), 1u);
    EXPECT_NE(got.get().fds[0], e.get().fds[0]); // a new descriptor of the same memory
    EXPECT_EQ(got.get().blob_bytes, e.get().blob_bytes);
    EXPECT_EQ(0, std::memcmp(got.get().blob, e.get().blob, e.get().blob_bytes));
    xfer::Buffer theirs = importer.import_buffer(got);
    EXPECT_EQ(first_mismatch(theirs.host(), kBytes, 55), kBytes);
    fill(theirs.host(), kBytes, 66);
    EXPECT_EQ(first_mismatch(mine.host(), kBytes, 66), kBytes);

    // Bytes that are not an export, a peer that went away, a socket that is none.
    const std::string junk(sizeof(xfer_export), 'j');
    ASSERT_EQ(static_cast<ssize_t>(junk.size()), ::write(sp.fds[0], junk.data(), junk.size()));
    expect_error([&] { (void)xfer::Export::receive(sp.fds[1]); }, XFER_ERROR_INVALID_ARGUMENT,
                 "xfer_export_receive: XFER_ERROR_INVALID_ARGUMENT: ");
    ::close(sp.fds[0]);
    sp.fds[0] = -1;
    char drain[512];
    while (::recv(sp.fds[1], drain, sizeof drain, MSG_DONTWAIT) > 0) {}
    expect_error([&] { (void)xfer::Export::receive(sp.fds[1]); }, XFER_ERROR_BACKEND,
                 "xfer_export_receive: XFER_ERROR_BACKEND: ");
    expect_error([&] { e.send(-1); }, XFER_ERROR_INVALID_ARGUMENT, "xfer_export_send: XFER_ERROR_INVALID_ARGUMENT: ");
    expect_error([&] { (void)xfer::Export::receive(-1); }, XFER_ERROR_INVALID_ARGUMENT,
                 "xfer_export_receive: XFER_ERROR_INVALID_ARGUMENT: ");
}

TEST(XferHppShare, TheDestructorClosesTheDescriptorsOnce) {
    xfer::Context ctx = host_ctx();
    xfer::Buffer buf(ctx, 4096, XFER_ALLOC_SHAREABLE);
    int fd = -1;
    {
        xfer::Export e = buf.export_buffer();
        fd = e.get().fds[0];
        ASSERT_TRUE(fd_open(fd));
    }
    EXPECT_TRUE(fd_closed(fd));
    // close() closes them now; the destructor then has nothing left to close.
    const int other = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
    ASSERT_GE(other, 0);
    {
        xfer::Export e = buf.export_buffer();
        fd = e.get().fds[0];
        e.close();
        EXPECT_TRUE(fd_closed(fd));
        EXPECT_TRUE(e.empty());
        EXPECT_EQ(e.get().fds[0], -1);
        e.close(); // does nothing
    }
    EXPECT_TRUE(fd_open(other)); // nothing else was closed on the way
    ::close(other);
    // A default-constructed Export holds nothing and closes nothing.
    xfer::Export none;
    EXPECT_TRUE(none.empty());
    EXPECT_FALSE(static_cast<bool>(none));
    EXPECT_EQ(none.fd_count(), 0u);
    EXPECT_EQ(none.get().struct_size, sizeof(xfer_export));
}

TEST(XferHppShare, MovingAnExportLeavesTheSourceEmpty) {
    xfer::Context exporter = host_ctx();
    xfer::Context importer = host_ctx();
    xfer::Buffer buf(exporter, kBytes, XFER_ALLOC_SHAREABLE);
    fill(buf.host(), kBytes, 77);
    xfer::Export a = buf.export_buffer();
    const int fd = a.get().fds[0];
    xfer::Export b(std::move(a));
    EXPECT_TRUE(a.empty()); // NOLINT(bugprone-use-after-move): moved from is empty, by contract
    EXPECT_EQ(a.fd_count(), 0u);
    EXPECT_EQ(a.get().blob_bytes, 0u);
    for (int i = 0; i < XFER_EXPORT_MAX_FDS; ++i) EXPECT_EQ(a.get().fds[i], -1) << i;
    EXPECT_EQ(b.get().fds[0], fd);
    EXPECT_TRUE(fd_open(fd));

    // Move assignment closes the target's own descriptors and takes the source's.
    xfer::Export c = buf.export_buffer();
    const int c_fd = c.get().fds[0];
    c = std::move(b);
    EXPECT_TRUE(fd_closed(c_fd));
    EXPECT_TRUE(b.empty()); // NOLINT(bugprone-use-after-move)
    EXPECT_EQ(c.get().fds[0], fd);
    EXPECT_TRUE(fd_open(fd));

    // The empty ones are refused, the one that holds the descriptor works.
    expect_error([&] { (void)importer.import_buffer(a); }, XFER_ERROR_INVALID_ARGUMENT,
                 "xfer_buffer_import: XFER_ERROR_INVALID_ARGUMENT: ");
    expect_error([&] { a.send(0); }, XFER_ERROR_INVALID_ARGUMENT, "xfer_export_send: XFER_ERROR_INVALID_ARGUMENT: ");
    xfer::Buffer theirs = importer.import_buffer(c);
    EXPECT_EQ(first_mismatch(theirs.host(), kBytes, 77), kBytes);
    { xfer::Export gone(std::move(c)); }
    EXPECT_TRUE(fd_closed(fd)); // closed once, by the last owner
}

TEST(XferHppShare, ANonShareableBufferIsNotExported) {
    xfer::Context ctx = host_ctx();
    xfer::Buffer plain(ctx, 4096);
    try {
        (void)plain.export_buffer();
        FAIL() << "no exception";
    } catch (const xfer::Error &e) {
        EXPECT_EQ(e.status(), XFER_ERROR_INVALID_STATE);
        const std::string what = e.what();
        EXPECT_EQ(what.rfind("xfer_buffer_export: XFER_ERROR_INVALID_STATE: ", 0), 0u) << what;
        EXPECT_NE(what.find("XFER_ALLOC_SHAREABLE"), std::string::npos) << what;
    }
    // A moved-from buffer holds no handle.
    xfer::Buffer shareable(ctx, 4096, XFER_ALLOC_SHAREABLE);
    xfer::Buffer taken(std::move(shareable));
    expect_error([&] { (void)shareable.export_buffer(); }, XFER_ERROR_INVALID_HANDLE,
                 "xfer_buffer_export: XFER_ERROR_INVALID_HANDLE");
    EXPECT_EQ(taken.export_buffer().fd_count(), 1u);
}

TEST(XferHppShare, MemoryObserverSeesEveryBufferAndRange) {
    xfer::Context ctx = host_ctx();
    std::vector<xfer_memory_event> seen;
    std::vector<unsigned char> first_byte_at_release; // read inside the observer
    ctx.set_memory_observer([&](const xfer_memory_event &e) {
        seen.push_back(e);
        if (e.event == XFER_MEMORY_RELEASING)
            first_byte_at_release.push_back(*static_cast<const unsigned char *>(e.host_ptr));
    });
    std::optional<xfer::Buffer> a;
    a.emplace(ctx, 4096);
    const xfer_buffer a_raw = a->get();
    void *const a_host = a->host();
    xfer::Buffer shared(ctx, kBytes, XFER_ALLOC_SHAREABLE);
    std::optional<xfer::Buffer> imported;
    imported.emplace(ctx.import_buffer(shared.export_buffer()));
    const xfer_buffer imported_raw = imported->get();
    std::vector<unsigned char> range(3 * 4096);
    std::optional<xfer::Registration> reg;
    reg.emplace(ctx.register_memory(range));
    std::memset(a->host(), 0x7e, 4096);
    a.reset();
    reg.reset();
    imported.reset();

    ASSERT_EQ(seen.size(), 7u);
    const auto is = [&](std::size_t i, xfer_memory_event_kind kind, xfer_buffer b, void *host, std::size_t bytes,
                        int was_imported) {
        const xfer_memory_event &ev = seen[i];
        EXPECT_EQ(ev.struct_size, sizeof(xfer_memory_event)) << i;
        EXPECT_EQ(ev.ctx, ctx.get()) << i;
        EXPECT_EQ(ev.event, kind) << i;
        EXPECT_EQ(ev.buffer, b) << i;
        EXPECT_EQ(ev.host_ptr, host) << i;
        EXPECT_EQ(ev.bytes, bytes) << i;
        EXPECT_EQ(ev.imported, was_imported) << i;
    };
    is(0, XFER_MEMORY_ALLOCATED, a_raw, a_host, 4096, 0);
    is(1, XFER_MEMORY_ALLOCATED, shared.get(), shared.host(), kBytes, 0);
    EXPECT_EQ(seen[1].device_ptr, shared.device());
    is(2, XFER_MEMORY_ALLOCATED, imported_raw, seen[2].host_ptr, kBytes, 1);
    EXPECT_NE(seen[2].host_ptr, nullptr);
    is(3, XFER_MEMORY_REGISTERED, nullptr, range.data(), range.size(), 0);
    EXPECT_EQ(seen[3].device_ptr, nullptr);
    is(4, XFER_MEMORY_RELEASING, a_raw, a_host, 4096, 0);
    is(5, XFER_MEMORY_UNREGISTERING, nullptr, range.data(), range.size(), 0);
    is(6, XFER_MEMORY_RELEASING, imported_raw, seen[2].host_ptr, kBytes, 1);
    ASSERT_EQ(first_byte_at_release.size(), 2u);
    EXPECT_EQ(first_byte_at_release[0], 0x7e); // told before the memory went

    // Removed: nothing more is told.
    ctx.set_memory_observer(nullptr);
    { xfer::Buffer quiet(ctx, 64); }
    EXPECT_EQ(seen.size(), 7u);
    EXPECT_EQ(ctx.take_memory_observer_exception(), nullptr);
}

// The context keeps the observer while its C handle lives, and through xfer_close, which tells
// the release of what it frees; then the observer goes with the context.
TEST(XferHppShare, MemoryObserverIsKeptUntilTheContextClosed) {
    auto events = std::make_shared<std::vector<std::pair<xfer_memory_event_kind, xfer_buffer>>>();
    std::optional<xfer::Buffer> buf;
    xfer_buffer c_made = nullptr;
    xfer_buffer buf_raw = nullptr;
    {
        xfer::Context ctx = host_ctx();
        ctx.set_memory_observer([events](const xfer_memory_event &e) { events->emplace_back(e.event, e.buffer); });
        buf.emplace(ctx, 4096);
        buf_raw = buf->get();
        ASSERT_EQ(xfer_alloc(ctx.get(), 256, XFER_ALLOC_DEFAULT, &c_made), XFER_SUCCESS); // left to xfer_close
    }
    EXPECT_EQ(events.use_count(), 2); // ours and the observer's
    ASSERT_EQ(events->size(), 2u);
    buf.reset(); // frees the buffer, then closes the context, which frees c_made
    ASSERT_EQ(events->size(), 4u);
    EXPECT_EQ((*events)[2], std::make_pair(XFER_MEMORY_RELEASING, buf_raw));
    EXPECT_EQ((*events)[3], std::make_pair(XFER_MEMORY_RELEASING, c_made));
    EXPECT_EQ(events.use_count(), 1);
}

TEST(XferHppShare, AnExceptionOfTheMemoryObserverStaysOutOfTheCall) {
    xfer::Context ctx = host_ctx();
    int calls = 0;
    ctx.set_memory_observer([&](const xfer_memory_event &e) {
        ++calls;
        throw std::runtime_error("observer saw " + std::to_string(e.bytes) + " bytes");
    });
    {
        xfer::Buffer buf(ctx, 1000); // neither the allocation nor the free throws
        buf.host()[999] = 9;
        buf.copy(XFER_TO_DEVICE);
        EXPECT_EQ(buf.device()[999], 9);
        xfer::Buffer other(ctx, 2000);
    }
    EXPECT_EQ(calls, 4);
    std::exception_ptr e = ctx.take_memory_observer_exception();
    ASSERT_NE(e, nullptr);
    try {
        std::rethrow_exception(e);
    } catch (const std::runtime_error &err) {
        EXPECT_STREQ(err.what(), "observer saw 1000 bytes"); // the latest: the last free
    }
    EXPECT_EQ(ctx.take_memory_observer_exception(), nullptr); // taken once
    EXPECT_EQ(ctx.take_observer_exception(), nullptr);        // the copy observer's is apart
    // A throw of something that is no std::exception is caught as well.
    ctx.set_memory_observer([](const xfer_memory_event &) { throw 42; });
    { xfer::Buffer buf(ctx, 64); }
    e = ctx.take_memory_observer_exception();
    ASSERT_NE(e, nullptr);
    try {
        std::rethrow_exception(e);
    } catch (int v) {
        EXPECT_EQ(v, 42);
    }
}

TEST(XferHppShare, MemoryObserverMayCopyAndReplaceItself) {
    std::vector<xfer_memory_event_kind> outer, inner; // outlive `other`, whose free is told
    xfer::Context ctx = host_ctx();
    xfer::Buffer other(ctx, 256);
    other.host()[255] = 0x5c;
    ctx.set_memory_observer([&](const xfer_memory_event &e) {
        outer.push_back(e.event);
        other.copy(XFER_TO_DEVICE); // a copy of its own, inside the allocation
        ctx.set_memory_observer([&](const xfer_memory_event &e2) { inner.push_back(e2.event); });
    });
    {
        xfer::Buffer buf(ctx, 64); // the first observer hears of it, the replacement of its free
    }
    EXPECT_EQ(other.device()[255], 0x5c);
    EXPECT_EQ(outer, std::vector<xfer_memory_event_kind>{XFER_MEMORY_ALLOCATED});
    EXPECT_EQ(inner, std::vector<xfer_memory_event_kind>{XFER_MEMORY_RELEASING});
    EXPECT_EQ(ctx.take_memory_observer_exception(), nullptr);
}

TEST(XferHppShare, AClosedContextRefusesImportAndTheMemoryObserver) {
    xfer::Context exporter = host_ctx();
    xfer::Buffer buf(exporter, 4096, XFER_ALLOC_SHAREABLE);
    const xfer::Export e = buf.export_buffer();
    xfer::Context ctx = host_ctx();
    EXPECT_TRUE(ctx.close());
    expect_error([&] { (void)ctx.import_buffer(e); }, XFER_ERROR_INVALID_HANDLE,
                 "xfer_buffer_import: XFER_ERROR_INVALID_HANDLE");
    expect_error([&] { ctx.set_memory_observer([](const xfer_memory_event &) {}); }, XFER_ERROR_INVALID_HANDLE,
                 "xfer::Context::set_memory_observer: XFER_ERROR_INVALID_HANDLE");
    expect_error([&] { (void)ctx.take_memory_observer_exception(); }, XFER_ERROR_INVALID_HANDLE,
                 "xfer::Context::take_memory_observer_exception: XFER_ERROR_INVALID_HANDLE");
    EXPECT_FALSE(e.empty()); // a failed import leaves the export as it was
}

} // namespace
