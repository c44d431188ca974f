package slurmrest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/slurm-lite/slurm-lite/internal/api"
	"github.com/slurm-lite/slurm-lite/internal/format"
	"github.com/slurm-lite/slurm-lite/internal/jobrec"
	"github.com/slurm-lite/slurm-lite/internal/localapi"
	"github.com/slurm-lite/slurm-lite/internal/sockclient"
)

// Backend is what the API needs of the daemon.
type Backend interface {
	// Key is the jwt_key.
	Key() []byte
	// Now is the daemon's clock (tokens' exp).
	Now() time.Time
	// Identity is user as the socket API knows a caller of that uid.
	Identity(user string) (localapi.Identity, error)
	// Call is the socket API's method path answered for id in process.
	Call(ctx context.Context, id localapi.Identity, method, path string, in, out any) error
	// Env is what the answers are printed with (configuration, clock, group
	// names).
	Env() *format.Env
	// UserName is a uid's name, "" when none.
	UserName(uid uint32) string
	// Hostname is the controller's host name (ping's).
	Hostname() string
}

// MaxBodyBytes bounds a request's body, as the socket API's default.
const MaxBodyBytes = 16 << 20

// Prefixes are the paths Handler serves below.
var Prefixes = []string{"/slurm/", "/slurmdb/", "/openapi/"}

// route is one API path: the refusal that stands for a token slurmctld (or
// slurmdbd) would refuse, and the answer.
type route struct {
	pattern string
	// refused is the answer when the token does not verify.
	refused func(w http.ResponseWriter)
	serve   func(w http.ResponseWriter, r *http.Request, id localapi.Identity)
}

// Handler serves the API from b.
func Handler(b Backend, log *slog.Logger) http.Handler {
	s := &server{b: b, log: log}
	mux := http.NewServeMux()
	for _, rt := range s.routes() {
		mux.Handle(rt.pattern, s.authenticated(rt))
	}
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		text(w, http.StatusNotFound, "Unable find requested URL. Please view /openapi/v3 for API reference.")
	})
	return mux
}

type server struct {
	b   Backend
	log *slog.Logger
}

const (
	v38   = "/slurm/v0.0.38"
	db38  = "/slurmdb/v0.0.38"
	errNo = -1 // SLURM_ERROR, which slurmrestd prints as "Unspecified error"
)

// ctldRefusal is slurmrestd's answer when slurmctld refuses the token of a
// call to fn (recorded: ping, jobs).
func ctldRefusal(desc, fn string, fields ...format.RESTField) func(w http.ResponseWriter) {
	return func(w http.ResponseWriter) {
		doc(w, http.StatusInternalServerError, format.RESTDoc(false,
			[]format.RESTError{{Description: desc, Number: errNo, Error: "Unspecified error", Source: fn}}, fields...))
	}
}

// dbRefusal is slurmrestd's answer when slurmdbd refuses the token: 200,
// error 1007 (recorded).
func dbRefusal(w http.ResponseWriter) {
	doc(w, http.StatusOK, format.RESTDoc(true,
		[]format.RESTError{{Number: 1007, Error: "Protocol authentication error", Source: "slurmdb_jobs_get"}},
		format.RESTField{Key: "jobs"}))
}

func (s *server) routes() []route {
	jobsRefused := ctldRefusal("Failed while looking for jobs", "slurm_load_jobs", format.RESTField{Key: "jobs"})
	return []route{
		{"GET " + v38 + "/ping", ctldRefusal("slurmctld config is unable to load", "slurm_load_ctl_conf"), s.ping},
		{"GET " + v38 + "/jobs", jobsRefused, s.jobs},
		{"GET " + v38 + "/job/{job_id}", jobsRefused, s.job},
		{"POST " + v38 + "/job/submit", ctldRefusal("slurm_submit_batch_job failed", "slurm_submit_batch_job"), s.submit},
		{"DELETE " + v38 + "/job/{job_id}", ctldRefusal("unable to kill job", "slurm_kill_job"), s.cancel},
		{"POST " + v38 + "/job/{job_id}", ctldRefusal("job update failed", "_parse_job_list"), s.update},
		{"GET " + v38 + "/diag", ctldRefusal("slurm_get_statistics error", "slurm_get_statistics"), s.diag},
		{"GET " + v38 + "/nodes", ctldRefusal("slurm_load_node error", "slurm_load_node", format.RESTField{Key: "nodes"}), s.nodes},
		{"GET " + v38 + "/partitions", ctldRefusal("slurm_load_partitions error", "slurm_load_partitions", format.RESTField{Key: "partitions"}), s.partitions},
		{"GET " + v38 + "/reservations", ctldRefusal("slurm_load_reservations error", "slurm_load_reservations", format.RESTField{Key: "reservations"}), s.reservations},
		{"GET /openapi/v3", ctldRefusal("slurmctld config is unable to load", "slurm_load_ctl_conf"), s.openapi},
		{"GET " + db38 + "/jobs", dbRefusal, s.dbJobs},
		{"GET " + db38 + "/job/{job_id}", dbRefusal, s.dbJob},
	}
}

