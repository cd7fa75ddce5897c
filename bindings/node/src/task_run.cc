// One request driven by the loop: pgrest_task_advance whenever its socket
// is ready, its timeout has passed or the pool woke it; never blocking.
#include "pgrest_node.h"

#include <cstdlib>

static const size_t kBodyChunk = 64 * 1024;

size_t TaskRun::alive_ = 0;

TaskRun::TaskRun(Context *owner, Napi::Object owner_object, uint64_t id, pgrest_arena *arena,
                 TaskCallbacks callbacks)
    : owner_(owner), owner_ref_(Napi::Persistent(owner_object)), env_(owner_object.Env()),
      async_(owner_object.Env(), "pgrest.request"), id_(id), arena_(arena),
      cb_(std::move(callbacks))
{
    alive_++;
}

TaskRun::~TaskRun()
{
    pgrest_arena_free(arena_);
    alive_--;
}

bool TaskRun::Start(const pgrest_request *req)
{
    task_ = pgrest_task_start(owner_->raw(), arena_, req, Context::Wake, owner_);
    return task_ != nullptr;
}

bool TaskRun::WaitsForWake() const
{
    return !finished_ && !paused_ &&
           (cancelled_ || pgrest_task_wait_state(task_) == PGREST_TASK_WAIT_CONN);
}

void TaskRun::Kick()
{
    // A JS callback may call resume() or cancel() while we are inside
    // Step(): note it and step again instead of re-entering.
    if (stepping_) {
        kick_again_ = true;
        return;
    }
    stepping_ = true;
    do {
        kick_again_ = false;
        Step();
    } while (kick_again_ && !finished_);
    stepping_ = false;
    if (finished_)
        CloseHandles();
}

void TaskRun::Cancel()
{
    if (finished_ || cancelled_)
        return;
    cancelled_ = true;
    paused_ = false;
    pgrest_task_cancel(task_);
    Kick();
}

void TaskRun::Resume()
{
    if (finished_ || !paused_)
        return;
    paused_ = false;
    Kick();
}

int TaskRun::WriteBody(const char *data, size_t len)
{
    if (finished_ || cancelled_)
        return -1;
    return BodyWritten(pgrest_task_write_body(task_, data, len, nullptr));
}

int TaskRun::EndBody()
{
    if (finished_ || cancelled_)
        return -1;
    return BodyWritten(pgrest_task_end_body(task_, nullptr));
}

// PGREST_AGAIN: the bytes were not taken; the task waits for its socket or
// the pool, and Step() calls on_body_wanted once it wants its body again.
// Otherwise the task goes on (or is DONE: the answer goes out now).
int TaskRun::BodyWritten(int rc)
{
    int wait_state = pgrest_task_wait_state(task_);
    if (rc == PGREST_AGAIN) {
        body_waiting_ = true;
        Wait(wait_state);
        if (wait_state == PGREST_TASK_WANTS_BODY)
            ArmTimer(1); // never spin: try again on the loop's next turn
        return 1;
    }
    int result = rc == PGREST_OK && wait_state != PGREST_TASK_DONE ? 0 : -1;
    Kick(); // may finish and free this run
    return result;
}

void TaskRun::Step()
{
    while (!finished_ && !paused_) {
        int wait_state = pgrest_task_advance(task_);
        pgrest_response *resp = pgrest_task_response(task_);
        bool streamed = resp != nullptr && pgrest_response_streamed(resp);
        if (wait_state == PGREST_TASK_BODY || (wait_state == PGREST_TASK_DONE && streamed)) {
            StopSocket();
            if (!head_sent_)
                SendHead(false);
            if (!PumpBody())
                return;
            continue;
        }
        if (wait_state == PGREST_TASK_DONE) {
            SendHead(true);
            Finish(resp == nullptr);
            return;
        }
        Wait(wait_state);
        if (wait_state == PGREST_TASK_WANTS_BODY && body_waiting_) {
            body_waiting_ = false;
            if (!cb_.on_body_wanted.IsEmpty()) {
                Napi::HandleScope scope(env_);
                CallFromLoop(env_, cb_.on_body_wanted, async_, {});
            }
        }
        return;
    }
}

// Arms the watchers for what the task waits for next.
void TaskRun::Wait(int wait_state)
{
    long timeout = pgrest_task_timeout_ms(task_);
    if (timeout >= 0)
        ArmTimer(static_cast<uint64_t>(timeout));
    else if (timer_ != nullptr)
        uv_timer_stop(timer_);
    if (wait_state == PGREST_TASK_WAIT_READ)
        WatchSocket(pgrest_task_socket(task_), UV_READABLE);
    else if (wait_state == PGREST_TASK_WAIT_WRITE)
        WatchSocket(pgrest_task_socket(task_), UV_READABLE | UV_WRITABLE);
    else
        StopSocket(); // WAIT_CONN: the pool's wake comes through Context::Wake
}

void TaskRun::ArmTimer(uint64_t ms)
{
    if (timer_ == nullptr) {
        timer_ = new uv_timer_t;
        uv_timer_init(owner_->loop(), timer_);
        timer_->data = this;
        open_handles_++;
    }
    uv_timer_start(timer_, OnTimer, ms, 0);
}

