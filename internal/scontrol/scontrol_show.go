package scontrol

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/slurm-lite/slurm-lite/internal/api"
	"github.com/slurm-lite/slurm-lite/internal/cli"
	"github.com/slurm-lite/slurm-lite/internal/config"
	"github.com/slurm-lite/slurm-lite/internal/format"
	"github.com/slurm-lite/slurm-lite/internal/slurm"
	"github.com/slurm-lite/slurm-lite/internal/slurmsyntax"
)

// scontrol show node, show partition, show config and update NodeName=.

// showEntity handles the show entities of this file; false when tag is
// none of them.
func (s *scontrolArgs) showEntity(tag, val string, hasVal bool) bool {
	switch {
	case keyword(tag, "config", 1):
		s.showConfig()
	case keyword(tag, "nodes", 1):
		s.showNodes(val, hasVal)
	case keyword(tag, "partitions", 2), keyword(tag, "partitionname", 2):
		s.showPartitions(val, hasVal)
	case keyword(tag, "reservations", 3), keyword(tag, "reservationname", 3):
		s.showResv(val, hasVal)
	default:
		return false
	}
	return true
}

// loadCluster fetches the node and the configuration, reporting a failure
// as scontrol does (what names the failing call).
func (s *scontrolArgs) loadCluster(what string) *cli.Cluster {
	if !s.connect() {
		return nil
	}
	cl, err := cli.LoadCluster(s.client)
	if err != nil {
		s.exit = 1
		if s.quiet != 1 {
			callError("scontrol", what, err, s.sio)
		}
		return nil
	}
	return cl
}

// partitions are the partitions scontrol shows: hidden ones only with -a.
func (s *scontrolArgs) partitions(cfg *config.Config) []*config.Partition {
	var out []*config.Partition
	for i := range cfg.Partitions {
		if p := &cfg.Partitions[i]; s.all || !p.Hidden {
			out = append(out, p)
		}
	}
	return out
}

// showNodes is scontrol_print_node_list: the node, or "Node X not found"
// for each name of a host list that is not it.
func (s *scontrolArgs) showNodes(list string, hasList bool) {
	cl := s.loadCluster("slurm_load_node")
	if cl == nil {
		return
	}
	v := cl.View(s.sio.Now())
	v.Partitions = nil
	for _, p := range s.partitions(cl.Conf.Config) {
		v.Partitions = append(v.Partitions, p.PartitionName)
	}
	names := []string{v.Name}
	if hasList {
		hosts, err := slurmsyntax.ExpandHostlist(list)
		if err != nil {
			s.exit = 1
			if s.quiet != 1 {
				fmt.Fprintf(s.sio.Stderr, "unable to parse node list %s\n", list)
			}
			return
		}
		names = hosts
	}
	var b strings.Builder
	for _, name := range names {
		if name != v.Name {
			s.exit = 1
			if s.quiet != 1 {
				fmt.Fprintf(&b, "Node %s not found\n", name)
			}
			continue
		}
		b.WriteString(format.ShowNode(v, s.details > 0, s.oneLiner))
	}
	io.WriteString(s.sio.Stdout, b.String())
}

// showPartitions is scontrol_print_part: one partition by name, or all.
func (s *scontrolArgs) showPartitions(name string, hasName bool) {
	cl := s.loadCluster("slurm_load_partitions")
	if cl == nil {
		return
	}
	cfg := cl.Conf.Config
	n := format.PartitionNode{Name: cl.Node.Name, CPUs: cl.Node.CPUs, MemoryMB: cl.Node.MemoryMB, GPUs: len(cl.Node.GPUs)}
	var b strings.Builder
	printed := 0
	for _, p := range s.partitions(cfg) {
		if hasName && p.PartitionName != name {
			continue
		}
		b.WriteString(format.ShowPartition(p, n, s.oneLiner))
		printed++
	}
	io.WriteString(s.sio.Stdout, b.String())
	if printed == 0 && s.quiet != 1 {
		if hasName {
			s.exit = 1
			fmt.Fprintf(s.sio.Stdout, "Partition %s not found\n", name)
		} else {
			fmt.Fprintln(s.sio.Stdout, "No partitions in the system")
		}
	}
}

// showConfig is _print_config: the configuration in force and the
// controller's ping line.
func (s *scontrolArgs) showConfig() {
	if !s.connect() {
		return
	}
	var conf api.Config
	err := cli.Get(s.client, api.PathConfig, &conf)
	if err == nil && conf.Config == nil {
		err = fmt.Errorf("the daemon sent no configuration")
	}
	if err != nil {
		s.exit = 1
		if s.quiet != 1 {
			callError("scontrol", "slurm_load_ctl_conf", err, s.sio)
		}
		return
	}
	// The next job id is one past the newest job the daemon still lists:
	// finished jobs leave that list after MinJobAge, so this is a floor.
	next := uint32(1)
	if jobs, err := cli.GetJobs(s.client, nil); err == nil {
		for _, j := range jobs {
			next = max(next, j.ID+1)
		}
	}
	view := &format.ConfigView{Config: conf.Config, Path: conf.Path, Now: s.sio.Now(), Boot: conf.Boot,
		Host: cli.ShortHost(), DaemonUser: cli.DaemonUser(s.client.Socket()), NextJobID: next, Cgroups: conf.Cgroups}
	io.WriteString(s.sio.Stdout, format.ShowConfig(view))
}

