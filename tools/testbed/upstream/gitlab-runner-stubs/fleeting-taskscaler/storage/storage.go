// Stand-in for gitlab.com/gitlab-org/fleeting/taskscaler@v0.0.0-20251222171709-fd7a3aca1450 (package storage), which the Go module proxy
// does not serve, written for the gpuci testbed's source build of
// gitlab-runner v18.9.0 (tools/testbed/upstream/gitlab-runner.sh). It is not
// upstream code: it declares only the names gitlab-runner compiles against,
// and whatever would run the real module's code returns an error (or panics)
// saying "stubbed in the gpuci testbed build".
package storage

import "gitlab.com/gitlab-org/fleeting/taskscaler/internal/stub"

// Storage keeps the task scaler's state.
type Storage interface{}

// NewFileStorage fails (autoscaler state_storage).
func NewFileStorage(string) (Storage, error) { return nil, stub.Err("storage.NewFileStorage") }
