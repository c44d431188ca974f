package daemon

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/user"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/slurm-lite/slurm-lite/internal/api"
	"github.com/slurm-lite/slurm-lite/internal/slurm"
	"github.com/slurm-lite/slurm-lite/internal/slurmrest"
)

// The REST API's tests: slurmrestd's v0.0.38 paths on the web listener,
// by the real users alice and bob with tokens minted with the daemon's
// jwt_key, against a daemon running as root, compared with the answers of
// Debian's slurmrestd 22.05 recorded by scripts/record-rest
// (testdata/golden/rest_*.txt).

// restDaemon is a web daemon with AuthAltTypes = ["auth/jwt"].
type restDaemon struct {
	*webDaemon
	key  []byte
	work string // a directory every user may write (sticky)
}

func startRESTDaemon(t *testing.T) *restDaemon {
	t.Helper()
	needUser(t, "alice")
	needUser(t, "bob")
	dir := sharedDir(t)
	// DefMemPerCPU as the recorded cluster, whose jobs have a memory_per_cpu.
	wd := startWebDaemon(t, dir, newWebMachine(), nil, `AuthAltTypes = ["auth/jwt"]`, `DefMemPerCPU = 1000`)
	key, err := os.ReadFile(filepath.Join(dir, "state", slurmrest.KeyFile))
	if err != nil {
		t.Fatalf("the default jwt_key: %v", err)
	}
	fi, _ := os.Stat(filepath.Join(dir, "state", slurmrest.KeyFile))
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("jwt_hs256.key has mode %04o, want 0600", fi.Mode().Perm())
	}
	work := filepath.Join(dir, "work")
	if err := os.Mkdir(work, 0o1777); err != nil {
		t.Fatal(err)
	}
	os.Chmod(work, 0o1777)
	return &restDaemon{webDaemon: wd, key: key, work: work}
}

// token is a token for user, valid for life.
func (rd *restDaemon) token(user string, life time.Duration) string {
	return slurmrest.Mint(rd.key, user, life, time.Now())
}

// call is one request with user's name and token; it returns the status
// and the body.
func (rd *restDaemon) call(method, path, user, token, body string) (int, string) {
	rd.t.Helper()
	var rdr io.Reader
	if body != "" {
		rdr = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, strings.TrimSuffix(rd.url, "/")+path, rdr)
	if err != nil {
		rd.t.Fatal(err)
	}
	if user != "" {
		req.Header.Set("X-SLURM-USER-NAME", user)
	}
	if token != "" {
		req.Header.Set("X-SLURM-USER-TOKEN", token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		rd.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// as is call with user's own token.
func (rd *restDaemon) as(user, method, path, body string) (int, string) {
	rd.t.Helper()
	return rd.call(method, path, user, rd.token(user, time.Hour), body)
}

// submitAs submits script over REST as user, with extra job properties
// (JSON members), and returns the job id.
func (rd *restDaemon) submitAs(user, script, extra string) uint32 {
	rd.t.Helper()
	s, _ := json.Marshal(script)
	body := fmt.Sprintf(`{"script":%s,"job":{"current_working_directory":%q,"environment":{"PATH":"/bin:/usr/bin"}%s}}`, s, rd.work, extra)
	code, out := rd.as(user, "POST", "/slurm/v0.0.38/job/submit", body)
	var ans struct {
		JobID uint32 `json:"job_id"`
	}
	if code != 200 || json.Unmarshal([]byte(out), &ans) != nil || ans.JobID == 0 {
		rd.t.Fatalf("submit as %s: %d %s", user, code, out)
	}
	return ans.JobID
}

// golden is a recorded answer: its status and body.
func golden(t *testing.T, name string) (int, string) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "testdata", "golden", "rest_"+name+".txt"))
	if err != nil {
		t.Fatal(err)
	}
	_, rest, _ := strings.Cut(string(b), "\nHTTP/1.1 ")
	var code int
	fmt.Sscanf(rest, "%d", &code)
	_, body, _ := strings.Cut(rest, "\n\n")
	return code, strings.TrimSuffix(body, "\n")
}

