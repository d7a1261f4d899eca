#!/usr/bin/env bash
# podman-test.sh IMAGE.tar [BINARY]: run the image (an OCI layout tar from
# scripts/release/ociimage) in a real container engine, podman from Debian:
#   - `podman load` of the tarball;
#   - `podman run -i --rm IMAGE --demo` answers initialize, tools/list and a
#     tool call over stdio;
#   - `podman run -p 127.0.0.1:PORT:8080 IMAGE --demo --http 0.0.0.0:8080
#     --public-url ...` serves /healthz and /readyz on the published port and
#     stops with exit 0 on `podman stop`;
#   - the README's command for a cached grant (the credential folder mounted
#     read-only, run as the owner of its 0600 file) serves the resource server
#     double from the folder BINARY is in (or a fresh build of cmd/pdpptest);
#     without --user the image's nonroot user cannot read the file;
#   - the OCI package of packaging/registry/server.json, started with its
#     runtime and package arguments as a registry client would, serves too.
# Installs podman and runc with apt-get when they are missing and this is
# root on Debian; elsewhere without podman it skips, except under CI=true.
# Storage is a throwaway folder (vfs driver) and the engine settings are
# this script's own (CONTAINERS_CONF): runc, the cgroupfs manager and no
# default ulimits, which is what runs inside this project's machines.
set -euo pipefail
cd "$(dirname "$0")/../.."
tar=${1:?usage: podman-test.sh IMAGE.tar [BINARY]}
bin=${2:-}

if ! command -v podman >/dev/null || ! command -v runc >/dev/null; then
	if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
		echo "podman-test: installing podman and runc (apt-get)"
		apt-get update -qq
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq -o DPkg::Lock::Timeout=300 podman runc >/dev/null
	elif [ "${CI:-}" = true ]; then
		echo "podman-test: podman and runc are needed (apt-get install podman runc)"; exit 1
	else
		echo "podman-test: skipped: podman or runc is not installed (apt-get install podman runc)"; exit 0
	fi
fi

work=$(mktemp -d)
ctr=pdpp-mcp-imagetest-$$
rs_pid=
pm() { timeout 120 podman --root "$work/storage" --runroot "$work/run" --storage-driver vfs "$@"; }
cleanup() {
	# Every container of this throwaway storage, also one a timed-out
	# session left behind.
	pm rm -a -f -t 0 >/dev/null 2>&1 || true
	if [ -n "$rs_pid" ]; then kill "$rs_pid" 2>/dev/null || true; fi
	pm rmi -a -f >/dev/null 2>&1 || true
	rm -rf "$work"
}
trap cleanup EXIT
cat >"$work/containers.conf" <<'EOF'
[containers]
default_ulimits = []

[engine]
runtime = "runc"
cgroup_manager = "cgroupfs"
events_logger = "file"
EOF
export CONTAINERS_CONF=$work/containers.conf
podman --version

image=$(pm load -q -i "$tar" | sed -n 's/^Loaded image: *//p' | head -1)
[ -n "$image" ] || { echo "podman-test: podman load named no image"; exit 1; }
echo "podman-test: loaded $image"
[ "$(pm image inspect --format '{{.Config.User}}' "$image")" = 65532:65532 ] || { echo "podman-test: the image does not run as 65532:65532"; exit 1; }
run=(podman --root "$work/storage" --runroot "$work/run" --storage-driver vfs run)

# Stdio.
SMOKE_TIMEOUT_MS=60000 node scripts/release/mcp-smoke.mjs "${run[@]}" -i --rm "$image" --demo

# Hosted, on a published loopback port.
port=$(node -e 'const s=require("net").createServer().listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})')
pm run -d --name "$ctr" -p "127.0.0.1:$port:8080" "$image" --demo --http 0.0.0.0:8080 --public-url "http://127.0.0.1:$port" >/dev/null
ok=
for _ in $(seq 1 100); do
	if curl -fsS -m 2 "http://127.0.0.1:$port/healthz" >/dev/null 2>&1; then ok=1; break; fi
	sleep 0.1