void TaskRun::WatchSocket(int fd, int events)
{
    if (poll_ != nullptr && poll_fd_ != fd) {
        // While connecting libpq may move to another socket: a poll handle
        // watches one descriptor for life.
        uv_close(reinterpret_cast<uv_handle_t *>(poll_), OnHandleClosed);
        poll_ = nullptr;
    }
    if (fd < 0) {
        StopSocket();
        return;
    }
    if (poll_ == nullptr) {
        poll_ = new uv_poll_t;
        if (uv_poll_init(owner_->loop(), poll_, fd) != 0) {
            // Not watchable: give up on the request, and advance it from
            // the timer until the cancel has drained it.
            delete poll_;
            poll_ = nullptr;
            cancelled_ = true;
            pgrest_task_cancel(task_);
            ArmTimer(10);
            return;
        }
        poll_->data = this;
        poll_fd_ = fd;
        open_handles_++;
    }
    uv_poll_start(poll_, events, OnSocket);
}

// The connection goes back to the pool (and to another task's poll handle)
// when the task is done with it: never leave ours registered meanwhile.
void TaskRun::StopSocket()
{
    if (poll_ != nullptr) {
        uv_close(reinterpret_cast<uv_handle_t *>(poll_), OnHandleClosed);
        poll_ = nullptr;
        poll_fd_ = -1;
    }
}

static Napi::Array HeaderList(Napi::Env env, const pgrest_response *resp)
{
    size_t count = pgrest_response_header_count(resp);
    Napi::Array list = Napi::Array::New(env, count * 2);
    for (size_t i = 0; i < count; i++) {
        const pgrest_header *h = pgrest_response_header(resp, i);
        list.Set(static_cast<uint32_t>(2 * i), Napi::String::New(env, h->name));
        list.Set(static_cast<uint32_t>(2 * i + 1), Napi::String::New(env, h->value));
    }
    return list;
}

void TaskRun::SendHead(bool with_body)
{
    head_sent_ = true;
    if (cancelled_)
        return; // the response of a cancelled task is not for the client
    Napi::HandleScope scope(env_);
    const pgrest_response *resp = pgrest_task_response(task_);
    if (resp == nullptr) {
        CallFromLoop(env_, cb_.on_head, async_,
                     {Napi::Number::New(env_, 500), env_.Null(), Napi::Array::New(env_, 0),
                      Napi::Buffer<char>::Copy(env_, "", 0)});
        return;
    }
    const char *reason = pgrest_response_reason(resp);
    napi_value body = env_.Undefined();
    if (with_body) {
        size_t len = 0;
        const char *bytes = pgrest_response_body(resp, &len);
        body = Napi::Buffer<char>::Copy(env_, bytes != nullptr ? bytes : "", len);
    }
    CallFromLoop(env_, cb_.on_head, async_,
                 {Napi::Number::New(env_, pgrest_response_status(resp)),
                  reason != nullptr ? Napi::Value(Napi::String::New(env_, reason))
                                    : Napi::Value(env_.Null()),
                  HeaderList(env_, resp), body});
}

// Hands buffered body bytes to JS until none are left (true: advance for
// more), JS asks to pause, or the body ends (false).
bool TaskRun::PumpBody()
{
    char buf[kBodyChunk];
    for (;;) {
        long n = pgrest_task_read_body(task_, buf, sizeof buf);
        if (n == 0)
            return true;
        if (n == PGREST_BODY_END || n == PGREST_BODY_FAILED) {
            Finish(n == PGREST_BODY_FAILED);
            return false;
        }
        if (cancelled_)
            continue;
        Napi::HandleScope scope(env_);
        Napi::Value more = CallFromLoop(env_, cb_.on_data, async_,
                                        {Napi::Buffer<char>::Copy(env_, buf, static_cast<size_t>(n))});
        if (more.IsBoolean() && !more.As<Napi::Boolean>().Value()) {
            paused_ = true; // backpressure: Resume() once the writable drains
            return false;
        }
    }
}

void TaskRun::Finish(bool failed)
{
    finished_ = true;
    owner_->Forget(id_);
    // Always told, so the host's promise settles; a cancelled run ends as a
    // failed one (the client is gone or must see the answer cut).
    Napi::HandleScope scope(env_);
    CallFromLoop(env_, cb_.on_end, async_, {Napi::Boolean::New(env_, failed || cancelled_)});
}

// Frees the run once libuv has let go of both handles.
void TaskRun::CloseHandles()
{
    StopSocket();
    if (timer_ != nullptr) {
        uv_close(reinterpret_cast<uv_handle_t *>(timer_), OnHandleClosed);
        timer_ = nullptr;
    }
    if (open_handles_ == 0)
        delete this;
}

void TaskRun::OnSocket(uv_poll_t *handle, int status, int events)
{
    (void)status, (void)events; // advancing tells the task what happened
    static_cast<TaskRun *>(handle->data)->Kick();
}

void TaskRun::OnTimer(uv_timer_t *handle)
{
    static_cast<TaskRun *>(handle->data)->Kick();
}

void TaskRun::OnHandleClosed(uv_handle_t *handle)
{
    TaskRun *run = static_cast<TaskRun *>(handle->data);
    if (handle->type == UV_POLL)
        delete reinterpret_cast<uv_poll_t *>(handle);
    else
        delete reinterpret_cast<uv_timer_t *>(handle);
    run->open_handles_--;
    if (run->finished_ && run->open_handles_ == 0 && !run->stepping_)
        delete run;
}