// callError prints a failed call as slurm_perror does ("slurm_update
// error: Invalid user id"): a refusal from the daemon in Slurm's words, or
// in its own; an unreachable daemon as every command reports it.
func callError(prog, call string, err error, sio cli.IO) int {
	var le *api.Error
	if errors.As(err, &le) {
		fmt.Fprintf(sio.Stderr, "%s error: %s\n", call, cli.Strerror(le.Code, le.Message))
		return 1
	}
	return cli.DaemonError(prog, err, sio)
}

func init() { updateOther["NodeName"] = (*scontrolArgs).updateNode }

// nodeStateWord is a State= value as scontrol_update_node reads it.
type nodeStateWord int

const (
	stateWordBad nodeStateWord = iota
	stateWordDrain
	stateWordResume
	stateWordUndrain // RESUME that is no error on an undrained node
	stateWordDown    // DOWN and FAIL: need a reason, as DRAIN
	stateWordOther
)

// parseNodeStateWord follows scontrol_update_node's State= cases.
func parseNodeStateWord(val string) nodeStateWord {
	is := func(word string, min int) bool {
		n := max(len(val), min)
		return strings.EqualFold(padTo(val, n), padTo(word, n))
	}
	switch {
	case is("NoResp", 3), is("CANCEL_REBOOT", 3):
		return stateWordOther
	case is("DRAIN", 3):
		return stateWordDrain
	case is("FAIL", 3):
		return stateWordDown
	case is("FUTURE", 3):
		return stateWordOther
	case is("RESUME", 3):
		return stateWordResume
	case is("UNDRAIN", 3):
		return stateWordUndrain
	case is("POWER_DOWN_ASAP", 12), is("POWER_DOWN_FORCE", 12), is("POWER_DOWN", 7), is("POWER_UP", 7):
		return stateWordOther
	}
	for _, base := range []string{"UNKNOWN", "DOWN", "IDLE", "ALLOCATED", "ERROR", "MIXED", "FUTURE"} {
		if is(base, 3) {
			if base == "DOWN" {
				return stateWordDown
			}
			return stateWordOther
		}
	}
	return stateWordBad
}

// padTo pads s with NULs to n bytes, or cuts it: the bytes strncasecmp
// compares.
func padTo(s string, n int) string {
	if len(s) >= n {
		return s[:n]
	}
	return s + strings.Repeat("\x00", n-len(s))
}

// updateNode is scontrol_update_node, with slurm-lite's Gpu= (an index,
// UUID or PCI bus id, or a comma-separated list of them) to drain or
// resume single GPUs.
func (s *scontrolArgs) updateNode(args []string) {
	u := api.NodeUpdate{}
	changes := 0
	var word nodeStateWord
	for _, arg := range args {
		tag, val, ok := strings.Cut(arg, "=")
		if !ok {
			s.exit = 1
			// scontrol_update_node returns -1 without an errno, which
			// _update_it then reports.
			fmt.Fprintf(s.sio.Stderr, "scontrol: error: Invalid input: %s  Request aborted\n", arg)
			fmt.Fprintln(s.sio.Stderr, "slurm_update error: No error")
			return
		}
		switch {
		case strings.EqualFold(tag, "Gpu"), strings.EqualFold(tag, "Gpus"):
			for _, g := range strings.Split(val, ",") {
				if g != "" {
					u.GPUs = append(u.GPUs, g)
				}
			}
		case keyword(tag, "NodeName", 1) && !keyword(tag, "NodeAddr", 5) && !keyword(tag, "NodeHostName", 5):
			u.Node = val
		case keyword(tag, "Reason", 1):
			val = strings.TrimPrefix(val, "\"")
			val = strings.TrimSuffix(val, "\"")
			u.Reason = val
			changes++
		case keyword(tag, "State", 1):
			word = parseNodeStateWord(val)
			if word == stateWordBad {
				s.exit = 1
				fmt.Fprintf(s.sio.Stderr, "Invalid input: %s\nRequest aborted\n"+
					"Valid states are: NoResp DRAIN FAIL FUTURE RESUME POWER_DOWN POWER_UP UNDRAIN\n"+
					"Not all states are valid given a node's prior state\n", arg)
				return
			}
			changes++
		default:
			s.exit = 1
			fmt.Fprintf(s.sio.Stderr, "Update of this parameter is not supported: %s\nRequest aborted\n", arg)
			return
		}
	}
	if (word == stateWordDrain || word == stateWordDown) && u.Reason == "" {
		s.exit = 1
		fmt.Fprintln(s.sio.Stderr, "You must specify a reason when DOWNING or DRAINING a node. Request denied")
		return
	}
	if changes == 0 {
		s.exit = 1
		fmt.Fprintln(s.sio.Stderr, "No changes specified")
		return
	}
	switch word {
	case stateWordDrain:
		u.State = api.NodeDrain
	case stateWordResume, stateWordUndrain:
		u.State = api.NodeResume
	case stateWordDown, stateWordOther:
		// slurm-lite drains and resumes; DOWN, FAIL, IDLE, POWER_* have
		// no meaning on a machine that is always there.
		s.exit = 1
		fmt.Fprintf(s.sio.Stderr, "slurm_update error: %s\n", cli.Strerror(slurm.ErrNotSupported, ""))
		return
	}
	if !s.connect() {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), cli.RequestTimeout)
	defer cancel()
	var out api.Drains
	err := s.client.Do(ctx, "POST", api.PathNodeUpdate, u, &out)
	var le *api.Error
	if word == stateWordUndrain && errors.As(err, &le) && le.Code == slurm.ErrInvalidNodeState {
		err = nil // nothing to undrain: Slurm clears a flag that is not set
	}
	if err != nil {
		s.exit = callError("scontrol", "slurm_update", err, s.sio)
	}
}
