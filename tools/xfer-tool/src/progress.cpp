// SPDX-License-Identifier: Apache-2.0
#include "progress.hpp"

#include <unistd.h>

#include <cstdio>

namespace xfer::tool {

Progress::Progress(bool enabled) : enabled_(enabled) {}

Progress::~Progress() { clear(); }

bool Progress::stderr_is_terminal() { return isatty(STDERR_FILENO) == 1; }

std::string Progress::estimate(int done, int total, double elapsed_s) {
    if (done <= 0 || total <= done) return "";
    const double left = elapsed_s / done * (total - done);
    return left < 90 ? "~" + std::to_string(static_cast<int>(left + 0.5)) + " s left"
                     : "~" + std::to_string(static_cast<int>(left / 60 + 0.5)) + " min left";
}

void Progress::begin_step(const std::string &label) {
    const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    const int total = total_ > step_ + 1 ? total_ : step_ + 1;
    const std::string eta = estimate(step_, total, elapsed);
    ++step_;
    label_ = "[" + std::to_string(step_) + "/" + std::to_string(total) + (eta.empty() ? "" : " " + eta) + "] " + label;
    draw(label_);
}

void Progress::detail(const std::string &text) { draw(label_ + ": " + text); }

void Progress::draw(const std::string &line) {
    if (!enabled_) return;
    // \r + erase-to-end-of-line redraws in place without scrolling.
    std::fprintf(stderr, "\r\033[K%s", line.c_str());
    std::fflush(stderr);
    drawn_ = true;
}

void Progress::clear() {
    if (!enabled_ || !drawn_) return;
    std::fprintf(stderr, "\r\033[K");
    std::fflush(stderr);
    drawn_ = false;
}

} // namespace xfer::tool
