#include "util/background_thread.h"

#include <signal.h>

bool pgr_background_thread_start(pthread_t *thread, void *(*fn)(void *), void *arg)
{
    /* the thread inherits the mask: the host's signals are not its business */
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    bool started = pthread_create(thread, NULL, fn, arg) == 0;
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    return started;
}
