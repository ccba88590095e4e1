#include "progress.hpp"

#include <cstdio>
#include <unistd.h>

namespace xfer_tool {

Progress::Progress(bool enabled) : enabled_(enabled) {}

Progress::~Progress()
{
    clear();
}

bool Progress::stderr_is_terminal()
{
    return isatty(STDERR_FILENO) == 1;
}

void Progress::begin_step(const std::string &label)
{
    ++step_;
    label_ = "[" + std::to_string(step_) + "/" + std::to_string(total_ > step_ ? total_ : step_) + "] " + label;
    draw(label_);
}

void Progress::detail(const std::string &text)
{
    draw(label_ + ": " + text);
}

void Progress::draw(const std::string &line)
{
    if (!enabled_)
        return;
    // \r + erase-to-end-of-line redraws in place without scrolling.
    std::fprintf(stderr, "\r\033[K%s", line.c_str());
    std::fflush(stderr);
    drawn_ = true;
}

void Progress::clear()
{
    if (!enabled_ || !drawn_)
        return;
    std::fprintf(stderr, "\r\033[K");
    std::fflush(stderr);
    drawn_ = false;
}

} // namespace xfer_tool
