#!/usr/bin/env node
// Where libpgrest's header and library are, for binding.gyp:
//   node scripts/libpgrest.js include|libs|rpath
// PGREST_INCLUDEDIR + PGREST_LIBDIR win when set (a library built by hand);
// otherwise pkg-config's "pgrest" (the installed library, or the build
// tree with PKG_CONFIG_PATH=<build>/meson-uninstalled).
'use strict';
const { execFileSync } = require('node:child_process');

function fromEnvironment() {
  const inc = process.env.PGREST_INCLUDEDIR;
  const lib = process.env.PGREST_LIBDIR;
  if (!inc || !lib) return null;
  return { include: [inc], libdirs: [lib], libs: ['-L' + lib, '-lpgrest'] };
}

function pkgConfig(args) {
  return execFileSync('pkg-config', args.concat(['pgrest']), { encoding: 'utf8' })
    .trim().split(/\s+/).filter(Boolean);
}

function fromPkgConfig() {
  try {
    const include = pkgConfig(['--cflags-only-I']).map((f) => f.slice(2));
    const libs = pkgConfig(['--libs']);
    const libdirs = libs.filter((f) => f.startsWith('-L')).map((f) => f.slice(2));
    return { include, libdirs, libs };
  } catch (e) {
    return null;
  }
}

const found = fromEnvironment() || fromPkgConfig();
if (found === null) {
  process.stderr.write('pgrest: libpgrest not found: install it (pkg-config pgrest), ' +
    'set PKG_CONFIG_PATH=<build>/meson-uninstalled for a build tree, ' +
    'or set PGREST_INCLUDEDIR and PGREST_LIBDIR\n');
  process.exit(1);
}
const what = process.argv[2];
// The rpath lets the addon find a library outside the linker's paths
// (a build tree, a prefix under /usr/local or $HOME) without LD_LIBRARY_PATH.
const out = what === 'include' ? found.include
  : what === 'libs' ? found.libs
    : found.libdirs.map((d) => '-Wl,-rpath,' + d);
process.stdout.write(out.join(' ') + '\n');
