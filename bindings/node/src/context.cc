// pgrest.Context: a pgrest_ctx configured by PostgREST's option names, its
// schema cache, and the requests it runs on the loop.
#include "pgrest_node.h"

#include <string>

Napi::Function Context::Define(Napi::Env env)
{
    return DefineClass(env, "Context",
                       {InstanceMethod("set", &Context::Set),
                        InstanceMethod("get", &Context::Get),
                        InstanceMethod("loadSchema", &Context::LoadSchema),
                        InstanceMethod("loadSchemaAsync", &Context::LoadSchemaAsync),
                        InstanceMethod("loadSchemaFile", &Context::LoadSchemaFile),
                        InstanceMethod("saveSchemaFile", &Context::SaveSchemaFile),
                        InstanceMethod("reloadConfig", &Context::ReloadConfig),
                        InstanceMethod("startListener", &Context::StartListener),
                        InstanceMethod("stopListener", &Context::StopListener),
                        InstanceMethod("ready", &Context::Ready),
                        InstanceMethod("metrics", &Context::Metrics),
                        InstanceMethod("close", &Context::Close),
                        InstanceMethod("_start", &Context::StartTask),
                        InstanceMethod("_cancel", &Context::CancelTask),
                        InstanceMethod("_resume", &Context::ResumeTask),
                        InstanceMethod("_writeBody", &Context::WriteBody),
                        InstanceMethod("_endBody", &Context::EndBody),
                        InstanceMethod("_taskCount", &Context::TaskCount)});
}

// new Context({ 'db-uri': ..., 'db-schemas': ... }): every option through
// pgrest_ctx_set, so a bad one throws PostgREST's config error.
Context::Context(const Napi::CallbackInfo &info) : Napi::ObjectWrap<Context>(info)
{
    Napi::Env env = info.Env();
    ctx_ = pgrest_ctx_new();
    if (ctx_ == nullptr)
        throw Napi::Error::New(env, "pgrest: out of memory");
    if (napi_get_uv_event_loop(env, &loop_) != napi_ok)
        throw Napi::Error::New(env, "pgrest: no event loop");
    wake_signal_ = new uv_async_t;
    uv_async_init(loop_, wake_signal_, OnWakeSignal);
    wake_signal_->data = this;
    uv_unref(reinterpret_cast<uv_handle_t *>(wake_signal_)); // tasks keep the loop alive, not this
    if (info.Length() > 0 && info[0].IsObject()) {
        Napi::Object options = info[0].As<Napi::Object>();
        Napi::Array keys = options.GetPropertyNames();
        for (uint32_t i = 0; i < keys.Length(); i++) {
            std::string key = keys.Get(i).ToString();
            SetOption(env, key, options.Get(key).ToString());
        }
    }
}

static void FreeAsync(uv_handle_t *handle)
{
    delete reinterpret_cast<uv_async_t *>(handle);
}

Context::~Context()
{
    // Running tasks hold a reference to this object, so none is left here.
    pgrest_ctx_free(ctx_);
    if (wake_signal_ != nullptr)
        uv_close(reinterpret_cast<uv_handle_t *>(wake_signal_), FreeAsync);
}

pgrest_ctx *Context::Open(Napi::Env env)
{
    if (ctx_ == nullptr)
        throw Napi::Error::New(env, "pgrest: the context is closed");
    return ctx_;
}

void Context::SetOption(Napi::Env env, const std::string &key, const std::string &value)
{
    pgrest_error err{};
    if (pgrest_ctx_set(Open(env), key.c_str(), value.c_str(), &err) != PGREST_OK)
        throw PgrestErrorFrom(env, err, "invalid configuration");
}

Napi::Value Context::Set(const Napi::CallbackInfo &info)
{
    SetOption(info.Env(), info[0].ToString(), info[1].ToString());
    return info.Env().Undefined();
}

Napi::Value Context::Get(const Napi::CallbackInfo &info)
{
    std::string key = info[0].ToString();
    const char *value = pgrest_ctx_get(Open(info.Env()), key.c_str());
    return value != nullptr ? Napi::Value(Napi::String::New(info.Env(), value))
                            : Napi::Value(info.Env().Null());
}

