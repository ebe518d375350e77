// Stand-in for gitlab.com/gitlab-org/moa (the job inputs expression language)
// in the gpuci testbed's build of gitlab-runner (see README.md beside this
// folder): interpolating job inputs fails with "stubbed in the gpuci testbed build".
module gitlab.com/gitlab-org/moa

go 1.25.0
