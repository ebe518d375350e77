#!/usr/bin/env bash
# Build the GitLab Runner images for chart gitlab-runner 0.86.0 (appVersion
# 18.9.0) from the v18.9.0 tag:
#  - the manager the chart deploys, registry.gitlab.com/gitlab-org/gitlab-runner:alpine-v18.9.0
#    (the chart's default tag is alpine-v<appVersion>);
#  - the helper the Kubernetes executor puts in every job pod,
#    registry.gitlab.com/gitlab-org/gitlab-runner/gitlab-runner-helper:x86_64-v18.9.0
#    (helperimage.Get: GitLabRegistryName, <arch>-v<version> for the alpine flavor).
#
# What the chart runs in the manager (templates/deployment.yaml, configmap.yaml):
#   command /usr/bin/dumb-init -- /bin/bash /configmaps/entrypoint, which
#   copies config.toml to ~/.gitlab-runner/ (an emptyDir), runs
#   `sh /configmaps/register-the-runner` (/entrypoint register ..., seq,
#   sleep) and `exec /entrypoint run --user=gitlab-runner
#   --working-directory=/home/gitlab-runner`; the probes run
#   /usr/bin/pgrep and `bash /configmaps/check-live` (pgrep, timeout,
#   `gitlab-runner verify`, grep); the pod runs as uid 100, fsGroup 65533
#   (the alpine image's gitlab-runner user, made by `adduser -D -S`).
# The manager reproduces upstream's alpine image (dockerfiles/runner/alpine
# before the runner moved to separate base images, commit f37c7b6dd):
# /usr/bin/gitlab-runner, /entrypoint (CA update, then exec gitlab-runner
# "$@"), dumb-init, bash, user gitlab-runner 100:65533 with home
# /home/gitlab-runner, /etc/gitlab-runner, Mozilla CA bundle; entrypoint
# ["/usr/bin/dumb-init", "/entrypoint"], cmd ["run", "--user=gitlab-runner",
# "--working-directory=/home/gitlab-runner"]. Its root is the testbed's
# shared Debian bookworm root, not Alpine; dumb-init and pgrep (procps) come
# from Debian packages. Left out: git, git-lfs, openssh-client, curl, tzdata
# (the chart's session-server scripts need curl; the session server is off
# by default), docker-machine, STOPSIGNAL SIGQUIT (oci_image.py writes none).
#
# The helper reproduces dockerfiles/runner-helper/Dockerfile.alpine (same
# commit): /usr/bin/gitlab-runner-helper, /usr/bin/gitlab-runner-build (umask
# 0000, exec bash: the executor's default command), /entrypoint (CA update,
# then exec "$@"), dumb-init, bash, git, git-lfs, curl, ca-certificates, perl
# on a Debian bookworm root made with mmdebstrap; entrypoint
# ["/usr/bin/dumb-init", "/entrypoint"], cmd ["sh"].
#
# The Go module proxy does not serve some of the runner's dependencies; they
# are replaced by the stand-ins in gitlab-runner-stubs/ (see its README.md),
# through a copy of go.mod (-modfile) so the exported tree stays as tagged.
#   gitlab-runner.sh                           build what is missing of both images
#   gitlab-runner.sh --print-archive           print the manager archive's path, build nothing
#   gitlab-runner.sh --helper                  build what is missing of the helper image
#   gitlab-runner.sh --helper --print-archive  print the helper archive's path
# (gitlab-runner-helper.sh is `gitlab-runner.sh --helper`.)
# Exit 3 when the source snapshot is not on this machine.
# shellcheck disable=SC2154  # cache, images_dir: set by ../lib/common.sh
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=../lib/common.sh
source "$here/../lib/common.sh"
# shellcheck source=static-base.sh
source "$here/static-base.sh"

