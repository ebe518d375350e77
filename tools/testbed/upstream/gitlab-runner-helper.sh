#!/usr/bin/env bash
# The GitLab Runner helper image (the Kubernetes executor's job-pod helper),
# built by gitlab-runner.sh: this is `gitlab-runner.sh --helper`, so a list
# of components by script name (build-images.sh) can name it.
#   gitlab-runner-helper.sh                  build what is missing
#   gitlab-runner-helper.sh --print-archive  print the archive's path, build nothing
exec bash "$(dirname "$0")/gitlab-runner.sh" --helper "$@"
