// Stand-in for gitlab.com/gitlab-org/fleeting/nesting v0.4.0 in the gpuci
// testbed's build of gitlab-runner (see README.md beside this folder): VM
// isolation of the autoscaling executors fails with "stubbed in the gpuci testbed build".
module gitlab.com/gitlab-org/fleeting/nesting

go 1.25.0