// shape lists where got's JSON differs from want's in keys (and their
// order) or in the types of values; lists compare their first items.
func shape(path string, want, got any) []string {
	kind := func(v any) string {
		switch v.(type) {
		case nil:
			return "null"
		case map[string]any:
			return "object"
		case []any:
			return "list"
		case json.Number, float64:
			return "number"
		case string:
			return "string"
		case bool:
			return "bool"
		}
		return fmt.Sprintf("%T", v)
	}
	if kind(want) != kind(got) {
		return []string{fmt.Sprintf("%s: Slurm has a %s, slurm-lite a %s", path, kind(want), kind(got))}
	}
	var diffs []string
	switch w := want.(type) {
	case map[string]any:
		g := got.(map[string]any)
		for k := range w {
			if _, ok := g[k]; !ok {
				diffs = append(diffs, fmt.Sprintf("%s.%s: missing", path, k))
			}
		}
		for k := range g {
			if _, ok := w[k]; !ok {
				diffs = append(diffs, fmt.Sprintf("%s.%s: not in Slurm's", path, k))
			}
		}
		for k := range w {
			if gv, ok := g[k]; ok {
				diffs = append(diffs, shape(path+"."+k, w[k], gv)...)
			}
		}
	case []any:
		g := got.([]any)
		if len(w) > 0 && len(g) > 0 {
			diffs = append(diffs, shape(path+"[0]", w[0], g[0])...)
		}
	}
	return diffs
}

func decodeJSON(t *testing.T, what, s string) any {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader([]byte(s)))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("%s is not JSON: %v\n%s", what, err, s)
	}
	return v
}

// sameShape checks an answer against a recording: the status, and the
// body's shape.
func sameShape(t *testing.T, name string, code int, body string) {
	t.Helper()
	wantCode, wantBody := golden(t, name)
	if code != wantCode {
		t.Errorf("%s: status %d, slurmrestd's %d\n%s", name, code, wantCode, body)
	}
	for _, d := range shape(name, decodeJSON(t, "rest_"+name+".txt", wantBody), decodeJSON(t, name, body)) {
		t.Errorf("%s", d)
	}
}

// sameAnswer checks an answer that has nothing volatile in it against a
// recording: the status and the body, byte for byte.
func sameAnswer(t *testing.T, name string, code int, body string) {
	t.Helper()
	wantCode, wantBody := golden(t, name)
	if code != wantCode || body != wantBody {
		t.Errorf("%s: got %d\n%s\nslurmrestd's %d\n%s", name, code, body, wantCode, wantBody)
	}
}

