/* pgrest_handle: the request engine (lib/engine/task.c) driven to its end by a
 * blocking loop, the way curl_easy_perform sits on the multi interface. */
#include <errno.h>
#include <poll.h>

#include "engine/context.h"
#include "exec/pool.h"
#include "util/error.h"

static void wait_socket(const pgrest_task *t, int wait)
{
    struct pollfd pfd = {.fd = pgrest_task_socket(t), .events = POLLIN};
    if (wait == PGREST_TASK_WAIT_WRITE)
        pfd.events |= POLLOUT;
    /* a connect_timeout or a cancel's grace may end the wait */
    while (poll(&pfd, 1, (int)pgrest_task_timeout_ms(t)) < 0 && errno == EINTR)
        ;
}

pgrest_response *pgrest_handle(pgrest_ctx *ctx, pgrest_arena *arena,
                               const pgrest_request *req)
{
    if (ctx == NULL || arena == NULL || req == NULL)
        return NULL;
    /* a blocking host's wait for a pooled connection: the engine's wake
     * call (made under the pool's lock) ends its sleep */
    pgr_pool_sleeper s;
    pgr_pool_sleeper_init(&s);
    pgrest_task *t = pgrest_task_start(ctx, arena, req, pgr_pool_sleeper_wake, &s);
    int wait = pgrest_task_wait_state(t);
    /* a blocking call has no chunks to give: the following body is empty */
    if (wait == PGREST_TASK_WANTS_BODY) {
        pgrest_task_end_body(t, NULL);
        wait = pgrest_task_wait_state(t);
    }
    while (wait != PGREST_TASK_DONE) {
        if (wait == PGREST_TASK_WAIT_CONN)
            pgr_pool_sleep(&s, pgrest_task_timeout_ms(t));
        else
            wait_socket(t, wait);
        wait = pgrest_task_advance(t);
    }
    /* no wake can come any more: the task left the queue */
    pgr_pool_sleeper_destroy(&s);
    return pgrest_task_response(t);
}
