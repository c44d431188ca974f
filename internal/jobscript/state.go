package jobscript

import (
	"time"
)

// state is a Request being built, plus what sbatch tracks beside its option
// values: who set each option last (the memory options and --ntasks-per-gpu
// are checked by that), and values it validates only at the end.
type state struct {
	r   *Request
	now time.Time

	// src maps an option's key to the source that set it last; an option
	// reset by an environment variable is removed.
	src map[string]Source

	mailType uint16

	// Raw GPU and GRES specs: sbatch only checks them when it builds the
	// job description, after every option has been read.
	gpus, gpusPerNode, gpusPerTask, gpusPerSocket, gres string
	gresSet                                             bool

	// Node layout numbers that sbatch's _opt_verify combines.
	cpusSet                 bool
	sockets, cores, threads int // 0: not given
	extraSet                bool

	ntasksPerGPU, ntasksPerTres  int
	distribution                 string
	burstBuffer, burstBufferFile bool
	coreSpec, threadSpec         bool
	lastSpecThread               bool // the last of -S and --thread-spec was --thread-spec

	// --array and --dependency go to the controller unchecked.
	depSpec, arraySpec string
	depSet, arraySet   bool
	jobNameSet         bool

	warnings []string
	exitErr  int // error_exit: 1, or SLURM_EXIT_ERROR
}

func newState(now time.Time, exitErr int) *state {
	return &state{
		r:       &Request{NTasks: 1, Nodes: NodeRange{Min: 1}},
		now:     now,
		src:     map[string]Source{},
		exitErr: exitErr,
	}
}

// other records an option kept only for display, by long name, in the order
// first given, with its last value.
func (s *state) other(name, v string, has bool) {
	for i := range s.r.Other {
		if s.r.Other[i].Name == name {
			s.r.Other[i].Value, s.r.Other[i].HasValue = v, has
			return
		}
	}
	s.r.Other = append(s.r.Other, Setting{Name: name, Value: v, HasValue: has})
}

// dropOther forgets an option kept for display.
func (s *state) dropOther(name string) {
	for i := range s.r.Other {
		if s.r.Other[i].Name == name {
			s.r.Other = append(s.r.Other[:i], s.r.Other[i+1:]...)
			return
		}
	}
}

// setByCLI is Slurm's slurm_option_set_by_cli: set, and not by an
// environment variable (the script counts as the command line).
func (s *state) setByCLI(key string) bool {
	src, ok := s.src[key]
	return ok && src != FromEnvironment
}

func (s *state) setByEnv(key string) bool { return s.src[key] == FromEnvironment }

func (s *state) warn(line string) { s.warnings = append(s.warnings, line) }
