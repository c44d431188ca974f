package cli

import (
	"context"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/slurm-lite/slurm-lite/internal/api"
	"github.com/slurm-lite/slurm-lite/internal/format"
	"github.com/slurm-lite/slurm-lite/internal/sockclient"
	"github.com/slurm-lite/slurm-lite/internal/userdb"
)

// The node queries of sinfo and scontrol show node/partition/config:
//
// GET /v1/node (api.PathNode) -> api.Node: the node, its allocation and
// its GPUs as last sampled.
// GET /v1/node/drains (api.PathNodeDrains) -> api.Drains: the drains of
// the node and of single GPUs, with who and when.
// GET /v1/config (api.PathConfig) -> api.Config: the configuration in
// force (partitions, priority weights, ...).
// POST /v1/node/update (api.PathNodeUpdate) api.NodeUpdate -> api.Drains:
// scontrol update NodeName=... (root and operators).

// Get asks the daemon one GET question.
func Get(c *sockclient.Client, path string, out any) error {
	ctx, cancel := context.WithTimeout(context.Background(), RequestTimeout)
	defer cancel()
	return c.Do(ctx, "GET", path, nil, out)
}

// Cluster is what the node commands fetch from the daemon.
type Cluster struct {
	Node   api.Node
	Drains api.Drains
	Conf   api.Config
}

// LoadCluster fetches the node, its drains and the configuration.
func LoadCluster(c *sockclient.Client) (*Cluster, error) {
	var cl Cluster
	if err := Get(c, api.PathNode, &cl.Node); err != nil {
		return nil, err
	}
	if err := Get(c, api.PathNodeDrains, &cl.Drains); err != nil {
		return nil, err
	}
	if err := Get(c, api.PathConfig, &cl.Conf); err != nil {
		return nil, err
	}
	if cl.Conf.Config == nil {
		return nil, &api.Error{Message: "the daemon sent no configuration"}
	}
	return &cl, nil
}

// View is the node as the commands print it.
func (cl *Cluster) View(now time.Time) *format.NodeView {
	v := format.NewNodeView(cl.Node, cl.Drains, cl.Conf.Config, hostFacts(now), now, userName)
	return &v
}

// userName is getpwuid's name for uid, "" when there is none.
func userName(uid uint32) string {
	return userdb.Name(uid)
}

// ShortHost is the host name up to its first dot.
func ShortHost() string {
	h, err := os.Hostname()
	if err != nil {
		return ""
	}
	h, _, _ = strings.Cut(h, ".")
	return h
}

// hostFacts reads what slurmd would report of this machine, which is the
// daemon's (the socket is local): uname, sysinfo's load, free memory and
// uptime.
func hostFacts(now time.Time) format.Host {
	h := format.Host{Name: ShortHost(), Load: -1, FreeMem: -1}
	var u syscall.Utsname
	if syscall.Uname(&u) == nil {
		h.Arch = utsString(u.Machine[:])
		h.OS = utsString(u.Sysname[:]) + " " + utsString(u.Release[:]) + " " + utsString(u.Version[:])
	}
	var si syscall.Sysinfo_t
	if syscall.Sysinfo(&si) == nil {
		// loads are fixed point with 16 bits of fraction; slurmd takes
		// the 5-minute one.
		h.Load = int(float64(si.Loads[1]) / 65536 * 100)
		h.FreeMem = int64(uint64(si.Freeram) * uint64(si.Unit) / (1 << 20))
		h.Boot = now.Add(-time.Duration(si.Uptime) * time.Second).Truncate(time.Second)
	}
	return h
}

// utsString is a NUL-terminated utsname field.
func utsString[T int8 | uint8](b []T) string {
	var s strings.Builder
	for _, c := range b {
		if c == 0 {
			break
		}
		s.WriteByte(byte(c))
	}
	return s.String()
}

// DaemonUser is who the daemon runs as, from its socket's owner:
// "root(0)".
func DaemonUser(socket string) string {
	fi, err := os.Stat(socket)
	if err != nil {
		return "root(0)"
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return "root(0)"
	}
	name := userName(st.Uid)
	if name == "" {
		name = strconv.FormatUint(uint64(st.Uid), 10)
	}
	return name + "(" + strconv.FormatUint(uint64(st.Uid), 10) + ")"
}
