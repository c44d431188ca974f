module github.com/slurm-lite/slurm-lite

go 1.26

require (
	github.com/BurntSushi/toml v1.6.0 // indirect
	github.com/NVIDIA/go-nvml v0.13.4-1 // indirect
	github.com/alecthomas/kong v1.17.0 // indirect
	github.com/google/go-cmp v0.7.0 // indirect
	github.com/google/uuid v1.6.0 // indirect
	github.com/mattn/go-shellwords v1.0.16 // indirect
	github.com/rogpeppe/go-internal v1.16.0 // indirect
	golang.org/x/sys v0.26.0 // indirect
	golang.org/x/tools v0.26.0 // indirect
	pgregory.net/rapid v1.3.0 // indirect
)
