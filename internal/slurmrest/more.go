package slurmrest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/slurm-lite/slurm-lite/internal/api"
	"github.com/slurm-lite/slurm-lite/internal/cli"
	"github.com/slurm-lite/slurm-lite/internal/config"
	"github.com/slurm-lite/slurm-lite/internal/format"
	"github.com/slurm-lite/slurm-lite/internal/localapi"
	"github.com/slurm-lite/slurm-lite/internal/slurm"
)

// cluster is the node, its drains and the configuration, as sinfo and
// scontrol show node and partition read them.
func (s *server) cluster(r *http.Request, id localapi.Identity) (*cli.Cluster, error) {
	var cl cli.Cluster
	for _, q := range []struct {
		path string
		out  any
	}{{api.PathNode, &cl.Node}, {api.PathNodeDrains, &cl.Drains}, {api.PathConfig, &cl.Conf}} {
		if err := s.b.Call(r.Context(), id, "GET", q.path, nil, q.out); err != nil {
			return nil, err
		}
	}
	if cl.Conf.Config == nil {
		return nil, fmt.Errorf("the daemon sent no configuration")
	}
	return &cl, nil
}

func (s *server) nodes(w http.ResponseWriter, r *http.Request, id localapi.Identity) {
	cl, err := s.cluster(r, id)
	if err != nil {
		s.failed(w, err, "slurm_load_node error", "slurm_load_node", format.RESTField{Key: "nodes"})
		return
	}
	doc(w, http.StatusOK, format.SinfoJSON(cl.View(s.b.Now())))
}

func (s *server) partitions(w http.ResponseWriter, r *http.Request, id localapi.Identity) {
	cl, err := s.cluster(r, id)
	if err != nil {
		s.failed(w, err, "slurm_load_partitions error", "slurm_load_partitions", format.RESTField{Key: "partitions"})
		return
	}
	var parts []*config.Partition
	for i := range cl.Conf.Config.Partitions {
		parts = append(parts, &cl.Conf.Config.Partitions[i])
	}
	n := format.PartitionNode{Name: cl.Node.Name, CPUs: cl.Node.CPUs, MemoryMB: cl.Node.MemoryMB, GPUs: len(cl.Node.GPUs)}
	doc(w, http.StatusOK, format.RESTPartitions(parts, n))
}

func (s *server) reservations(w http.ResponseWriter, r *http.Request, id localapi.Identity) {
	var all api.Reservations
	if err := s.b.Call(r.Context(), id, "GET", api.PathReservations, nil, &all); err != nil {
		s.failed(w, err, "slurm_load_reservations error", "slurm_load_reservations", format.RESTField{Key: "reservations"})
		return
	}
	doc(w, http.StatusOK, format.RESTReservations(all.List))
}

func (s *server) diag(w http.ResponseWriter, r *http.Request, id localapi.Identity) {
	jobs, err := s.listJobs(r.Context(), id, nil)
	if err != nil {
		s.failed(w, err, "slurm_get_statistics error", "slurm_get_statistics")
		return
	}
	pending, running := 0, 0
	for _, j := range jobs {
		switch j.State {
		case slurm.Pending:
			pending++
		case slurm.Running:
			running++
		}
	}
	doc(w, http.StatusOK, format.RESTDiag(s.b.Now(), pending, running))
}

// update is scontrol update JobId=N for the job properties slurm-lite can
// change (api.Update's fields); any other property is refused by name.
func (s *server) update(w http.ResponseWriter, r *http.Request, id localapi.Identity) {
	n, ok := jobID(w, r, false)
	if !ok {
		return
	}
	var props map[string]any
	if err := decodeJSON(r, &props); err != nil {
		text(w, http.StatusBadRequest, "Unable to parse query.")
		return
	}
	u := api.Update{Jobs: []string{strconv.FormatUint(uint64(n), 10)}}
	refuse := func(msg string) {
		doc(w, http.StatusBadRequest, format.RESTDoc(false, []format.RESTError{
			{Code: 2127, Error: msg},
			{Code: 9001, Error: "Failure during parsing", CodeFirst: true}}))
	}
	str := func(k string, v any) (*string, bool) {
		switch x := v.(type) {
		case string:
			return &x, true
		case json.Number:
			t := x.String()
			return &t, true
		}
		refuse(fmt.Sprintf("job property %q must be a string", k))
		return nil, false
	}
	num := func(k string, v any) (int64, bool) {
		if x, ok := v.(json.Number); ok {
			if i, err := x.Int64(); err == nil {
				return i, true
			}
		}
		refuse(fmt.Sprintf("job property %q must be a whole number", k))
		return 0, false
	}
	for k, v := range props {
		var good bool
		switch k {
		case "time_limit":
			var m int64
			if m, good = num(k, v); good {
				d := time.Duration(m) * time.Minute
				u.TimeLimit = &d
			}
		case "partition":
			u.Partition, good = str(k, v)
		case "name":
			u.Name, good = str(k, v)
		case "comment":
			u.Comment, good = str(k, v)
		case "gres":
			u.Gres, good = str(k, v)
		case "gpus":
			u.GPUs, good = str(k, v)
		case "nice":
			var m int64
			if m, good = num(k, v); good {
				nice := int(m)
				u.Nice = &nice
			}
		case "priority":
			var m int64
			if m, good = num(k, v); good {
				p := uint32(m)
				u.Priority = &p
			}
		case "hold":
			b, isBool := v.(bool)
			if good = isBool; good {
				p := uint32(0)
				if !b {
					p = api.PriorityRelease
				}
				u.Priority = &p
			} else {
				refuse(`job property "hold" must be true or false`)
			}
		case "requeue":
			b, isBool := v.(bool)
			if good = isBool; good {
				u.Requeue = &b
			} else {
				refuse(`job property "requeue" must be true or false`)
			}
		default:
			refuse(fmt.Sprintf("job property %q cannot be updated in slurm-lite (it can: time_limit, partition, name, comment, gres, gpus, nice, priority, hold, requeue)", k))
			return
		}
		if !good {
			return
		}
	}
	var res api.UpdateResults
	err := s.b.Call(r.Context(), id, "POST", api.PathUpdate, u, &res)
	code, words := 0, ""
	if err != nil {
		code, words = errnoOf(err)
	} else {
		for _, rr := range res.Results {
			if rr.Code != 0 {
				code, words = int(rr.Code), rr.Code.Error()
				break
			}
			for _, a := range rr.Array {
				if a.Code != 0 {
					code, words = int(a.Code), a.Code.Error()
				}
			}
		}
	}
	if code != 0 {
		doc(w, http.StatusInternalServerError, format.RESTDoc(false, []format.RESTError{{
			Description: "job update from " + r.RemoteAddr + " failed", Number: code, Error: words, Source: "_parse_job_list"}}))
		return
	}
	doc(w, http.StatusOK, format.RESTDoc(false, nil))
}
