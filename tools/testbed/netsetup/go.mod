module gpuci.local/testbed/netsetup

go 1.24.0

require github.com/vishvananda/netlink v1.3.1

require (
	github.com/vishvananda/netns v0.0.5 // indirect
	golang.org/x/sys v0.10.0 // indirect
)
