// Stand-in for gitlab.com/gitlab-org/fleeting/fleeting/metrics/prometheus in the gpuci testbed's build of gitlab-runner (see
// README.md beside this folder): metrics of the autoscaling executors, which
// fail with "stubbed in the gpuci testbed build".
module gitlab.com/gitlab-org/fleeting/fleeting/metrics/prometheus

go 1.25.0
