#!/usr/bin/env bash
# Installs the Go tools of the integration tests into $(go env GOPATH)/bin (~/go/bin): today
# h2spec, the HTTP/2 conformance suite (https://github.com/summerwind/h2spec) that
# tests/integration/test_http2_serve.py runs against `hammer serve`. Nothing happens when
# h2spec is already on PATH or in ~/go/bin. Go comes from /usr/local/go/bin or PATH; the module
# proxy serves the module (Go modules only).
#
# Usage: scripts/go-deps.sh
set -euo pipefail
version="v2.2.1+incompatible"  # no go.mod upstream: the proxy names it so
gobin="$HOME/go/bin"
if command -v h2spec >/dev/null 2>&1 || [ -x "$gobin/h2spec" ]; then
  exit 0
fi
go="$(command -v go || true)"
[ -n "$go" ] || go=/usr/local/go/bin/go
if [ ! -x "$go" ]; then
  echo "go-deps: go not found (install Go, or put h2spec on PATH)" >&2
  exit 1
fi
echo "go-deps: installing h2spec $version into $gobin" >&2
GOBIN="$gobin" "$go" install "github.com/summerwind/h2spec/cmd/h2spec@$version"