// Blocks the calling thread on PostgreSQL: for start-up, before serving.
Napi::Value Context::LoadSchema(const Napi::CallbackInfo &info)
{
    pgrest_error err{};
    if (pgrest_ctx_load_schema(Open(info.Env()), &err) != PGREST_OK)
        throw PgrestErrorFrom(info.Env(), err, "schema cache load failed");
    return info.Env().Undefined();
}

// The same on a worker thread (pgrest_ctx_load_schema is thread-safe), for
// a reload while the loop serves requests.
class SchemaLoad : public Napi::AsyncWorker {
public:
    SchemaLoad(Napi::Env env, pgrest_ctx *ctx, Napi::Object keep_alive)
        : Napi::AsyncWorker(env), ctx_(ctx), deferred_(Napi::Promise::Deferred::New(env)),
          keep_alive_(Napi::Persistent(keep_alive))
    {
    }
    Napi::Promise Promise() { return deferred_.Promise(); }
    void Execute() override { status_ = pgrest_ctx_load_schema(ctx_, &err_); }
    void OnOK() override
    {
        if (status_ == PGREST_OK)
            deferred_.Resolve(Env().Undefined());
        else
            deferred_.Reject(PgrestErrorFrom(Env(), err_, "schema cache load failed").Value());
    }

private:
    pgrest_ctx *ctx_;
    Napi::Promise::Deferred deferred_;
    Napi::ObjectReference keep_alive_;
    pgrest_error err_{};
    int status_ = PGREST_OK;
};

Napi::Value Context::LoadSchemaAsync(const Napi::CallbackInfo &info)
{
    SchemaLoad *load = new SchemaLoad(info.Env(), Open(info.Env()), info.This().As<Napi::Object>());
    Napi::Promise promise = load->Promise();
    load->Queue();
    return promise;
}

Napi::Value Context::LoadSchemaFile(const Napi::CallbackInfo &info)
{
    pgrest_error err{};
    std::string path = info[0].ToString();
    if (pgrest_ctx_load_schema_file(Open(info.Env()), path.c_str(), &err) != PGREST_OK)
        throw PgrestErrorFrom(info.Env(), err, "schema snapshot load failed");
    return info.Env().Undefined();
}

Napi::Value Context::SaveSchemaFile(const Napi::CallbackInfo &info)
{
    pgrest_error err{};
    std::string path = info[0].ToString();
    if (pgrest_ctx_save_schema_file(Open(info.Env()), path.c_str(), &err) != PGREST_OK)
        throw PgrestErrorFrom(info.Env(), err, "schema snapshot write failed");
    return info.Env().Undefined();
}

// reloadConfig(options?): options replace every option set before
// (PostgREST's reload); without them the same options are read again,
// with the in-database settings on top.
Napi::Value Context::ReloadConfig(const Napi::CallbackInfo &info)
{
    pgrest_error err{};
    std::vector<std::string> keys, values;
    bool replace = info.Length() > 0 && info[0].IsObject();
    if (replace) {
        Napi::Object options = info[0].As<Napi::Object>();
        Napi::Array names = options.GetPropertyNames();
        for (uint32_t i = 0; i < names.Length(); i++) {
            keys.push_back(names.Get(i).ToString());
            values.push_back(options.Get(keys.back()).ToString());
        }
    }
    std::vector<const char *> key_ptrs, value_ptrs;
    for (size_t i = 0; i < keys.size(); i++) {
        key_ptrs.push_back(keys[i].c_str());
        value_ptrs.push_back(values[i].c_str());
    }
    int rc = pgrest_ctx_reload_config(Open(info.Env()), replace ? key_ptrs.data() : nullptr,
                                      replace ? value_ptrs.data() : nullptr, keys.size(), &err);
    if (rc != PGREST_OK)
        throw PgrestErrorFrom(info.Env(), err, "configuration reload failed");
    return info.Env().Undefined();
}

// The library's own thread LISTENs and reloads the schema cache on NOTIFY;
// nothing of it runs on the loop.
Napi::Value Context::StartListener(const Napi::CallbackInfo &info)
{
    pgrest_error err{};
    if (pgrest_ctx_start_listener(Open(info.Env()), nullptr, nullptr, &err) != PGREST_OK)
        throw PgrestErrorFrom(info.Env(), err, "listener start failed");
    return info.Env().Undefined();
}

Napi::Value Context::StopListener(const Napi::CallbackInfo &info)
{
    pgrest_ctx_stop_listener(Open(info.Env()));
    return info.Env().Undefined();
}

