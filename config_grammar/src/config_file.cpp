// SPDX-License-Identifier: Apache-2.0
#include "xfer_config/config_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <map>
#include <sstream>

#include "xfer_config/status_error.hpp"
#include "xfer_config/value_parse.hpp"

namespace xfer::core {
namespace {

bool is_name(std::string_view text) {
    return !text.empty() && std::all_of(text.begin(), text.end(),
                                        [](unsigned char c) { return std::isalnum(c) != 0 || c == '_' || c == '-'; });
}

// One pass over the lines ('#' starts a comment, blanks trimmed, "[name]" opens a section,
// "key = value" otherwise) that records where each key sits, so that every refusal names
// its line.
std::vector<ConfigEntry> scan_lines(const std::string &text, const std::string &source) {
    std::vector<ConfigEntry> keys;
    std::map<std::string, int> first_line; // "section.key" -> line
    std::istringstream lines(text);
    std::string raw;
    std::string section;
    int number = 0;
    while (std::getline(lines, raw)) {
        ++number;
        if (raw.find('\0') != std::string::npos) {
            // Everything after a NUL would vanish from messages and from C strings.
            raise(XFER_ERROR_CONFIG, source, ":", number, ": contains a NUL byte (at column ", raw.find('\0') + 1,
                  "); a configuration file is text");
        }
        std::string_view line(raw);
        if (auto hash = line.find('#'); hash != std::string_view::npos) line = line.substr(0, hash);
        line = trim(line);
        if (line.empty()) continue;
        if (line.front() == '[') {
            // No blanks inside the brackets: "[ host ]" is refused here, with its line, rather
            // than read as a section " host " that no backend has.
            std::string_view name = line.back() == ']' ? line.substr(1, line.size() - 2) : std::string_view();
            if (line.back() != ']' || !is_name(name)) {
                raise(XFER_ERROR_CONFIG, source, ":", number, ": malformed section header '", line,
                      "' (expected [name]: letters, digits, '_' or '-', no blanks)");
            }
            section = std::string(name);
            continue;
        }
        auto eq = line.find('=');
        if (eq == std::string_view::npos) {
            raise(XFER_ERROR_CONFIG, source, ":", number, ": malformed line '", line,
                  "' (expected 'key = value' or '[section]')");
        }
        std::string_view key = trim(line.substr(0, eq));
        if (!is_name(key)) {
            raise(XFER_ERROR_CONFIG, source, ":", number, ": malformed key '", key, "' in line '", line,
                  "' (letters, digits, '_' or '-')");
        }
        std::string full = section.empty() ? std::string(key) : section + "." + std::string(key);
        auto [where, inserted] = first_line.emplace(full, number);
        if (!inserted) {
            raise(XFER_ERROR_CONFIG, source, ":", number, ": key '", full, "' is set again (first set at line ",
                  where->second, ")");
        }
        keys.push_back(ConfigEntry{section, std::string(key), std::string(trim(line.substr(eq + 1))), number});
    }
    return keys;
}

const char *file_kind(mode_t mode) {
    if (S_ISDIR(mode)) return "a directory";
    if (S_ISFIFO(mode)) return "a FIFO";
    if (S_ISCHR(mode)) return "a character device";
    if (S_ISBLK(mode)) return "a block device";
    if (S_ISSOCK(mode)) return "a socket";
    return "not a regular file";
}

} // namespace

ConfigFile parse_config(std::istream &in, const std::string &source) {
    std::stringstream buffer;
    buffer << in.rdbuf();
    // Keys are checked later, against what the found backends declare: any name is kept here.
    ConfigFile file;
    file.path = source;
    file.entries = scan_lines(buffer.str(), source);
    return file;
}

ConfigFile read_config_file(const std::string &path) {
    // Opened without blocking (a FIFO would wait for a writer forever) and checked before
    // reading: a directory, a device (/dev/zero never ends) or a huge file is refused.
    const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
    if (fd < 0) {
        raise(XFER_ERROR_CONFIG, "XFER_CONFIG names '", path, "', which cannot be read: ", std::strerror(errno));
    }
    struct Closer {
        int fd;
        ~Closer() { ::close(fd); }
    } closer{fd};
    struct stat st {};
    if (::fstat(fd, &st) != 0) {
        raise(XFER_ERROR_CONFIG, "XFER_CONFIG names '", path, "', which cannot be examined: ", std::strerror(errno));
    }
    if (!S_ISREG(st.st_mode)) {
        raise(XFER_ERROR_CONFIG, "XFER_CONFIG names '", path, "', which is ", file_kind(st.st_mode),
              ", not a regular file");
    }
    if (st.st_size > static_cast<off_t>(kMaxConfigBytes)) {
        raise(XFER_ERROR_CONFIG, "XFER_CONFIG names '", path, "', which has ", st.st_size,
              " bytes; a configuration file may have at most ", kMaxConfigBytes);
    }
    std::string text;
    char chunk[4096];
    for (;;) {
        const ssize_t got = ::read(fd, chunk, sizeof chunk);
        if (got < 0 && errno == EINTR) continue;
        if (got < 0)
            raise(XFER_ERROR_CONFIG, "XFER_CONFIG names '", path, "', which cannot be read: ", std::strerror(errno));
        if (got == 0) break;
        text.append(chunk, static_cast<std::size_t>(got));
        // The file may grow between fstat and here.
        if (text.size() > kMaxConfigBytes) {
            raise(XFER_ERROR_CONFIG, "XFER_CONFIG names '", path, "', which has more than ", kMaxConfigBytes,
                  " bytes, the most a configuration file may have");
        }
    }
    std::istringstream in(text);
    return parse_config(in, path);
}

} // namespace xfer::core
