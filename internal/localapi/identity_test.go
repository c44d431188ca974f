package localapi

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"os/user"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/slurm-lite/slurm-lite/internal/api"
	"github.com/slurm-lite/slurm-lite/internal/slurm"
)

func TestCallerIsTheTestProcess(t *testing.T) {
	// The real user database, and the kernel's word for who we are.
	s := startServer(t, withUsers(SystemUsers{}))
	var got Identity
	if err := s.client(t).Do(context.Background(), "GET", "/v1/whoami", nil, &got); err != nil {
		t.Fatal(err)
	}
	me, err := user.Current()
	if err != nil {
		t.Fatal(err)
	}
	want := Identity{
		UID:    uint32(os.Geteuid()),
		GID:    uint32(os.Getegid()),
		PID:    os.Getpid(),
		User:   me.Username,
		Groups: groupsOfID(t),
	}
	slices.Sort(got.Groups)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("caller (-want +got):\n%s", diff)
	}
}

// groupsOfID asks id(1), which reads NSS through the C library, for our
// groups: a witness independent of os/user.
func groupsOfID(t *testing.T) []uint32 {
	t.Helper()
	out, err := exec.Command("id", "-G").Output()
	if err != nil {
		t.Skipf("id -G: %v", err)
	}
	var groups []uint32
	for _, f := range strings.Fields(string(out)) {
		g, err := strconv.ParseUint(f, 10, 32)
		if err != nil {
			t.Fatalf("id -G printed %q", out)
		}
		groups = append(groups, uint32(g))
	}
	slices.Sort(groups)
	return slices.Compact(groups)
}

func TestCallerNamesComeFromUsers(t *testing.T) {
	uid, gid := uint32(os.Geteuid()), uint32(os.Getegid())
	s := startServer(t, withUsers(fakeUsers{
		names:  map[uint32]string{uid: "alice"},
		groups: map[string][]uint32{"alice": {2001, 2002}},
	}))
	var got Identity
	if err := s.client(t).Do(context.Background(), "GET", "/v1/whoami", nil, &got); err != nil {
		t.Fatal(err)
	}
	want := Identity{UID: uid, GID: gid, PID: os.Getpid(), User: "alice", Groups: []uint32{gid, 2001, 2002}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("caller (-want +got):\n%s", diff)
	}
}

func TestCallersTheDatabaseCannotNameAreRefused(t *testing.T) {
	uid := uint32(os.Geteuid())
	tests := []struct {
		name  string
		users fakeUsers
		want  *api.Error
	}{{
		name:  "a uid with no name",
		users: fakeUsers{},
		want: &api.Error{Status: http.StatusForbidden, Code: slurm.ErrUserIDMissing,
			Message: fmt.Sprintf("uid %d has no name in the user database (%s): unknown userid %d", uid, UserDatabase, uid)},
	}, {
		name:  "a user whose groups cannot be listed",
		users: fakeUsers{names: map[uint32]string{uid: "alice"}},
		want: &api.Error{Status: http.StatusForbidden, Code: slurm.ErrUserIDMissing,
			Message: `listing the groups of user "alice": no groups for "alice"`},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := startServer(t, withUsers(tt.users))
			err := s.client(t).Do(context.Background(), "GET", "/v1/whoami", nil, nil)
			var got *api.Error
			if !errors.As(err, &got) {
				t.Fatalf("Do: %v, want an *api.Error", err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("refusal (-want +got):\n%s", diff)
			}
			if n := s.api.calls.Load(); n != 0 {
				t.Errorf("%d handler calls, want 0", n)
			}
		})
	}
}

func TestPrivateDaemonRefusesOtherUIDs(t *testing.T) {
	// A daemon serving a uid that is not ours: the kernel's uid check refuses
	// us, whatever the socket's mode let through.
	me := uint32(os.Geteuid())
	owner := me + 1000
	s := startServer(t, withAccess(Access{Owner: owner}), withUsers(fakeUsers{
		names: map[uint32]string{owner: "bob", me: "alice"},
	}))
	err := s.client(t).Do(context.Background(), "POST", "/v1/echo", echoIn{Name: "x"}, nil)
	want := &api.Error{Status: http.StatusForbidden, Code: slurm.ErrAccessDenied,
		Message: fmt.Sprintf("this slurmd-lite runs as bob (uid %d) and serves only that user; uid %d may not use it", owner, me)}
	var got *api.Error
	if !errors.As(err, &got) {
		t.Fatalf("Do: %v, want an *api.Error", err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("refusal (-want +got):\n%s", diff)
	}
	if n := s.api.calls.Load(); n != 0 {
		t.Errorf("%d handler calls, want 0", n)
	}
}

func TestCallerOutsideTheServer(t *testing.T) {
	if id, ok := Caller(context.Background()); ok {
		t.Errorf("Caller of a bare context: %+v, true; want false", id)
	}
	alice := Identity{UID: 1000, GID: 1000, PID: 42, User: "alice", Groups: []uint32{1000, 27}}
	got, ok := Caller(WithCaller(context.Background(), alice))
	if diff := cmp.Diff(alice, got); diff != "" || !ok {
		t.Errorf("Caller(WithCaller) ok=%v (-want +got):\n%s", ok, diff)
	}

	// A Func handler mounted anywhere but a Server refuses rather than take
	// the zero identity, which would be root.
	api := &testAPI{}
	rec := httptest.NewRecorder()
	Func(api.whoami).ServeHTTP(rec, httptest.NewRequest("GET", "/v1/whoami", nil))
	if rec.Code != http.StatusInternalServerError || api.calls.Load() != 0 {
		t.Errorf("a handler outside a Server: status %d and %d calls, want 500 and none; body %s", rec.Code, api.calls.Load(), rec.Body)
	}
	// With an identity on the context, as a daemon's handler tests do, it
	// runs.
	rec = httptest.NewRecorder()
	req := httptest.NewRequest("GET", "/v1/whoami", nil).WithContext(WithCaller(context.Background(), alice))
	Func(api.whoami).ServeHTTP(rec, req)
	if rec.Code != http.StatusOK {
		t.Errorf("a handler given a caller: status %d, body %s", rec.Code, rec.Body)
	}
}

func TestUserDatabaseIsNSSWhereCgoIs(t *testing.T) {
	// The daemon must see LDAP users' groups: when this module builds with
	// cgo, SystemUsers must be os/user's cgo (NSS) version, not the files
	// (an osusergo tag would quietly swap it).
	goCmd, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command to ask whether cgo is on")
	}
	out, err := exec.Command(goCmd, "env", "CGO_ENABLED").Output()
	if err != nil {
		t.Skipf("go env: %v", err)
	}
	cgo := strings.TrimSpace(string(out)) == "1"
	if UsesNSS != cgo {
		t.Errorf("UsesNSS is %v but go env CGO_ENABLED says %q: %s", UsesNSS, strings.TrimSpace(string(out)), UserDatabase)
	}
}

func TestSystemUsersOfRoot(t *testing.T) {
	// Every Linux system names uid 0 root, in group 0.
	name, err := SystemUsers{}.LookupUID(0)
	if err != nil || name != "root" {
		t.Fatalf("LookupUID(0): %q, %v; want root", name, err)
	}
	groups, err := SystemUsers{}.GroupIDs("root", 0)
	if err != nil || !slices.Contains(groups, 0) {
		t.Errorf("GroupIDs(root, 0): %v, %v; want a list with 0", groups, err)
	}
	if _, err := (SystemUsers{}).LookupUID(4294967000); err == nil {
		t.Errorf("LookupUID of a uid nobody has: no error")
	}
}