Napi::Value Context::Ready(const Napi::CallbackInfo &info)
{
    return Napi::Boolean::New(info.Env(), pgrest_ctx_ready(Open(info.Env())) != 0);
}

Napi::Value Context::Metrics(const Napi::CallbackInfo &info)
{
    pgrest_arena *arena = pgrest_arena_new(0);
    const char *text = arena != nullptr ? pgrest_ctx_metrics(Open(info.Env()), arena) : nullptr;
    Napi::Value out = text != nullptr ? Napi::Value(Napi::String::New(info.Env(), text))
                                      : Napi::Value(info.Env().Null());
    pgrest_arena_free(arena);
    return out;
}

Napi::Value Context::Close(const Napi::CallbackInfo &info)
{
    if (!live_.empty())
        throw Napi::Error::New(info.Env(), "pgrest: requests are still running on this context");
    pgrest_ctx_free(ctx_);
    ctx_ = nullptr;
    return info.Env().Undefined();
}

// Called by the pool from any thread, with its lock held, when a queued
// task got a connection or a cancel request was delivered. It carries the
// context, not the task: the task may end at the same moment on the loop.
void Context::Wake(void *arg)
{
    Context *self = static_cast<Context *>(arg);
    {
        std::lock_guard<std::mutex> guard(self->woken_lock_);
        self->woken_ = true;
    }
    uv_async_send(self->wake_signal_);
}

void Context::Adopt(TaskRun *run)
{
    live_[run->id()] = run;
}

void Context::Forget(uint64_t id)
{
    live_.erase(id);
}

TaskRun *Context::Find(uint64_t id)
{
    auto it = live_.find(id);
    return it == live_.end() ? nullptr : it->second;
}

void Context::OnWakeSignal(uv_async_t *handle)
{
    static_cast<Context *>(handle->data)->RunWoken();
}

// Advances every task that waits for the pool or for its cancel; advancing
// a task that was not the one woken is harmless.
void Context::RunWoken()
{
    {
        std::lock_guard<std::mutex> guard(woken_lock_);
        if (!woken_)
            return;
        woken_ = false;
    }
    std::vector<uint64_t> ids;
    for (const auto &entry : live_)
        if (entry.second->WaitsForWake())
            ids.push_back(entry.first);
    for (uint64_t id : ids) {
        TaskRun *run = Find(id);
        if (run != nullptr)
            run->Kick();
    }
}

static std::string OptionalString(const Napi::Value &v, bool *present)
{
    *present = !v.IsNull() && !v.IsUndefined();
    return *present ? std::string(v.ToString()) : std::string();
}

// The host's verified identity (identity option of handler()) instead of
// the Authorization header: pgrest_auth_supply, attached to the request.
static void SupplyIdentity(pgrest_ctx *ctx, pgrest_arena *arena, pgrest_request *req,
                           const Napi::Object &identity)
{
    bool has_role = false, has_claims = false;
    std::string role = OptionalString(identity.Get("role"), &has_role);
    std::string claims = OptionalString(identity.Get("claims"), &has_claims);
    pgrest_auth *auth = nullptr;
    pgrest_error err{};
    pgrest_auth_supply(ctx, arena, has_role ? role.c_str() : nullptr,
                       has_claims ? claims.c_str() : nullptr, &auth, &err);
    // A refused identity is attached too: the task answers with its error.
    if (auth != nullptr)
        pgrest_request_set_auth(req, auth);
}

static pgrest_request *BuildRequest(pgrest_arena *arena, const Napi::CallbackInfo &info)
{
    std::string method = info[0].ToString();
    std::string path = info[1].ToString();
    bool has_query = false;
    std::string query = OptionalString(info[2], &has_query);
    pgrest_request *req =
        pgrest_request_new(arena, method.c_str(), path.c_str(), has_query ? query.c_str() : nullptr);
    if (req == nullptr)
        return nullptr;
    Napi::Array headers = info[3].As<Napi::Array>(); // node's rawHeaders: name, value, ...
    for (uint32_t i = 0; i + 1 < headers.Length(); i += 2) {
        std::string name = headers.Get(i).ToString();
        std::string value = headers.Get(i + 1).ToString();
        pgrest_request_add_header_n(req, name.c_str(), value.data(), value.size());
    }
    if (info[4].IsBuffer()) {
        Napi::Buffer<char> body = info[4].As<Napi::Buffer<char>>();
        pgrest_request_set_body(req, body.Data(), body.Length());
    }
    double threshold = info[6].IsNumber() ? info[6].As<Napi::Number>().DoubleValue() : -1;
    if (threshold >= 0)
        pgrest_request_allow_streaming(req, static_cast<size_t>(threshold));
    // the body comes in chunks (_writeBody, _endBody); past info[11] bytes
    // (>= 0; 0: the library's default) a bulk POST streams into PostgreSQL
    if (info[10].ToBoolean()) {
        pgrest_request_body_follows(req);
        double body_threshold = info[11].IsNumber() ? info[11].As<Napi::Number>().DoubleValue() : -1;
        if (body_threshold >= 0)
            pgrest_request_allow_streamed_body(req, static_cast<size_t>(body_threshold));
    }
    return req;
}

