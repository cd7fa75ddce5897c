#include "pgrest_node.h"

static Napi::Object Init(Napi::Env env, Napi::Object exports)
{
    exports.Set("Context", Context::Define(env));
    exports.Set("version", Napi::String::New(env, pgrest_version()));
    exports.Set("postgrestVersion", Napi::String::New(env, PGREST_POSTGREST_VERSION));
    return exports;
}

NODE_API_MODULE(pgrest_node, Init)