version=${GITLAB_RUNNER_VERSION#v}
manager_ref=registry.gitlab.com/gitlab-org/gitlab-runner:alpine-$GITLAB_RUNNER_VERSION
manager_archive=$images_dir/gitlab-runner-$GITLAB_RUNNER_VERSION.tar
helper_ref=registry.gitlab.com/gitlab-org/gitlab-runner/gitlab-runner-helper:x86_64-$GITLAB_RUNNER_VERSION
helper_archive=$images_dir/gitlab-runner-helper-$GITLAB_RUNNER_VERSION.tar
images=(manager helper)
[ "${1:-}" = --helper ] && { images=(helper); shift; }
if [ "${1:-}" = --print-archive ]; then
  [ "${images[0]}" = helper ] && echo "$helper_archive" || echo "$manager_archive"
  exit 0
fi
missing() { local i; for i in "${images[@]}"; do local a=${i}_archive; [ -s "${!a}" ] || return 0; done; return 1; }
missing || { log "GitLab Runner images cached (${images[*]})"; exit 0; }

dir=$cache/gitlab-runner-$GITLAB_RUNNER_VERSION
build_lock "$dir"  # then look again: a build beside this one may have written them
missing || { log "GitLab Runner images cached (${images[*]})"; exit 0; }
stubs=$here/gitlab-runner-stubs
# module path = stand-in folder (each folder's go.mod names the module)
replaced=(
  gitlab.com/gitlab-org/step-runner=step-runner
  gitlab.com/gitlab-org/moa=moa
  gitlab.com/gitlab-org/fleeting/taskscaler=fleeting-taskscaler
  gitlab.com/gitlab-org/fleeting/taskscaler/metrics/prometheus=fleeting-taskscaler-metrics-prometheus
  gitlab.com/gitlab-org/fleeting/fleeting/metrics/prometheus=fleeting-metrics-prometheus
  gitlab.com/gitlab-org/fleeting/nesting=fleeting-nesting
  gitlab.com/ajwalker/phrasestream=phrasestream
)

# build_binary NAME PACKAGE: build $dir/bin/NAME unless it is there.
build_binary() {
  local name=$1 package=$2
  if have "$dir" "$name"; then log "GitLab Runner $GITLAB_RUNNER_VERSION $name binary cached"; return; fi
  local src mod=$dir/mod r
  src=$(upstream_source gitlab-runner "$GITLAB_RUNNER_REPO" "$GITLAB_RUNNER_VERSION" "$GITLAB_RUNNER_COMMIT")
  [ "$(cat "$src/VERSION")" = "$version" ] || { log "$src/VERSION is not $version"; exit 1; }
  # The tree's go.mod plus a replace line per stand-in, beside the tree.
  rm -rf "$mod"; mkdir -p "$mod"
  cp "$src/go.mod" "$mod/go.mod"; cp "$src/go.sum" "$mod/go.sum"
  for r in "${replaced[@]}"; do
    [ -f "$stubs/${r#*=}/go.mod" ] || { log "missing stand-in $stubs/${r#*=}"; exit 1; }
    (cd "$src" && go mod edit -modfile="$mod/go.mod" -replace "${r%%=*}=$stubs/${r#*=}")
  done
  # As the Makefiles (GO_LDFLAGS; APP_NAME is gitlab-runner-helper for the
  # helper): NAME and VERSION (ci/version prints the VERSION file at the
  # tag); REVISION, which upstream reads from the VCS stamp, is set here
  # (-buildvcs=false, and the export has no .git).
  local pkg=gitlab.com/gitlab-org/gitlab-runner/common
  local ldflags="-w -X $pkg.NAME=$name -X $pkg.VERSION=$version -X $pkg.REVISION=${GITLAB_RUNNER_COMMIT:0:8}"
  log "building GitLab Runner $GITLAB_RUNNER_VERSION $name (stand-ins for ${#replaced[@]} modules); modules through GOPROXY"
  mkdir -p "$dir/bin"; rm -f "$dir/bin/$name.partial"
  (
    cd "$src"
    export GOOS=linux GOARCH=amd64 CGO_ENABLED=0 GOFLAGS="$GOFLAGS -mod=mod -modfile=$mod/go.mod"
    with_progress "GitLab Runner $GITLAB_RUNNER_VERSION $name" \
      nice -n 10 go build -ldflags "$ldflags" -o "$dir/bin/$name.partial" "$package"
  )
  mv "$dir/bin/$name.partial" "$dir/bin/$name"
}

work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
labels=(); while IFS= read -r l; do labels+=("$l"); done \
  < <(image_labels "$GITLAB_RUNNER_REPO" "$GITLAB_RUNNER_VERSION" "$GITLAB_RUNNER_COMMIT")
labels+=(--label "gpuci.runners/stubbed-modules=$(IFS=,; echo "${replaced[*]%%=*}")")

# /entrypoint of upstream's alpine images: update the CA bundle with a custom
# CA, then run the arguments (the manager: through gitlab-runner).
write_entrypoint() {
  local out=$1 shell=$2 exec_line=$3
  cat > "$out" <<EOF
#!$shell

# gitlab-runner data directory
DATA_DIR="/etc/gitlab-runner"
EOF
  # shellcheck disable=SC2016  # written as text, expanded by the entrypoint
  [ "$shell" = /bin/sh ] && echo 'CONFIG_FILE=${CONFIG_FILE:-$DATA_DIR/config.toml}' >> "$out"
  cat >> "$out" <<'EOF'
# custom certificate authority path
CA_CERTIFICATES_PATH=${CA_CERTIFICATES_PATH:-$DATA_DIR/certs/ca.crt}
LOCAL_CA_PATH="/usr/local/share/ca-certificates/ca.crt"

update_ca() {
  echo "Updating CA certificates..."
  cp "${CA_CERTIFICATES_PATH}" "${LOCAL_CA_PATH}"
  update-ca-certificates --fresh >/dev/null
}

if [ -f "${CA_CERTIFICATES_PATH}" ]; then
  # update the ca if the custom ca is different than the current
  cmp -s "${CA_CERTIFICATES_PATH}" "${LOCAL_CA_PATH}" || update_ca
fi

EOF
  printf '%s\n' "$exec_line" >> "$out"
  chmod 0755 "$out"
}

manager_image() {
  [ -s "$manager_archive" ] && { log "GitLab Runner manager image cached ($manager_archive)"; return; }
  build_binary gitlab-runner .
  # The root: the shared Debian bookworm tarball with the alpine image's user
  # (adduser -D -S: uid 100, group nogroup, which is 65533 on Alpine) and its
  # folders owned by it. A folder layer would make them root's (oci_image.py
  # writes every layer entry as root), so the tarball is rewritten instead.
  local rootfs=$dir/rootfs.tar
  if [ ! -s "$rootfs" ]; then
    log "writing the manager's root ($rootfs): Debian bookworm + user gitlab-runner (100:65533)"
    python3 - "$(debian_root_tar)" "$rootfs.partial" <<'EOF'
import io, sys, tarfile
src, dst = sys.argv[1:]
add_user = {"etc/passwd": "gitlab-runner:x:100:65533:Linux User,,,:/home/gitlab-runner:/bin/bash\n",
            "etc/group": "gitlab-runner:x:65533:\n"}
owned = ["etc/gitlab-runner", "home/gitlab-runner"]
with tarfile.open(src) as tin, tarfile.open(dst, "w", format=tarfile.PAX_FORMAT) as tout:
    for m in tin:
        name = m.name.removeprefix("./")
        if name in owned:
            continue
        if name in add_user:
            data = tin.extractfile(m).read().decode()
            data = (data + ("" if data.endswith("\n") else "\n") + add_user.pop(name)).encode()
            m.size = len(data)
            tout.addfile(m, io.BytesIO(data))
        elif m.isfile():
            tout.addfile(m, tin.extractfile(m))
        else:
            tout.addfile(m)
    if add_user:
        sys.exit(f"not in the Debian root: {sorted(add_user)}")
    for name in owned:
        d = tarfile.TarInfo("./" + name)
        d.type, d.mode, d.uid, d.gid = tarfile.DIRTYPE, 0o755, 100, 65533
        d.uname = d.gname = "gitlab-runner"
        tout.addfile(d)
EOF
    mv "$rootfs.partial" "$rootfs"
  fi

  local app=$work/manager f b
  mkdir -p "$app/usr/bin" "$app/usr/lib/x86_64-linux-gnu" "$app/etc/ssl/certs"
  install -m 0755 "$dir/bin/gitlab-runner" "$app/usr/bin/gitlab-runner"
  # dumb-init (the chart's command) and pgrep (its probes), from Debian's
  # packages: only their files, since the packages ship /bin and /lib, which
  # are links into /usr in the root.
  deb_extract dumb-init "$work/dumb-init"
  install -m 0755 "$work/dumb-init/usr/bin/dumb-init" "$app/usr/bin/dumb-init"
  deb_extract procps "$work/procps"
  deb_extract libproc2-0 "$work/libproc2"
  for b in pgrep ps; do
    f=$(find "$work/procps" -path "*bin/$b" -type f | head -n 1)
    [ -n "$f" ] || { log "procps has no $b"; exit 1; }
    install -m 0755 "$f" "$app/usr/bin/$b"
  done
  ln -s pgrep "$app/usr/bin/pkill"
  find "$work/libproc2" -path '*lib/x86_64-linux-gnu/libproc2.so*' -exec cp -a {} "$app/usr/lib/x86_64-linux-gnu/" \;
  [ -e "$app/usr/lib/x86_64-linux-gnu/libproc2.so.0" ] || { log "libproc2-0 has no libproc2.so.0"; exit 1; }
  # The Mozilla CA bundle (Debian's ca-certificates, as static_base has it).
  install -m 0644 "$(static_base)/etc/ssl/certs/ca-certificates.crt" "$app/etc/ssl/certs/ca-certificates.crt"
  write_entrypoint "$app/entrypoint" /bin/sh '# launch gitlab-runner passing all arguments
exec gitlab-runner "$@"'
  log "writing $manager_ref"
  make_image "$manager_ref" "$manager_archive" --base-tar "$rootfs" --layer "$app" \
    --entrypoint '["/usr/bin/dumb-init", "/entrypoint"]' \
    --cmd '["run", "--user=gitlab-runner", "--working-directory=/home/gitlab-runner"]' \
    --workdir / "${labels[@]}"
}

helper_image() {
  [ -s "$helper_archive" ] && { log "GitLab Runner helper image cached ($helper_archive)"; return; }
  build_binary gitlab-runner-helper ./apps/gitlab-runner-helper
  # The helper's root: what Dockerfile.alpine adds with apk, from Debian.
  local rootfs=$dir/helper-rootfs.tar
  local mirror=${GPUCI_DEBIAN_MIRROR:-http://deb.debian.org/debian}
  if [ ! -s "$rootfs" ]; then
    command -v mmdebstrap >/dev/null || { log "installing mmdebstrap (Debian package)"; apt-get install -y -qq mmdebstrap >&2; }
    log "writing the helper's root ($rootfs) with mmdebstrap from $mirror"
    with_progress "the helper's Debian root" \
      mmdebstrap --quiet --format=tar --variant=minbase \
        --include=bash,ca-certificates,curl,git,git-lfs,perl-base,dumb-init \
        bookworm "$rootfs.partial" "deb $mirror bookworm main" >&2
    mv "$rootfs.partial" "$rootfs"
  fi
  local app=$work/helper
  mkdir -p "$app/usr/bin"
  install -m 0755 "$dir/bin/gitlab-runner-helper" "$app/usr/bin/gitlab-runner-helper"
  printf '#!/bin/bash\numask 0000\nexec /bin/bash\n' > "$app/usr/bin/gitlab-runner-build"
  chmod 0755 "$app/usr/bin/gitlab-runner-build"
  write_entrypoint "$app/entrypoint" /bin/bash '# launch CMD passing all arguments
exec "$@"'
  log "writing $helper_ref"
  make_image "$helper_ref" "$helper_archive" --base-tar "$rootfs" --layer "$app" \
    --entrypoint '["/usr/bin/dumb-init", "/entrypoint"]' --cmd '["sh"]' \
    --workdir / "${labels[@]}"
}

for i in "${images[@]}"; do "${i}_image"; done
