#!/usr/bin/env bash
# Installs the Go tools of the integration tests into $(go env GOPATH)/bin (~/go/bin):
#   h2spec     the HTTP/2 conformance suite (https://github.com/summerwind/h2spec) that
#              tests/integration/test_http2_serve.py runs against `hammer serve`;
#   toxiproxy  the fault-injecting TCP proxy (https://github.com/Shopify/toxiproxy) of
#              tests/integration/test_faults_toxiproxy.py; its server binary is named `server`.
# A tool already installed (h2spec on PATH or in ~/go/bin; ~/go/bin/server) is left alone. Go
# comes from /usr/local/go/bin or PATH; the module proxy serves the modules (Go modules only).
#
# Usage: scripts/go-deps.sh
set -euo pipefail
h2spec_version="v2.2.1+incompatible"  # no go.mod upstream: the proxy names it so
toxiproxy_version="v2.5.0"
gobin="$HOME/go/bin"

need_h2spec=1
if command -v h2spec >/dev/null 2>&1 || [ -x "$gobin/h2spec" ]; then
  need_h2spec=0
fi
need_toxiproxy=1
if [ -x "$gobin/server" ]; then
  need_toxiproxy=0
fi
if [ "$need_h2spec" = 0 ] && [ "$need_toxiproxy" = 0 ]; then
  exit 0
fi

go="$(command -v go || true)"
[ -n "$go" ] || go=/usr/local/go/bin/go
if [ ! -x "$go" ]; then
  echo "go-deps: go not found (install Go, or put h2spec and toxiproxy's server in $gobin)" >&2
  exit 1
fi
if [ "$need_h2spec" = 1 ]; then
  echo "go-deps: installing h2spec $h2spec_version into $gobin" >&2
  GOBIN="$gobin" "$go" install "github.com/summerwind/h2spec/cmd/h2spec@$h2spec_version"
fi
if [ "$need_toxiproxy" = 1 ]; then
  echo "go-deps: installing toxiproxy $toxiproxy_version (server) into $gobin" >&2
  GOBIN="$gobin" "$go" install "github.com/Shopify/toxiproxy/v2/cmd/server@$toxiproxy_version"
fi
