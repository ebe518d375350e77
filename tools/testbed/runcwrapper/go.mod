module gpuci.local/testbed/runcwrapper

go 1.24.0
