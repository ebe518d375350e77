// Package server: the runner wrapper's gRPC server (gpuci.runners testbed
// REPLACEMENT; see ../api.go). It accepts no connection.
package server

import (
	"net"

	"github.com/sirupsen/logrus"
)

// Server would serve the wrapper API.
type Server struct {
	log logrus.FieldLogger
}

// New keeps the logger; the wrapper is not served.
func New(log logrus.FieldLogger, _ any) *Server { return &Server{log: log} }

// Listen closes the listener at once, saying why.
func (s *Server) Listen(l net.Listener) {
	s.log.Warn("the runner wrapper API is not served by the gpuci.runners testbed build")
	_ = l.Close()
}

// Stop has nothing to stop.
func (s *Server) Stop() {}
