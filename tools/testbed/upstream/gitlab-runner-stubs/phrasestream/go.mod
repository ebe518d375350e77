// Stand-in for gitlab.com/ajwalker/phrasestream in the gpuci testbed's build of
// gitlab-runner (see README.md beside this folder): the experimental
// `proxy-exec` helper command fails with "stubbed in the gpuci testbed build".
module gitlab.com/ajwalker/phrasestream

go 1.25.0
