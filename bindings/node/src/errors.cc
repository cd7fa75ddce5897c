#include "pgrest_node.h"

static void SetIfPresent(Napi::Error &error, const char *name, const char *value)
{
    Napi::Env env = error.Env();
    error.Set(name, value != nullptr ? Napi::Value(Napi::String::New(env, value))
                                     : Napi::Value(env.Null()));
}

Napi::Error PgrestErrorFrom(Napi::Env env, const pgrest_error &err, const char *fallback)
{
    const char *message = err.message != nullptr ? err.message : fallback;
    Napi::Error error = Napi::Error::New(env, message);
    error.Set("pgrest", Napi::Boolean::New(env, true));
    SetIfPresent(error, "code", err.code);
    SetIfPresent(error, "details", err.details);
    SetIfPresent(error, "hint", err.hint);
    error.Set("status", Napi::Number::New(env, err.http_status));
    return error;
}

Napi::Value CallFromLoop(Napi::Env env, const Napi::FunctionReference &fn,
                         Napi::AsyncContext &async, const std::vector<napi_value> &args)
{
    try {
        return fn.MakeCallback(env.Global(), args, async);
    } catch (const Napi::Error &e) {
        // No JS frame above a libuv callback to throw into: make it an
        // uncaught exception, as an exception in an 'data' listener would be.
        napi_fatal_exception(env, e.Value());
        return env.Undefined();
    }
}
