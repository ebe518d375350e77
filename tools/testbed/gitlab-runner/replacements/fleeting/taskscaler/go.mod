// Replaces gitlab.com/gitlab-org/fleeting/taskscaler, which the Go module
// proxy refuses (403). Only the testbed's GitLab Runner build uses it (../../../go.mod).
module gitlab.com/gitlab-org/fleeting/taskscaler

go 1.24
