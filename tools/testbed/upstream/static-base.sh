# Shared by tools/testbed/upstream/*.sh (sourced after ../lib/common.sh, not
# run): the small root file systems the upstream images are built on.
#
# The vendors ship these components on distroless images (ARC: static:nonroot;
# NVIDIA: its distroless/cc and distroless/go); the testbed's stand-in is the
# part of distroless/static:nonroot a static Go binary uses: users
# root/nobody/nonroot(65532), /tmp (1777), /etc/nsswitch.conf and Debian's CA
# bundle, plus a static busybox for images whose pods run a shell. Debian packages come with `apt-get download`
# and are cached under $cache/debs.
# shellcheck shell=bash
# shellcheck disable=SC2154  # cache comes from ../lib/common.sh

# Layers keep the modes their files are written with: readable by every user.
umask 022

# build_lock PATH: hold an exclusive lock (PATH.lock) until the script ends, so
# two builds of one component (build-images.sh beside a manual run) take turns
# instead of writing the same folders; the caller checks its outputs again
# once it holds the lock.
build_lock() {
  mkdir -p "$(dirname "$1")"
  exec 9>"$1.lock"
  flock -n 9 && return
  log "another build of $(basename "$1") is running; waiting for it"
  flock 9
}

# deb_extract PACKAGE DIR: unpack the candidate version of a Debian package into DIR.
deb_extract() {
  local pkg=$1 dir=$2 debs=$cache/debs
  mkdir -p "$debs" "$dir"
  local deb
  deb=$(find "$debs" -maxdepth 1 -name "${pkg}_*.deb" | sort | tail -n 1)
  if [ -z "$deb" ]; then
    log "downloading Debian package $pkg (apt-get download)"
    (cd "$debs" && apt-get download -q "$pkg" >&2) || {
      { apt-get update -qq && cd "$debs" && apt-get download -q "$pkg"; } >&2
    }
    deb=$(find "$debs" -maxdepth 1 -name "${pkg}_*.deb" | sort | tail -n 1)
  fi
  [ -n "$deb" ] || { log "could not download Debian package $pkg"; exit 1; }
  dpkg-deb -x "$deb" "$dir"
}

# static_base: print a folder holding the distroless-like root (built once).
static_base() {
  local dir=$cache/static-base/rootfs
  if [ -f "$dir/etc/passwd" ]; then echo "$dir"; return; fi
  local work=$cache/static-base/work
  rm -rf "$dir" "$work"; mkdir -p "$dir/etc/ssl/certs" "$dir/home/nonroot" "$dir/root" "$dir/tmp" "$work"
  chmod 1777 "$dir/tmp"; chmod 700 "$dir/root"
  cat > "$dir/etc/passwd" <<'EOF'
root:x:0:0:root:/root:/sbin/nologin
nobody:x:65534:65534:nobody:/nonexistent:/sbin/nologin
nonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin
EOF
  cat > "$dir/etc/group" <<'EOF'
root:x:0:
tty:x:5:
staff:x:50:
nobody:x:65534:
nonroot:x:65532:
EOF
  printf 'hosts: files dns\n' > "$dir/etc/nsswitch.conf"
  # The bundle update-ca-certificates would write: every Mozilla certificate
  # of Debian's ca-certificates package, concatenated.
  deb_extract ca-certificates "$work/ca"
  find "$work/ca/usr/share/ca-certificates/mozilla" -name '*.crt' | LC_ALL=C sort | xargs cat \
    > "$dir/etc/ssl/certs/ca-certificates.crt"
  rm -rf "$work"
  echo "$dir"
}

# busybox_layer: print a folder with Debian's static busybox as /bin/busybox
# and its applets (sh, cat, ...) as links, for images a chart runs a shell in.
busybox_layer() {
  local dir=$cache/static-base/busybox
  if [ -x "$dir/bin/busybox" ]; then echo "$dir"; return; fi
  local work=$cache/static-base/busybox-work
  rm -rf "$dir" "$work"; mkdir -p "$dir/bin" "$work"
  deb_extract busybox-static "$work"
  install -m 0755 "$work/bin/busybox" "$dir/bin/busybox"
  local applet
  for applet in $("$dir/bin/busybox" --list); do
    [ "$applet" = busybox ] || [ -e "$dir/bin/$applet" ] || ln -s busybox "$dir/bin/$applet"
  done
  rm -rf "$work"
  echo "$dir"
}
