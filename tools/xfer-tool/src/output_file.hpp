// SPDX-License-Identifier: Apache-2.0
// A report, trace or plot file written whole or not at all: the content goes to a temporary
// file beside the target (same folder, so rename() replaces the target atomically) and takes
// the target's place only at commit(). A reader never sees a partial file; a run that stops
// early (an interrupt, an error) leaves the earlier file as it was; of concurrent runs writing
// one path, each leaves a complete file and the last to commit wins.
#pragma once

#include <fstream>
#include <ostream>
#include <string>

namespace xfer::tool {

class OutputFile {
  public:
    // Creates the temporary file now, so a path that cannot be written fails before any work.
    // `kind` names the file in messages ("report", "trace file", "plot"). Throws
    // std::runtime_error "cannot open [KIND ]'PATH' for writing: REASON" (`kind` is left out
    // for "report", whose message reads as it always has).
    //
    // A path that exists and is not a plain file (a symbolic link, /dev/stdout, a FIFO) is
    // written in place: replacing it would replace the link or the device node itself.
    OutputFile(std::string path, std::string kind);
    // Removes the temporary file unless commit() ran.
    ~OutputFile();
    OutputFile(const OutputFile &) = delete;
    OutputFile &operator=(const OutputFile &) = delete;

    std::ostream &stream() { return out_; }
    // The target, as given.
    const std::string &path() const { return path_; }
    // Where the content goes until commit(): the temporary file, or the target when written in place.
    const std::string &write_path() const { return write_path_; }
    const std::string &kind() const { return kind_; }
    // A file was at the target when this object was made (what an interrupted run leaves there).
    bool target_existed() const { return target_existed_; }
    // Written in place (see the constructor): what an interrupted run wrote is there.
    bool in_place() const { return in_place_; }

    // Flushes and closes the stream, then renames the temporary file over the target. Throws
    // std::runtime_error (and removes the temporary file) when anything was not written.
    void commit();
    // For content written by another program to write_path() (gnuplot): closes the stream and
    // the file must not be empty before commit() renames it.
    void close_stream();

  private:
    void remove_temporary() noexcept;

    std::string path_, kind_, write_path_;
    bool in_place_ = false;
    bool target_existed_ = false;
    bool committed_ = false;
    int fd_ = -1; // the temporary file, kept open for fsync() before the rename
    std::ofstream out_;
};

} // namespace xfer::tool
