// Replaces gitlab.com/gitlab-org/step-runner, which the Go module proxy
// refuses (403). Only the testbed's GitLab Runner build uses it (../../go.mod).
module gitlab.com/gitlab-org/step-runner

go 1.24

require google.golang.org/protobuf v1.36.12

require gitlab.com/gitlab-org/moa v0.0.0-20260427132849-fad5ad756fe7