// authenticated is steps 1 to 3 of the package comment, then rt's answer.
func (s *server) authenticated(rt route) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		name, token := r.Header.Get("X-SLURM-USER-NAME"), r.Header.Get("X-SLURM-USER-TOKEN")
		if name == "" || token == "" {
			text(w, http.StatusUnauthorized, "Authentication failure")
			return
		}
		sun, err := Verify(s.b.Key(), token, s.b.Now())
		if err == nil && sun != name && sun != "root" {
			err = fmt.Errorf("attempt to authenticate as alternate user %s with a token of %s", name, sun)
		}
		var id localapi.Identity
		if err == nil {
			id, err = s.b.Identity(name)
		}
		if err != nil {
			s.log.Info("REST request refused", "path", r.URL.Path, "user", name, "why", err)
			rt.refused(w)
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, MaxBodyBytes)
		rt.serve(w, r, id)
	})
}

func (s *server) ping(w http.ResponseWriter, r *http.Request, id localapi.Identity) {
	if err := s.b.Call(r.Context(), id, "GET", api.PathPing, nil, nil); err != nil {
		ctldRefusal("slurmctld config is unable to load", "slurm_load_ctl_conf")(w)
		return
	}
	doc(w, http.StatusOK, format.RESTPings(s.b.Hostname()))
}

// listJobs is the socket API's job list for id (q filters it).
func (s *server) listJobs(ctx context.Context, id localapi.Identity, q url.Values) ([]api.Job, error) {
	path := api.PathJobs
	if len(q) > 0 {
		path += "?" + q.Encode()
	}
	var jobs []api.Job
	err := s.b.Call(ctx, id, "GET", path, nil, &jobs)
	format.ControllerOrder(jobs)
	return jobs, err
}

func (s *server) jobs(w http.ResponseWriter, r *http.Request, id localapi.Identity) {
	jobs, err := s.listJobs(r.Context(), id, nil)
	if err != nil {
		s.failed(w, err, "Failed while looking for jobs", "slurm_load_jobs", format.RESTField{Key: "jobs"})
		return
	}
	doc(w, http.StatusOK, format.SqueueJSON(jobs, s.b.Env()))
}

// jobID is the path's {job_id}: a number, else 400 as slurmrestd.
func jobID(w http.ResponseWriter, r *http.Request, db bool) (uint32, bool) {
	v := r.PathValue("job_id")
	n, err := strconv.ParseUint(v, 10, 32)
	if err != nil || n == 0 {
		doc(w, http.StatusBadRequest, format.RESTDoc(db, []format.RESTError{{Description: fmt.Sprintf("Invalid job_id: %s", v),
			Number: 9000, Error: "Query empty or not RFC7320 compliant", Source: "HTTP request: job_id"}}))
		return 0, false
	}
	return uint32(n), true
}

func (s *server) job(w http.ResponseWriter, r *http.Request, id localapi.Identity) {
	n, ok := jobID(w, r, false)
	if !ok {
		return
	}
	jobs, err := s.listJobs(r.Context(), id, url.Values{"id": {strconv.FormatUint(uint64(n), 10)}})
	if err == nil && len(jobs) == 0 {
		doc(w, http.StatusInternalServerError, format.RESTDoc(false, []format.RESTError{{
			Description: fmt.Sprintf("Unable to find JobId=%d", n), Number: 2017,
			Error: "Invalid job id specified", Source: "slurm_load_job"}}, format.RESTField{Key: "jobs"}))
		return
	}
	if err != nil {
		s.failed(w, err, "Failed while looking for jobs", "slurm_load_job", format.RESTField{Key: "jobs"})
		return
	}
	doc(w, http.StatusOK, format.SqueueJSON(jobs, s.b.Env()))
}

func (s *server) cancel(w http.ResponseWriter, r *http.Request, id localapi.Identity) {
	n, ok := jobID(w, r, false)
	if !ok {
		return
	}
	sig := 9
	if v := r.URL.Query().Get("signal"); v != "" {
		if sig = signalNumber(v); sig == 0 {
			doc(w, http.StatusBadRequest, format.RESTDoc(false, []format.RESTError{{Description: "invalid signal: 0",
				Number: 9000, Error: "Query empty or not RFC7320 compliant", Source: "HTTP request: signal"}}))
			return
		}
	}
	in := api.Cancel{Jobs: []string{strconv.FormatUint(uint64(n), 10)}}
	if sig != 9 {
		// slurm_kill_job with another signal signals the job, as scancel -s.
		in.Signal = sig
	}
	var out api.Results
	err := s.b.Call(r.Context(), id, "POST", api.PathCancel, in, &out)
	if err == nil {
		for _, res := range out.Results {
			if res.Code != 0 {
				err = &sockclient.Error{Code: res.Code, Message: res.Error}
				break
			}
		}
	}
	if err != nil {
		code, words := errnoOf(err)
		doc(w, http.StatusInternalServerError, format.RESTDoc(false, []format.RESTError{{
			Description: fmt.Sprintf("unable to kill JobId=%d with signal %d: %s", n, sig, words),
			Number:      code, Error: words, Source: "slurm_kill_job"}}))
		return
	}
	doc(w, http.StatusOK, format.RESTDoc(false, nil))
}

