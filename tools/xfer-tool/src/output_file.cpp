// SPDX-License-Identifier: Apache-2.0
#include "output_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <stdexcept>

namespace xfer::tool {
namespace {

// The temporary file's name keeps the target's name in front, so a leftover one (the process
// was killed outright) says what it was; long names are shortened to stay within NAME_MAX.
constexpr std::size_t kNameKept = 200;
constexpr const char *kTemporarySuffix = ".tmp-XXXXXX";

std::string reason(int error) { return error ? std::strerror(error) : "unknown reason"; }

mode_t creation_mode() {
    // What a plain open() would have given the file; umask() can only be read by setting it.
    const mode_t mask = umask(0);
    umask(mask);
    return 0666 & ~mask;
}

} // namespace

OutputFile::OutputFile(std::string path, std::string kind) : path_(std::move(path)), kind_(std::move(kind)) {
    const std::string subject = (kind_ == "report" ? "" : kind_ + " ") + "'" + path_ + "'";
    auto cannot_open = [&](int error) {
        return std::runtime_error("cannot open " + subject + " for writing: " + reason(error));
    };
    const std::filesystem::path target(path_);
    const std::string name = target.filename().string();
    mode_t mode = 0;
    struct stat st {};
    if (lstat(path_.c_str(), &st) == 0) {
        target_existed_ = true;
        in_place_ = !S_ISREG(st.st_mode);
        // rename() would replace a file the user may not write: refuse it as open() would.
        if (!in_place_ && access(path_.c_str(), W_OK) != 0) throw cannot_open(errno);
        mode = st.st_mode & 07777;
    } else if (errno != ENOENT) {
        throw cannot_open(errno);
    } else {
        mode = creation_mode();
    }
    if (name.empty() || name == "." || name == "..") in_place_ = true; // not a file name: let open() say why

    if (in_place_) {
        write_path_ = path_;
        errno = 0;
        out_.open(write_path_);
        if (!out_) throw cannot_open(errno);
        return;
    }
    const std::filesystem::path folder = target.has_parent_path() ? target.parent_path() : ".";
    std::string pattern = (folder / name.substr(0, kNameKept)).string() + kTemporarySuffix;
    fd_ = mkostemp(pattern.data(), O_CLOEXEC);
    if (fd_ < 0) throw cannot_open(errno);
    write_path_ = pattern;
    // mkstemp creates the file 0600; the report gets the mode the target has, or would get.
    if (fchmod(fd_, mode) != 0) {
        const int error = errno;
        remove_temporary();
        throw cannot_open(error);
    }
    errno = 0;
    out_.open(write_path_, std::ios::out | std::ios::trunc);
    if (!out_) {
        const int error = errno;
        remove_temporary();
        throw cannot_open(error);
    }
}

OutputFile::~OutputFile() {
    if (out_.is_open()) out_.close();
    if (!committed_) remove_temporary();
    if (fd_ >= 0) ::close(fd_);
}

void OutputFile::remove_temporary() noexcept {
    if (in_place_ || write_path_.empty()) return; // in place, write_path_ is the target itself
    std::remove(write_path_.c_str());
}

void OutputFile::close_stream() {
    if (out_.is_open()) out_.close();
}

void OutputFile::commit() {
    if (committed_) return;
    const std::string subject = (kind_ == "report" ? "" : kind_ + " ") + "'" + path_ + "'";
    if (out_.is_open()) {
        out_.flush();
        const bool written = static_cast<bool>(out_);
        out_.close();
        if (!written || out_.fail()) throw std::runtime_error("cannot write " + subject);
    }
    if (in_place_) {
        committed_ = true;
        return;
    }
    // The data reaches the disk before the name does: after a crash the target holds the old
    // file or the new one, never an empty one.
    if (fsync(fd_) != 0) throw std::runtime_error("cannot write " + subject + ": " + reason(errno));
    ::close(fd_);
    fd_ = -1;
    if (std::rename(write_path_.c_str(), path_.c_str()) != 0)
        throw std::runtime_error("cannot replace " + subject + ": " + reason(errno));
    committed_ = true;
}

} // namespace xfer::tool
