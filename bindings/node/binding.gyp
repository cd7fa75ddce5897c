{
  "targets": [{
    "target_name": "pgrest_node",
    "sources": ["src/addon.cc", "src/context.cc", "src/task_run.cc", "src/errors.cc"],
    "include_dirs": [
      "<!(node -p \"require('node-addon-api').include_dir\")",
      "<!@(node scripts/libpgrest.js include)"
    ],
    "libraries": ["<!@(node scripts/libpgrest.js libs)"],
    "ldflags": ["<!@(node scripts/libpgrest.js rpath)"],
    "defines": ["NAPI_VERSION=8", "NAPI_CPP_EXCEPTIONS"],
    "cflags!": ["-fno-exceptions"],
    "cflags_cc!": ["-fno-exceptions", "-std=gnu++17"],
    "cflags_cc": ["-std=c++17", "-fexceptions", "-Wall", "-Wextra"]
  }]
}
