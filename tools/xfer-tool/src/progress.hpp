// SPDX-License-Identifier: Apache-2.0
// A one-line progress indicator on stderr for long runs, shown only when stderr is a terminal
// (and not --quiet): logs and CI output stay clean.
#pragma once

#include <chrono>
#include <string>

namespace xfer::tool {

class Progress {
  public:
    explicit Progress(bool enabled);
    ~Progress();
    Progress(const Progress &) = delete;
    Progress &operator=(const Progress &) = delete;

    static bool stderr_is_terminal();

    void set_total(int steps) { total_ = steps; }
    // "[3/14 ~40 s left] bandwidth on pinned": the estimate is the mean time of the finished
    // steps times the steps still to run (shown from the second step on).
    void begin_step(const std::string &label);
    // "~40 s left" for `done` of `total` steps after `elapsed_s` seconds; "" before the first.
    static std::string estimate(int done, int total, double elapsed_s);
    // Appends what the step is doing now: "[3/14] bandwidth on pinned: 64 MiB h2d".
    void detail(const std::string &text);
    // Erases the line (before printing anything else to stderr, and at the end).
    void clear();

  private:
    void draw(const std::string &line);
    bool enabled_;
    bool drawn_ = false;
    int total_ = 0;
    int step_ = 0;
    std::string label_;
    std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
};

} // namespace xfer::tool
