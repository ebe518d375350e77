// Replaces gitlab.com/gitlab-org/gitlab-runner/helpers/runner_wrapper/api, a
// module nested in GitLab Runner's repository that its module zip leaves out
// and the Go module proxy does not serve. Only the testbed's GitLab Runner
// build uses it (../../go.mod).
module gitlab.com/gitlab-org/gitlab-runner/helpers/runner_wrapper/api

go 1.24

require github.com/sirupsen/logrus v1.10.0

require golang.org/x/sys v0.13.0 // indirect
