// The Node addon over libpgrest's request engine (include/pgrest/pgrest.h).
// Everything runs on Node's event loop: a task's database socket is watched
// with a uv_poll_t, its timeout with a uv_timer_t, and the pool's wake-ups
// (which may come from any thread) reach the loop through one uv_async_t.
#ifndef PGREST_NODE_H
#define PGREST_NODE_H

#include <napi.h>
#include <uv.h>

#include <cstdint>
#include <mutex>
#include <unordered_map>
#include <vector>

extern "C" {
#include <pgrest/pgrest.h>
}

class TaskRun;

// A JS Error carrying PostgREST's fields (code, message, details, hint,
// status); index.js turns it into a PgrestError.
Napi::Error PgrestErrorFrom(Napi::Env env, const pgrest_error &err, const char *fallback);

// Calls a JS callback from a libuv callback: inside a handle scope and the
// task's async context (so promises and nextTick run after it), reporting
// an exception as uncaught instead of losing it.
Napi::Value CallFromLoop(Napi::Env env, const Napi::FunctionReference &fn,
                         Napi::AsyncContext &async, const std::vector<napi_value> &args);

class Context : public Napi::ObjectWrap<Context> {
public:
    static Napi::Function Define(Napi::Env env);
    explicit Context(const Napi::CallbackInfo &info);
    ~Context() override;

    pgrest_ctx *raw() const { return ctx_; }
    uv_loop_t *loop() const { return loop_; }

    // Called by libpgrest from any thread, with the pool's lock held: only
    // records the task and signals the loop.
    static void Wake(void *arg);
    void Adopt(TaskRun *run);
    void Forget(uint64_t id);

private:
    Napi::Value Set(const Napi::CallbackInfo &info);
    Napi::Value Get(const Napi::CallbackInfo &info);
    Napi::Value LoadSchema(const Napi::CallbackInfo &info);
    Napi::Value LoadSchemaAsync(const Napi::CallbackInfo &info);
    Napi::Value LoadSchemaFile(const Napi::CallbackInfo &info);
    Napi::Value SaveSchemaFile(const Napi::CallbackInfo &info);
    Napi::Value ReloadConfig(const Napi::CallbackInfo &info);
    Napi::Value StartListener(const Napi::CallbackInfo &info);
    Napi::Value StopListener(const Napi::CallbackInfo &info);
    Napi::Value Ready(const Napi::CallbackInfo &info);
    Napi::Value Metrics(const Napi::CallbackInfo &info);
    Napi::Value Close(const Napi::CallbackInfo &info);
    Napi::Value StartTask(const Napi::CallbackInfo &info);
    Napi::Value CancelTask(const Napi::CallbackInfo &info);
    Napi::Value ResumeTask(const Napi::CallbackInfo &info);
    Napi::Value WriteBody(const Napi::CallbackInfo &info);
    Napi::Value EndBody(const Napi::CallbackInfo &info);
    Napi::Value TaskCount(const Napi::CallbackInfo &info);

    pgrest_ctx *Open(Napi::Env env);
    TaskRun *Find(uint64_t id);
    static void OnWakeSignal(uv_async_t *handle);
    void RunWoken();
    void SetOption(Napi::Env env, const std::string &key, const std::string &value);

    pgrest_ctx *ctx_ = nullptr;
    uv_loop_t *loop_ = nullptr;
    uv_async_t *wake_signal_ = nullptr;
    std::mutex woken_lock_;
    bool woken_ = false;
    std::unordered_map<uint64_t, TaskRun *> live_;
    uint64_t next_id_ = 1;
};

// The arguments of one request, read from JS by Context::StartTask.
struct TaskCallbacks {
    Napi::FunctionReference on_head; // (status, reason, headers[], body|undefined)
    Napi::FunctionReference on_data; // (chunk) -> false to pause
    Napi::FunctionReference on_end;  // (failed)
    // () -- a request body in chunks: after a write answered "again", the
    // task wants its body again (write the same chunk once more)
    Napi::FunctionReference on_body_wanted;
};

// One request on the loop: its arena and task, the handles watching it,
// and the JS callbacks that receive the response.
class TaskRun {
public:
    TaskRun(Context *owner, Napi::Object owner_object, uint64_t id, pgrest_arena *arena,
            TaskCallbacks callbacks);
    bool Start(const pgrest_request *req);
    void Kick();   // advance as far as possible without blocking
    void Cancel(); // the client left: cancel, then drain to DONE
    void Resume(); // the host's writable drained: take more body
    // A request body in chunks (pgrest_request_body_follows): 0 taken, 1
    // not taken (backpressure: on_body_wanted comes once the task wants
    // it again), -1 the task is done with the body (answered early).
    int WriteBody(const char *data, size_t len);
    int EndBody();
    uint64_t id() const { return id_; }
    bool WaitsForWake() const;
    void Discard() { delete this; } // a run whose task never started
    static size_t Alive() { return alive_; } // runs not yet freed (leak checks)

private:
    ~TaskRun();
    void Step();
    void Wait(int wait_state);
    int BodyWritten(int rc);
    void ArmTimer(uint64_t ms);
    void WatchSocket(int fd, int events);
    void StopSocket();
    void SendHead(bool with_body);
    bool PumpBody(); // false: paused or finished
    void Finish(bool failed);
    void CloseHandles();
    static void OnSocket(uv_poll_t *handle, int status, int events);
    static void OnTimer(uv_timer_t *handle);
    static void OnHandleClosed(uv_handle_t *handle);

    Context *owner_;
    Napi::ObjectReference owner_ref_; // keeps the context alive while we run
    Napi::Env env_;
    Napi::AsyncContext async_;
    uint64_t id_;
    pgrest_arena *arena_;
    pgrest_task *task_ = nullptr;
    TaskCallbacks cb_;
    uv_poll_t *poll_ = nullptr;
    int poll_fd_ = -1;
    uv_timer_t *timer_ = nullptr;
    int open_handles_ = 0;
    bool head_sent_ = false;
    bool paused_ = false;
    bool body_waiting_ = false; // a write or the end answered PGREST_AGAIN
    bool cancelled_ = false;
    bool finished_ = false;
    bool stepping_ = false;
    bool kick_again_ = false;
    static size_t alive_; // the loop's thread only
};

#endif