// TestRESTAnswersAsSlurmrestd asks every route that the recordings cover
// and holds the answers to slurmrestd's: the refusals byte for byte, the
// rest in keys, key order and types.
func TestRESTAnswersAsSlurmrestd(t *testing.T) {
	rd := startRESTDaemon(t) // AuthAltTypes = ["auth/jwt"]
	alice := rd.token("alice", time.Hour)
	forged := alice[:strings.LastIndex(alice, ".")+1] + slurmrest.Mint([]byte("not the key"), "alice", time.Hour, time.Now())[strings.LastIndex(alice, ".")+1:]
	expired := rd.token("alice", -time.Minute)

	for _, tt := range []struct{ name, user, token, path string }{
		{"err_no_token", "", "", "/slurm/v0.0.38/ping"},
		{"err_no_user", "", alice, "/slurm/v0.0.38/ping"},
		{"err_other_user", "bob", alice, "/slurm/v0.0.38/ping"},
		{"err_other_user_jobs", "bob", alice, "/slurm/v0.0.38/jobs"},
		{"err_forged", "alice", forged, "/slurm/v0.0.38/ping"},
		{"err_forged_jobs", "alice", forged, "/slurm/v0.0.38/jobs"},
		{"err_expired", "alice", expired, "/slurm/v0.0.38/ping"},
		{"err_expired_jobs", "alice", expired, "/slurm/v0.0.38/jobs"},
		{"slurmdb_jobs_forged", "alice", forged, "/slurmdb/v0.0.38/jobs"},
		{"err_unknown_job", "alice", alice, "/slurm/v0.0.38/job/999999"},
		{"err_bad_path", "alice", alice, "/slurm/v0.0.38/nothing"},
		{"delete_unknown", "alice", alice, "/slurm/v0.0.38/job/999999"},
		{"slurmdb_job_unknown", "alice", alice, "/slurmdb/v0.0.38/job/999999"},
	} {
		method := "GET"
		if strings.HasPrefix(tt.name, "delete") {
			method = "DELETE"
		}
		code, body := rd.call(method, tt.path, tt.user, tt.token, "")
		sameAnswer(t, tt.name, code, body)
	}

	code, body := rd.as("alice", "GET", "/slurm/v0.0.38/ping", "")
	sameShape(t, "ping", code, body)
	// The specification: slurmrestd's, cut to the paths served
	// (internal/slurmrest TestOpenAPISpec holds it to the recording).
	code, body = rd.as("alice", "GET", "/openapi/v3", "")
	if spec, _ := decodeJSON(t, "/openapi/v3", body).(map[string]any); code != 200 || spec["openapi"] != "3.0.2" ||
		spec["paths"].(map[string]any)["/slurm/v0.0.38/job/submit"] == nil {
		t.Errorf("/openapi/v3: %d %.200s", code, body)
	}
	if code, _ = rd.call("GET", "/openapi/v3", "", "", ""); code != 401 {
		t.Errorf("/openapi/v3 without a token: %d, want 401 as slurmrestd", code)
	}
	code, body = rd.as("alice", "POST", "/slurm/v0.0.38/job/submit", `{"script":"#!/bin/bash\ntrue\n","job":{"current_working_directory":"/tmp"}}`)
	sameAnswer(t, "submit_no_env", code, body)
	code, body = rd.as("alice", "POST", "/slurm/v0.0.38/job/submit", `{"script":`)
	sameAnswer(t, "submit_bad_json", code, body)
	// slurm-lite's own refusals, in slurmrestd's shape: no directory, a
	// property not obeyed, a script sbatch refuses.
	for _, tt := range []struct{ job, want string }{
		{`{"environment":{"PATH":"/bin"}}`, `"error": "current_working_directory must be set: the job's directory, an absolute path"`},
		{`{"environment":{"PATH":"/bin"},"current_working_directory":"/tmp","prefer":"a100"}`, `job property \"prefer\" is not supported by slurm-lite; remove it`},
	} {
		code, body = rd.as("alice", "POST", "/slurm/v0.0.38/job/submit", `{"script":"#!/bin/bash\ntrue\n","job":`+tt.job+`}`)
		if code != 400 || !strings.Contains(body, tt.want) || !strings.Contains(body, `"error": "Failure during parsing"`) {
			t.Errorf("submit %s: %d\n%s", tt.job, code, body)
		}
	}
	code, body = rd.as("alice", "POST", "/slurm/v0.0.38/job/submit", `{"script":"true\n","job":{"environment":{"PATH":"/bin"},"current_working_directory":"/tmp"}}`)
	if code != 500 || !strings.Contains(body, `"source": "slurm_submit_batch_job"`) || !strings.Contains(body, "#!") {
		t.Errorf("a script without #! (sbatch's refusal): %d\n%s", code, body)
	}

	gpu := rd.submitAs("alice", "#!/bin/bash\nwhile [ ! -e go ]; do sleep 0.1; done\necho gpus=$CUDA_VISIBLE_DEVICES user=$(id -un)\n", `,"name":"rest-gpu","gres":"gpu:1"`)
	code, body = rd.as("alice", "POST", "/slurm/v0.0.38/job/submit",
		fmt.Sprintf(`{"script":"#!/bin/bash\nsleep 600\n","job":{"name":"rest-held","hold":true,"current_working_directory":%q,"environment":{"PATH":"/bin:/usr/bin"}}}`, rd.work))
	sameShape(t, "submit_hold", code, body)
	rd.waitState(gpu, slurm.Running)
	code, body = rd.as("alice", "GET", "/slurm/v0.0.38/jobs", "")
	sameShape(t, "jobs", code, body)
	code, body = rd.as("alice", "GET", "/slurm/v0.0.38/diag", "")
	sameShape(t, "diag", code, body)
	if !strings.Contains(body, `"jobs_pending": 1,`) || !strings.Contains(body, `"jobs_running": 1,`) {
		t.Errorf("diag counts one pending and one running job:\n%s", body)
	}
	code, body = rd.as("alice", "GET", "/slurm/v0.0.38/nodes", "")
	sameShape(t, "nodes", code, body)
	code, body = rd.as("alice", "GET", "/slurm/v0.0.38/partitions", "")
	sameShape(t, "partitions", code, body)
	if err := rd.c.Do(context.Background(), "POST", api.PathReservations, api.ResvChange{Action: api.ResvCreate,
		Words: []string{"ReservationName=maint", "StartTime=2030-01-01T00:00:00", "Duration=60", "Users=alice", "Nodes=gpu01"}}, nil); err != nil {
		t.Fatal(err)
	}
	code, body = rd.as("alice", "GET", "/slurm/v0.0.38/reservations", "")
	sameShape(t, "reservations", code, body)
	if !strings.Contains(body, `"SPEC_NODES"`) || !strings.Contains(body, `"users": "alice"`) || !strings.Contains(body, `"tres": "cpu=8"`) {
		t.Errorf("the reservation as slurmrestd's:\n%s", body)
	}

	// Update of the held job: its comment and time limit, as scontrol update.
	held := rd.jobNamed("rest-held")
	code, body = rd.as("alice", "POST", fmt.Sprintf("/slurm/v0.0.38/job/%d", held), `{"comment":"from rest","time_limit":30}`)
	sameAnswer(t, "update", code, body)
	if j := rd.job(held); j.Request.Comment != "from rest" || j.TimeLimit != 30*time.Minute {
		t.Errorf("after the update: comment %q, time limit %v", j.Request.Comment, j.TimeLimit)
	}
	code, body = rd.as("alice", "GET", fmt.Sprintf("/slurm/v0.0.38/job/%d", held), "")
	sameShape(t, "job_updated", code, body)
	code, body = rd.as("alice", "GET", fmt.Sprintf("/slurm/v0.0.38/job/%d", gpu), "")
	sameShape(t, "job", code, body)

	if err := os.WriteFile(filepath.Join(rd.work, "go"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	rd.waitState(gpu, slurm.Completed)
	out, err := os.ReadFile(filepath.Join(rd.work, fmt.Sprintf("slurm-%d.out", gpu)))
	if want := "user=alice"; err != nil || !strings.Contains(string(out), want) || !strings.Contains(string(out), "gpus=") {
		t.Errorf("the REST job's output: %q %v; want %q and a GPU", out, err, want)
	}
	code, body = rd.as("alice", "GET", fmt.Sprintf("/slurmdb/v0.0.38/job/%d", gpu), "")
	sameShape(t, "slurmdb_job", code, body)
	code, body = rd.as("alice", "GET", "/slurmdb/v0.0.38/jobs", "")
	sameShape(t, "slurmdb_jobs", code, body)
}

// TestRESTActsAsTheTokensUser: a REST job runs as its token's user;
// alice cannot cancel bob's job, nor act with a token that is not hers;
// root's token acts as the user it names (as SlurmUser's in Slurm).
func TestRESTActsAsTheTokensUser(t *testing.T) {
	rd := startRESTDaemon(t) // AuthAltTypes = ["auth/jwt"]
	bobs := rd.submitAs("bob", "#!/bin/bash\nsleep 600\n", `,"name":"bob-job"`)
	rd.waitState(bobs, slurm.Running)
	if j := rd.job(bobs); j.User != "bob" {
		t.Errorf("bob's REST job belongs to %q", j.User)
	}

	code, body := rd.as("alice", "DELETE", fmt.Sprintf("/slurm/v0.0.38/job/%d?signal=KILL", bobs), "")
	if code != 500 || !strings.Contains(body, fmt.Sprintf(`"description": "unable to kill JobId=%d with signal 9: Access\/permission denied"`, bobs)) ||
		!strings.Contains(body, `"error_number": 2002`) {
		t.Errorf("alice cancelling bob's job: %d\n%s", code, body)
	}
	code, _ = rd.call("DELETE", fmt.Sprintf("/slurm/v0.0.38/job/%d", bobs), "bob", rd.token("alice", time.Hour), "")
	if code != 500 {
		t.Errorf("alice's token named as bob: %d, want 500", code)
	}
	if j := rd.job(bobs); j.State != slurm.Running {
		t.Fatalf("bob's job is %s after alice's attempts", j.State)
	}
	// A token that expired a second ago is refused.
	code, _ = rd.call("DELETE", fmt.Sprintf("/slurm/v0.0.38/job/%d", bobs), "bob", rd.token("bob", -time.Second), "")
	if code != 500 || rd.job(bobs).State != slurm.Running {
		t.Errorf("bob's expired token: %d, job %s", code, rd.job(bobs).State)
	}

	// Root's token acts as the user it is sent for.
	code, body = rd.call("GET", "/slurm/v0.0.38/ping", "alice", rd.token("root", time.Hour), "")
	if code != 200 {
		t.Errorf("root's token for alice: %d %s", code, body)
	}
	code, body = rd.as("alice", "POST", fmt.Sprintf("/slurm/v0.0.38/job/%d", bobs), `{"comment":"not yours"}`)
	// The socket API's refusal, as scontrol update of another user's job.
	if code != 500 || !strings.Contains(body, `"error_number": 2010`) || rd.job(bobs).Request.Comment != "" {
		t.Errorf("alice updating bob's job: %d\n%s", code, body)
	}
	code, body = rd.as("bob", "DELETE", fmt.Sprintf("/slurm/v0.0.38/job/%d?signal=KILL", bobs), "")
	sameShape(t, "delete", code, body)
	rd.waitState(bobs, slurm.Cancelled)

	code, body = rd.as("alice", "DELETE", fmt.Sprintf("/slurm/v0.0.38/job/%d?signal=NOPE", bobs), "")
	sameAnswer(t, "delete_bad_signal", code, body)
}

// TestRESTKeyFile: AuthAltParameters' jwt_key is the key tokens are
// signed and checked with (scontrol token's, over the socket), and a key
// that others may read stops the start with the fix.
func TestRESTKeyFile(t *testing.T) {
	dir := sharedDir(t)
	keyPath := filepath.Join(dir, "site.key")
	if err := os.WriteFile(keyPath, []byte("0123456789abcdef0123456789abcdef"), 0o644); err != nil {
		t.Fatal(err)
	}
	conf := filepath.Join(dir, "bad.toml")
	os.WriteFile(conf, []byte(fmt.Sprintf("SocketPath = %q\nStateSaveLocation = %q\nAuthAltTypes = [\"auth/jwt\"]\nAuthAltParameters = \"jwt_key=%s\"\n[Web]\nListen = \"127.0.0.1:0\"\n",
		filepath.Join(dir, "bad.sock"), filepath.Join(dir, "badstate"), keyPath)), 0o644)
	err := Run(context.Background(), Options{ConfigPath: conf, Log: io.Discard})
	if want := "has mode 0644: whoever reads it can mint a token for any user; run: chmod 600 " + keyPath; err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("a key others may read: %v, want %q", err, want)
	}
	if err := os.Chmod(keyPath, 0o600); err != nil {
		t.Fatal(err)
	}
	wd := startWebDaemon(t, dir, newWebMachine(), nil, `AuthAltTypes = ["auth/jwt"]`, fmt.Sprintf("AuthAltParameters = \"jwt_key=%s\"", keyPath))
	if _, err := os.Stat(filepath.Join(dir, "state", slurmrest.KeyFile)); err == nil {
		t.Errorf("the default key was made beside a configured jwt_key")
	}
	var tok api.Token
	if err := wd.c.Do(context.Background(), "POST", api.PathToken, api.TokenRequest{Lifespan: 60}, &tok); err != nil {
		t.Fatal(err)
	}
	me := currentUser(t)
	if user, err := slurmrest.Verify([]byte("0123456789abcdef0123456789abcdef"), tok.Token, time.Now()); err != nil || user != me {
		t.Errorf("scontrol token's token under the configured key: %q %v, want %s's", user, err, me)
	}
	rd := &restDaemon{webDaemon: wd}
	if code, body := rd.call("GET", "/slurm/v0.0.38/ping", me, tok.Token, ""); code != 200 {
		t.Errorf("ping with it: %d %s", code, body)
	}
	other := slurmrest.Mint([]byte("another key"), me, time.Minute, time.Now())
	if code, _ := rd.call("GET", "/slurm/v0.0.38/ping", me, other, ""); code != 500 {
		t.Errorf("a token of another key: %d, want 500", code)
	}
}

func currentUser(t *testing.T) string {
	t.Helper()
	u, err := user.Current()
	if err != nil {
		t.Fatal(err)
	}
	return u.Username
}

// jobNamed is the id of the job called name.
func (rd *restDaemon) jobNamed(name string) uint32 {
	rd.t.Helper()
	var jobs []api.Job
	if err := rd.c.Do(context.Background(), "GET", api.PathJobs+"?name="+name, nil, &jobs); err != nil || len(jobs) != 1 {
		rd.t.Fatalf("job %s: %v (%d)", name, err, len(jobs))
	}
	return jobs[0].ID
}