done
[ -n "$ok" ] || { echo "podman-test: /healthz did not answer on port $port"; pm logs "$ctr"; exit 1; }
curl -fsS -m 5 "http://127.0.0.1:$port/healthz"; echo
curl -fsS -m 5 "http://127.0.0.1:$port/readyz"; echo
pm stop -t 20 "$ctr" >/dev/null
code=$(pm inspect --format '{{.State.ExitCode}}' "$ctr")
[ "$code" = 0 ] || { echo "podman-test: hosted container exited $code on podman stop, want 0"; pm logs "$ctr"; exit 1; }
pm rm "$ctr" >/dev/null

if [ "$(id -u)" != 0 ]; then
	# Rootless podman maps --user into a range of subordinate ids, so the
	# README's command for a cached grant is checked as root only.
	echo "podman-test: the image runs in podman (stdio, published port); the credential mount is checked as root only"
	exit 0
fi

# A cached grant, mounted as the README says. The credential belongs to a
# user who is neither root nor the image's nonroot user, as on a laptop.
pdpptest=$(dirname "${bin:-.}")/pdpptest
if [ -z "$bin" ] || [ ! -x "$pdpptest" ]; then
	pdpptest=$work/pdpptest
	CGO_ENABLED=0 go build -trimpath -o "$pdpptest" ./cmd/pdpptest
fi
"$pdpptest" --dataset demo --addr 127.0.0.1:0 >"$work/rs.out" 2>"$work/rs.log" &
rs_pid=$!
for _ in $(seq 1 100); do
	grep -q '^client ' "$work/rs.out" && break
	sleep 0.1
done
rs_url=$(sed -n 's/^url  *//p' "$work/rs.out")
token=$(sed -n 's/^client  *//p' "$work/rs.out")
[ -n "$rs_url" ] && [ -n "$token" ] || { echo "podman-test: the resource server double did not start"; cat "$work/rs.out" "$work/rs.log"; exit 1; }
cache=$work/dot-pdpp
mkdir -p "$cache/clients"
printf '{"provider_url":"%s","scope":"pdpp:read","credential":{"access_token":"%s","token_type":"Bearer","expires_at":"2099-01-01T00:00:00.000Z"}}\n' \
	"$rs_url" "$token" >"$cache/clients/$(sed 's|^http://||; s|[^A-Za-z0-9.-]|_|g' <<<"$rs_url").json"
chmod 700 "$cache" "$cache/clients"
chmod 600 "$cache"/clients/*.json
owner=1000:1000
chown -R "$owner" "$cache"
# --network host: the double listens on the host's loopback.
SMOKE_TIMEOUT_MS=60000 node scripts/release/mcp-smoke.mjs "${run[@]}" -i --rm --network host \
	--user "$owner" -v "$cache:/pdpp:ro" "$image" --provider-url "$rs_url" --cache-root /pdpp
# The same, as an MCP Registry client starts the OCI package of
# packaging/registry/server.json (its runtime and package arguments).
node scripts/release/registry-run.mjs "$image" uid_gid="$owner" cache_dir="$cache" --provider-url="$rs_url" \
	-- "${run[@]}" --network host
set +e
pm run -i --rm --network host -v "$cache:/pdpp:ro" "$image" --provider-url "$rs_url" --cache-root /pdpp </dev/null 2>"$work/nouser.log"
code=$?
set -e
if [ "$code" = 0 ] || ! grep -q '/pdpp/clients/' "$work/nouser.log"; then
	echo "podman-test: without --user the nonroot user read a 0600 file it does not own (exit $code):"; cat "$work/nouser.log"; exit 1
fi
echo "podman-test: the image runs in podman (stdio, published port, credential mount with --user)"