// accounting is the socket API's job records for id, as sacct asks.
func (s *server) accounting(ctx context.Context, id localapi.Identity, q url.Values) ([]jobrec.Record, error) {
	q.Set("allusers", "1")
	var recs []jobrec.Record
	err := s.b.Call(ctx, id, "GET", api.PathAccounting+"?"+q.Encode(), nil, &recs)
	return recs, err
}

func (s *server) dbJobs(w http.ResponseWriter, r *http.Request, id localapi.Identity) {
	recs, err := s.accounting(r.Context(), id, url.Values{})
	s.dbAnswer(w, recs, err)
}

func (s *server) dbJob(w http.ResponseWriter, r *http.Request, id localapi.Identity) {
	n, ok := jobID(w, r, true)
	if !ok {
		return
	}
	recs, err := s.accounting(r.Context(), id, url.Values{"id": {strconv.FormatUint(uint64(n), 10)}})
	s.dbAnswer(w, recs, err)
}

func (s *server) dbAnswer(w http.ResponseWriter, recs []jobrec.Record, err error) {
	switch {
	case err != nil:
		code, words := errnoOf(err)
		doc(w, http.StatusInternalServerError, format.RESTDoc(true, []format.RESTError{{Description: words,
			Number: code, Error: words, Source: "slurmdb_jobs_get"}}, format.RESTField{Key: "jobs"}))
	case len(recs) == 0:
		// Recorded: slurmdbd's "nothing found" is a 200 with an error.
		doc(w, http.StatusOK, format.RESTDoc(true, []format.RESTError{{Description: "Nothing found", Number: 9003,
			Error: "Nothing found with query", Source: "slurmdb_jobs_get"}}, format.RESTField{Key: "jobs"}))
	default:
		doc(w, http.StatusOK, format.SacctJSON(recs, s.b.Env(), s.b.UserName))
	}
}

// failed answers a socket API refusal of a listing call fn.
func (s *server) failed(w http.ResponseWriter, err error, desc, fn string, fields ...format.RESTField) {
	code, words := errnoOf(err)
	if code == 0 {
		code, words = errNo, "Unspecified error"
	}
	s.log.Warn("REST call failed", "call", fn, "err", err)
	doc(w, http.StatusInternalServerError, format.RESTDoc(false, []format.RESTError{{Description: desc, Number: code,
		Error: words, Source: fn}}, fields...))
}

// errnoOf is a refusal's Slurm errno and words (the daemon's own message
// when it has no errno).
func errnoOf(err error) (int, string) {
	var e *sockclient.Error
	if errors.As(err, &e) {
		if e.Code != 0 {
			return int(e.Code), e.Code.Error()
		}
		return errNo, e.Message
	}
	return errNo, err.Error()
}

func doc(w http.ResponseWriter, status int, body string) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	io.WriteString(w, body)
}

func text(w http.ResponseWriter, status int, body string) {
	w.Header().Set("Content-Type", "text/plain")
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	io.WriteString(w, body)
}

// decodeJSON reads r's body as JSON into v.
func decodeJSON(r *http.Request, v any) error {
	dec := json.NewDecoder(r.Body)
	dec.UseNumber()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.More() {
		return errors.New("trailing data after the JSON value")
	}
	return nil
}

// signalNumber is a signal's number from its name (KILL, SIGKILL) or
// number, 0 when it is none.
func signalNumber(v string) int {
	if n, err := strconv.Atoi(v); err == nil {
		if n > 0 && n < 65 {
			return n
		}
		return 0
	}
	name := strings.TrimPrefix(strings.ToUpper(v), "SIG")
	for n, s := range signalNames {
		if s == name {
			return n
		}
	}
	return 0
}

var signalNames = map[int]string{1: "HUP", 2: "INT", 3: "QUIT", 6: "ABRT", 9: "KILL", 10: "USR1", 12: "USR2",
	14: "ALRM", 15: "TERM", 18: "CONT", 19: "STOP", 20: "TSTP", 21: "TTIN", 22: "TTOU", 23: "URG", 24: "XCPU"}