// _start(method, path, query, rawHeaders, body, identity, streamThreshold,
//        onHead, onData, onEnd[, bodyFollows, streamBodyThreshold, onBodyWanted])
//   -> task id
Napi::Value Context::StartTask(const Napi::CallbackInfo &info)
{
    Napi::Env env = info.Env();
    pgrest_ctx *ctx = Open(env);
    pgrest_arena *arena = pgrest_arena_new(0);
    pgrest_request *req = arena != nullptr ? BuildRequest(arena, info) : nullptr;
    if (req == nullptr) {
        pgrest_arena_free(arena);
        throw Napi::Error::New(env, "pgrest: out of memory");
    }
    if (info[5].IsObject())
        SupplyIdentity(ctx, arena, req, info[5].As<Napi::Object>());
    TaskCallbacks callbacks;
    callbacks.on_head = Napi::Persistent(info[7].As<Napi::Function>());
    callbacks.on_data = Napi::Persistent(info[8].As<Napi::Function>());
    callbacks.on_end = Napi::Persistent(info[9].As<Napi::Function>());
    if (info[12].IsFunction())
        callbacks.on_body_wanted = Napi::Persistent(info[12].As<Napi::Function>());
    uint64_t id = next_id_++;
    TaskRun *run = new TaskRun(this, info.This().As<Napi::Object>(), id, arena, std::move(callbacks));
    if (!run->Start(req)) {
        run->Discard();
        throw Napi::Error::New(env, "pgrest: out of memory");
    }
    Adopt(run);
    run->Kick();
    return Napi::Number::New(env, static_cast<double>(id));
}

static uint64_t TaskId(const Napi::CallbackInfo &info)
{
    return static_cast<uint64_t>(info[0].As<Napi::Number>().DoubleValue());
}

Napi::Value Context::CancelTask(const Napi::CallbackInfo &info)
{
    TaskRun *run = Find(TaskId(info));
    if (run != nullptr)
        run->Cancel();
    return info.Env().Undefined();
}

Napi::Value Context::ResumeTask(const Napi::CallbackInfo &info)
{
    TaskRun *run = Find(TaskId(info));
    if (run != nullptr)
        run->Resume();
    return info.Env().Undefined();
}

// _writeBody(id, buffer) / _endBody(id) -> 0 taken, 1 again (wait for
// onBodyWanted, then the same call again), -1 the task no longer takes a
// body (answered, cancelled, unknown)
Napi::Value Context::WriteBody(const Napi::CallbackInfo &info)
{
    TaskRun *run = Find(TaskId(info));
    int rc = -1;
    if (run != nullptr && info[1].IsBuffer()) {
        Napi::Buffer<char> chunk = info[1].As<Napi::Buffer<char>>();
        rc = run->WriteBody(chunk.Data(), chunk.Length());
    }
    return Napi::Number::New(info.Env(), rc);
}

Napi::Value Context::EndBody(const Napi::CallbackInfo &info)
{
    TaskRun *run = Find(TaskId(info));
    return Napi::Number::New(info.Env(), run != nullptr ? run->EndBody() : -1);
}

// { live: tasks running on this context, alive: runs of any context not
// yet freed } -- for the tests' leak checks.
Napi::Value Context::TaskCount(const Napi::CallbackInfo &info)
{
    Napi::Object counts = Napi::Object::New(info.Env());
    counts.Set("live", Napi::Number::New(info.Env(), static_cast<double>(live_.size())));
    counts.Set("alive", Napi::Number::New(info.Env(), static_cast<double>(TaskRun::Alive())));
    return counts;
}
