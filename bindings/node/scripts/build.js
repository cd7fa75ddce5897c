#!/usr/bin/env node
// npm's install step: node-gyp with the Node headers installed on this
// machine (nodesource's or Debian's libnode-dev under <prefix>/include/node),
// never downloaded. Fails with a clear message when there are none.
'use strict';
const fs = require('node:fs');
const path = require('node:path');
const { spawnSync } = require('node:child_process');

function nodeHeaderPrefix() {
  const candidates = [process.env.npm_config_nodedir,
    path.resolve(path.dirname(process.execPath), '..'), '/usr', '/usr/local'];
  for (const prefix of candidates) {
    if (prefix && fs.existsSync(path.join(prefix, 'include', 'node', 'node_api.h'))) return prefix;
  }
  return null;
}

// npm ships node-gyp inside itself; Debian's node-gyp package puts one on PATH.
function nodeGypCommand() {
  const npmCli = process.env.npm_execpath;
  if (npmCli) {
    const bundled = path.join(path.dirname(npmCli), '..', 'node_modules', 'node-gyp', 'bin', 'node-gyp.js');
    if (fs.existsSync(bundled)) return [process.execPath, bundled];
  }
  for (const dir of (process.env.PATH || '').split(path.delimiter)) {
    const candidate = path.join(dir, 'node-gyp');
    if (fs.existsSync(candidate)) return [candidate];
  }
  return null;
}

const prefix = nodeHeaderPrefix();
if (prefix === null) {
  console.error('pgrest: no Node headers (node_api.h) found: install libnode-dev ' +
    '(Debian) or a Node with its headers, or set npm_config_nodedir');
  process.exit(1);
}
const gyp = nodeGypCommand();
if (gyp === null) {
  console.error('pgrest: node-gyp not found: install npm or node-gyp');
  process.exit(1);
}
const r = spawnSync(gyp[0], gyp.slice(1).concat(['rebuild', '--nodedir=' + prefix]),
  { stdio: 'inherit', cwd: path.join(__dirname, '..') });
process.exit(r.status === null ? 1 : r.status);
