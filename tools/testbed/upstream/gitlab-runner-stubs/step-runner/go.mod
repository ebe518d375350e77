// Stand-in for gitlab.com/gitlab-org/step-runner v0.29.0 in the gpuci testbed's
// build of gitlab-runner (see README.md beside this folder): CI steps fail with
// "stubbed in the gpuci testbed build".
module gitlab.com/gitlab-org/step-runner

go 1.25.0

require (
	gitlab.com/gitlab-org/moa v0.0.0-20251209091627-66342f721c88
	google.golang.org/protobuf v1.36.11
)
