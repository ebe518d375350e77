// Stand-in for gitlab.com/gitlab-org/fleeting/taskscaler in the gpuci testbed's
// build of gitlab-runner (see README.md beside this folder): the autoscaling
// executors (docker-autoscaler, instance) fail with "stubbed in the gpuci testbed build".
module gitlab.com/gitlab-org/fleeting/taskscaler

go 1.25.0

require gitlab.com/gitlab-org/fleeting/fleeting v0.0.0-20260107152956-5ca76afe7ef3
