// SPDX-License-Identifier: Apache-2.0
// The core's pthread_atfork handlers: around fork() the forking thread holds the plugin
// registry's and the handle tables' locks, so that the child never inherits one that a vanished
// thread held; the child clears what it inherited and counts the fork (fork_generation.hpp).
// Above everything it locks: nothing of the core includes it.
#include <pthread.h>

#include <atomic>

#include "fork_generation.hpp"
#include "objects.hpp"
#include "plugin_registry.hpp"

namespace xfer::core {

namespace {

// Order matters: the plugin registry's lock first (discovery takes it and never a table lock
// inside), then the tables, which are leaves.
void prepare() {
    plugin_registry_lock_for_fork();
    context_table().lock_for_fork();
    buffer_table().lock_for_fork();
    stream_table().lock_for_fork();
    event_table().lock_for_fork();
}

void in_parent() {
    event_table().unlock_in_parent();
    stream_table().unlock_in_parent();
    buffer_table().unlock_in_parent();
    context_table().unlock_in_parent();
    plugin_registry_unlock_in_parent();
}

void in_child() {
    event_table().reset_in_child();
    stream_table().reset_in_child();
    buffer_table().reset_in_child();
    context_table().reset_in_child();
    plugin_registry_reset_in_child();
    g_fork_generation.fetch_add(1);
}

// Registered when libxfer.so is loaded, before the program can fork with xfer in use.
[[maybe_unused]] const int kRegistered = pthread_atfork(prepare, in_parent, in_child);

} // namespace

} // namespace xfer::core
