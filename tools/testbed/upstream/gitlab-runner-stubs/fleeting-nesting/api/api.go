// Stand-in for gitlab.com/gitlab-org/fleeting/nesting@v0.4.0 (package api), which the Go module proxy
// does not serve, written for the gpuci testbed's source build of
// gitlab-runner v18.9.0 (tools/testbed/upstream/gitlab-runner.sh). It is not
// upstream code: it declares only the names gitlab-runner compiles against,
// and whatever would run the real module's code returns an error (or panics)
// saying "stubbed in the gpuci testbed build".
package api

import (
	"context"
	"errors"
	"net"

	"gitlab.com/gitlab-org/fleeting/nesting/hypervisor"
)

var (
	ErrNotInitialized     = errors.New("nesting not initialized")
	ErrAlreadyInitialized = errors.New("nesting already initialized")
)

func errStubbed(what string) error {
	return errors.New("gitlab.com/gitlab-org/fleeting/nesting " + what +
		": stubbed in the gpuci testbed build (the module is not on the Go module proxy);" +
		" VM isolation (nesting) does not work in this build")
}

// Client talks to the nesting daemon.
type Client interface {
	Init(ctx context.Context, config []byte) error
	Create(ctx context.Context, image string, slot *int32) (hypervisor.VirtualMachine, *string, error)
	List(ctx context.Context) ([]hypervisor.VirtualMachine, error)
	Delete(ctx context.Context, id string) error
	Close() error
}

// ClientConn would be the connection to the nesting daemon.
type ClientConn struct{}

// Close fails.
func (*ClientConn) Close() error { return errStubbed("ClientConn.Close") }

// NewClientConn fails.
func NewClientConn(string, func(ctx context.Context, network, address string) (net.Conn, error)) (*ClientConn, error) {
	return nil, errStubbed("NewClientConn")
}

// New returns a client whose every call fails.
func New(*ClientConn) Client { return client{} }

type client struct{}

func (client) Init(context.Context, []byte) error { return errStubbed("Client.Init") }
func (client) Create(context.Context, string, *int32) (hypervisor.VirtualMachine, *string, error) {
	return nil, nil, errStubbed("Client.Create")
}
func (client) List(context.Context) ([]hypervisor.VirtualMachine, error) {
	return nil, errStubbed("Client.List")
}
func (client) Delete(context.Context, string) error { return errStubbed("Client.Delete") }
func (client) Close() error                         { return errStubbed("Client.Close") }
