#!/usr/bin/env bash
# Makes the Debian 12 base image the CPU image builds on (docker/Dockerfile), without
# a container registry: debootstrap --variant=minbase bookworm from the Debian mirror
# apt already uses on this host, imported into Docker as tally/debian:12.
#   scripts/docker_base_image.sh            makes it unless the image exists
#   scripts/docker_base_image.sh --force    makes it again
# TALLY_BASE_IMAGE names the image (default tally/debian:12); TALLY_DEBIAN_MIRROR
# overrides the mirror. Needs root (debootstrap), debootstrap and a running dockerd.
# Where Docker Hub is reachable, `--build-arg BASE_IMAGE=debian:12` skips all this.
set -euo pipefail

image=${TALLY_BASE_IMAGE:-tally/debian:12}
force=0
case "${1:-}" in
  "") ;;
  --force) force=1 ;;
  -h|--help) sed -n '2,8p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
  *) echo "docker_base_image: unknown argument '$1' (see --help)" >&2; exit 2 ;;
esac

if ((!force)) && docker image inspect "$image" >/dev/null 2>&1; then
  echo "docker_base_image: $image exists"
  exit 0
fi
command -v debootstrap >/dev/null ||
  { echo "docker_base_image: debootstrap is not installed (scripts/setup.sh --test installs it)" >&2; exit 1; }
[ "$(id -u)" -eq 0 ] || { echo "docker_base_image: debootstrap needs root" >&2; exit 1; }

# The first Debian mirror serving bookworm in apt's sources: one-line (sources.list) or
# deb822 (*.sources) format. The image then installs from the same mirror as the host.
mirror_from_apt() {
  local f
  for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
    [ -r "$f" ] || continue
    awk '$1 == "deb" && $0 ~ / bookworm / { for (i = 2; i <= NF; i++) if ($i ~ /^https?:/) { print $i; exit } }' "$f"
  done
  for f in /etc/apt/sources.list.d/*.sources; do
    [ -r "$f" ] || continue
    # One stanza per blank-line-separated paragraph; a stanza whose Suites has bookworm.
    awk 'BEGIN { RS = ""; FS = "\n" }
         { uri = ""; suite = 0
           for (i = 1; i <= NF; i++) {
             if ($i ~ /^URIs:/) { split($i, w, /[ \t]+/); uri = w[2] }
             if ($i ~ /^Suites:/ && $i ~ /[ \t]bookworm([ \t]|$)/) suite = 1
           }
           if (suite && uri != "") { print uri; exit } }' "$f"
  done
}
mirror=${TALLY_DEBIAN_MIRROR:-$(mirror_from_apt | head -n 1)}
mirror=${mirror:-http://deb.debian.org/debian}

root=$(mktemp -d /tmp/tally-debootstrap.XXXXXX)
trap 'rm -rf "$root"' EXIT
echo "docker_base_image: debootstrap --variant=minbase bookworm from $mirror"
start=$SECONDS
keyring=/usr/share/keyrings/debian-archive-keyring.gpg
[ -r "$keyring" ] && keyring_arg=("--keyring=$keyring") || keyring_arg=()
# The host's package cache spares downloading what the host already fetched.
debootstrap --variant=minbase "${keyring_arg[@]}" --cache-dir=/var/cache/apt/archives \
  bookworm "$root" "$mirror" >"$root.log" 2>&1 ||
  { tail -n 20 "$root.log" >&2; echo "docker_base_image: debootstrap failed (log: $root.log)" >&2; exit 1; }
rm -f "$root.log"

# apt in the image uses the same mirror; no package lists or downloaded debs are kept.
printf 'deb %s bookworm main\ndeb %s bookworm-updates main\n' "$mirror" "$mirror" >"$root/etc/apt/sources.list"
# A snapshot mirror serves Release files past their Valid-Until date; where the host's apt
# is told to accept them, so is the image's.
grep -l -s 'Check-Valid-Until' /etc/apt/apt.conf.d/* | xargs -r cp -t "$root/etc/apt/apt.conf.d/"
rm -rf "$root"/var/lib/apt/lists/* "$root"/var/cache/apt/archives/*.deb
tar --numeric-owner -C "$root" -c . |
  docker import --change 'CMD ["/bin/bash"]' --change 'ENV LANG=C.UTF-8' - "$image" >/dev/null
echo "docker_base_image: $image made in $((SECONDS - start)) s," \
     "$(docker image inspect -f '{{.Size}}' "$image" | awk '{ printf "%.0f MB", $1 / 1e6 }')"
