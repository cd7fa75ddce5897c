#!/usr/bin/env python3
"""Print the #includes in lib/ that run from a lower layer to a higher one.

The layers, lowest first, are PostgREST's stages and what surrounds them
(docs/ARCHITECTURE.md): util; parse and schema; auth and config; plan;
sql and openapi; exec; engine. A stage may include its own folder and any
lower layer; an include of a higher layer's header is counted (a pure
stage that sees the engine, say). Headers of one folder are that folder's
layer. engine/stage_view.h is the engine's narrow view for the stages (the
request's configuration snapshot and the schema cache): counted apart.

Usage: scripts/layer_includes.py [LIB_DIR]   (default: lib next to scripts/)
Exit status 0 always: this is a report, not a check.
"""
import os
import re
import sys

LAYERS = {
    'util': 0,
    'parse': 1, 'schema': 1,
    'auth': 2, 'config': 2,
    'plan': 3,
    'sql': 4, 'openapi': 4,
    'exec': 5,
    'engine': 6,
}
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"/]+)/([^"]+)"', re.M)


def main(argv):
    lib = argv[1] if len(argv) > 1 else os.path.join(os.path.dirname(__file__), '..', 'lib')
    upward, view = [], 0
    for folder in sorted(LAYERS):
        root = os.path.join(lib, folder)
        if not os.path.isdir(root):
            continue
        for name in sorted(os.listdir(root)):
            if not name.endswith(('.c', '.h')):
                continue
            with open(os.path.join(root, name), encoding='utf-8', errors='replace') as f:
                text = f.read()
            for target, header in INCLUDE.findall(text):
                if LAYERS.get(target, -1) <= LAYERS[folder]:
                    continue
                if (target, header) == ('engine', 'stage_view.h'):
                    view += 1
                else:
                    upward.append('%s/%s -> %s/%s' % (folder, name, target, header))
    for line in upward:
        print(line)
    print('%d include(s) from a lower layer to a higher one, and %d of the stages\' view '
          '(engine/stage_view.h)' % (len(upward), view))
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
